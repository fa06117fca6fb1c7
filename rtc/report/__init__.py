"""Reporters: turn diagnostics into text for people or formats for machines. The only
modules (with ``rtc.cli``) that write to the terminal."""
