"""`rtc import`: turn an existing rank table into an rtc description."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rtc.cli.app import app
from rtc.cli.common import write_or_fail, fail_usage, refuse_input_as_output, report, write_stdout


@app.command("import")
def import_command(
    table: str = typer.Argument(..., metavar="TABLE", help="A version 1.0, 1.2 or 2.0 rank table (hccl.json), a ConfigMap YAML holding one, or a MindIE global rank table; `-` reads "
                                          "standard input."),
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          readable=False, help="Write the description here (default: print it)."),
    hardware: Optional[str] = typer.Option(None, "--hardware",
                                           help="Hardware preset for the cluster block (default: "
                                                "inferred as `rtc validate` does)."),
    name: Optional[str] = typer.Option(None, "--name", help="Cluster name (default: from the file name)."),
    force: bool = typer.Option(False, "--force", help="Replace the -o file when it exists "
                               "(without it, an existing file is left untouched)."),
    configmap: Optional[str] = typer.Option(None, "--configmap", metavar="NAME",
                                            help="The ConfigMap to import when the file "
                                                 "holds several (kubectl get cm -o yaml)."),
) -> None:
    """Reverse a rank table into the rtc language, using server families where the servers
    are regular, so that `rtc compile` gives the same table back (byte for byte when the
    table is in rtc's own layout). The table is validated first; an invalid one is refused.

    An existing -o file is not replaced without --force: it may be a description you
    wrote (hosts, NICs, jobs), which the imported one would lose.

    Exit codes: 0 written, 1 the table is invalid or cannot be expressed, 2 usage or I/O
    (and an existing -o file without --force).

    Examples:

      rtc import hccl.json -o cluster.rtc

      rtc import rank_table.json --hardware atlas-800-910a -o cluster.rtc
    """
    from rtc.api.importing import import_table
    from rtc.api.validating import load_for_report

    _check_hardware(hardware)
    refuse_input_as_output([output], [table])
    if output is not None and not force:
        _refuse_existing(output)
    data, problem = load_for_report(table)
    label = "<stdin>" if table == "-" else table
    if problem is not None:
        report([problem], {})
        raise typer.Exit(2)
    result = import_table(data, label, hardware=hardware, configmap=configmap,
                          output_name=str(output) if output else "cluster.rtc", cluster_name=name)
    sources = {label: result.source_text or ""}
    if not result.ok:
        report(result.diagnostics, sources)
        raise typer.Exit(2 if result.unreadable else 1)   # 2: not UTF-8, as for RTC001
    report(result.diagnostics, sources, quiet=True)
    if output is None:
        write_stdout(result.text)
        return
    write_or_fail(output, result.text)
    typer.echo(f"rtc: wrote {output}", err=True)


def _refuse_existing(output: Path) -> None:
    """Exit 2 (RTC002) when ``output`` is an existing regular file: ``rtc import`` writes a
    description of the table alone, so replacing a file the user wrote (or completed with
    hosts, NICs, jobs) would lose that silently. Devices such as /dev/null are written."""
    if not output.is_file():
        return
    fail_usage(f"{output} exists; rtc import does not replace it without --force (the "
               "imported description has only what the rank table holds: hosts, NICs, "
               "networks and jobs written there would be lost)",
               f"write elsewhere and compare (-o {_free_name(output)}), "
               "or pass --force to replace the file")


def _free_name(output: Path) -> Path:
    """A name beside ``output`` that does not exist yet, for the hint: ``cluster.rtc`` ->
    ``cluster-imported.rtc``; a name that already says imported (``imported.rtc``) gets a
    number (``imported-2.rtc``) rather than ``imported-imported.rtc``."""
    stem = output.with_suffix("")
    if stem.name.endswith("imported"):
        names = (Path(f"{stem}-{n}.rtc") for n in range(2, 1000))
    else:
        names = (Path(f"{stem}-imported{'' if n == 1 else f'-{n}'}.rtc") for n in range(1, 1000))
    return next((p for p in names if not p.exists()), Path(f"{stem}-new.rtc"))


def _check_hardware(hardware: str | None) -> None:
    """Exit 2 (RTC002) for an unknown --hardware, with the closest preset."""
    from rtc.model.presets import presets

    if hardware is not None and hardware not in presets():
        import difflib

        close = difflib.get_close_matches(hardware, list(presets()), n=1)
        fail_usage(f"unknown --hardware '{hardware}'",
                   (f"did you mean '{close[0]}'? " if close else "") + "presets: " + ", ".join(presets()))
