"""``python -m rtc`` and the ``rtc`` console script (:func:`run`)."""


def run() -> None:
    """:func:`rtc.cli.entry`, imported here so that a Ctrl-C arriving while rtc is still
    being imported (the first ~0.1 s of a run) ends the run as a later one does: exit 130,
    no traceback."""
    try:
        from rtc.cli import entry
    except KeyboardInterrupt:
        import os

        os._exit(130)
    entry()


if __name__ == "__main__":
    run()
