"""Preflight results: reading what ``preflight-<server>.sh`` recorded
(:mod:`rtc.preflight.results`) and judging it (:mod:`rtc.preflight.findings`, rules
RTC560-RTC569). The scripts themselves are planned by :mod:`rtc.plan.preflight` and written
by :mod:`rtc.emit.preflight_script`."""
