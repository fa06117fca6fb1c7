"""Preflight results: reading what ``preflight-<server>.sh`` recorded
(:mod:`rtc.preflight.results`) and judging it (:mod:`rtc.preflight.report`, rules
RTC560-RTC569). The scripts themselves are written by :mod:`rtc.emit.preflight`."""
