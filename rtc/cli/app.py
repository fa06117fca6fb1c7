"""The typer application object shared by the command modules."""

from __future__ import annotations

import typer

from rtc import __version__

HELP = """rtc: the rank-table and topology compiler for Ascend NPU and NVIDIA GPU clusters.

Describe servers, NPUs or GPUs, networks and parallel jobs in a small .rtc file; rtc
checks the plan and writes the HCCL rank table (hccl.json; for GPUs the NCCL environment,
no rank table) and friends.

Examples:

  rtc compile examples/a2-2node-dp2-tp8.rtc -o hccl.json

  rtc compile examples/pd-a3.rtc --job prefill -o prefill.json

  rtc check cluster.rtc --strict

  rtc explain RTC208

Exit codes: 0 ok (warnings allowed), 1 problems found, 2 usage / I-O / internal error.
"""

def _readable_metavars() -> None:
    """Typer prints each argument's Python type after its name (``FILE <list[str]>``,
    ``DIR <list[Path]>``, ``<int range>``). For list and range arguments, the name
    (``FILES...``) says enough: drop those type labels from --help."""
    try:
        from typer.core import TyperArgument
    except ImportError:  # another typer layout: keep its default help
        return
    original = getattr(TyperArgument, "display_type_rich", None)
    if original is None or getattr(original, "_rtc_patched", False):
        return

    def display_type_rich(self, ctx):
        label = original(self, ctx)
        if isinstance(label, str) and (label.startswith("<list[") or label.endswith(" range>")):
            return None
        return label

    display_type_rich._rtc_patched = True
    TyperArgument.display_type_rich = display_type_rich


_readable_metavars()

app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=False,
                  rich_markup_mode=None, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]})


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rtc {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """rtc: the rank-table and topology compiler for Ascend NPU and NVIDIA GPU clusters."""
