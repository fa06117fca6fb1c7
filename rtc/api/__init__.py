"""The library: one entry per command, each taking its input first and keyword-only
options, printing nothing and never exiting (the CLI parses flags, calls one of these,
reports and exits):

=================  ==========================================  ===========================
entry              what it does                                command
=================  ==========================================  ===========================
``compile``        compile a description                       ``rtc compile`` (checks)
``write_outputs``  write every output into a folder            ``rtc compile --out-dir``
``check``          compile several, ports across them          ``rtc check``
``validate``       validate an existing rank table             ``rtc validate``
``lint``           lint launch scripts and manifests           ``rtc lint``
``diagram``        draw a description                          ``rtc diagram``
``cost``           communication cost of a job's layout        ``rtc cost``
``advise``         every layout of a job ranked                ``rtc advise``
``preflight``      judge preflight results                     ``rtc preflight``
``import_table``   a rank table as a description               ``rtc import``
=================  ==========================================  ===========================

The drivers behind them, one module per command: :mod:`rtc.api.compiling`
(:func:`compile_text`, :func:`compile_file`, :func:`rank_table`, :func:`topology_files`,
exported here), :mod:`rtc.api.writing`, :mod:`rtc.api.checking`, :mod:`rtc.api.validating`,
:mod:`rtc.api.linting`, :mod:`rtc.api.diagramming`, :mod:`rtc.api.costing`,
:mod:`rtc.api.preflighting`, :mod:`rtc.api.importing`; :mod:`rtc.api.commands` holds the
entries that only read a file and call a driver.

Only the compile driver is imported with the package, so that ``rtc compile`` does not load
the JSON front end; the other entries are imported on first use.
"""

from rtc.api.compiling import (STAGES, CompileResult, compile_file, compile_text, rank_table,
                               topology_files)

__all__ = ["STAGES", "CompileResult", "compile_file", "compile_text", "rank_table",
           "topology_files", "compile", "write_outputs", "check", "validate", "lint", "diagram",
           "cost", "advise", "preflight", "import_table"]


def __getattr__(name: str):
    """The entries other than the compile driver, imported on first use."""
    if name == "write_outputs":
        from rtc.api.writing import write_outputs
        return write_outputs
    if name == "check":
        from rtc.api.checking import check
        return check
    if name == "preflight":
        from rtc.api.preflighting import preflight
        return preflight
    if name in ("compile", "validate", "lint", "diagram", "cost", "advise", "import_table"):
        from rtc.api import commands
        return getattr(commands, name)
    raise AttributeError(f"module 'rtc.api' has no attribute {name!r}")
