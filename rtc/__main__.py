from rtc.cli import entry

entry()
