"""Launch scripts: what each server runs for each job (package docstring in
:mod:`rtc.emit.launch.plan`)."""
