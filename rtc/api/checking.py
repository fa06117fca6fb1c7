"""`rtc check`: every stage and check on one or more descriptions, nothing written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rtc.api.compiling import CompileResult, compile_file
from rtc.diagnostics import Diagnostic, has_errors


@dataclass
class CheckResult:
    """What :func:`check` found: every diagnostic (those of each file, then the port
    conflicts between files on shared hosts), the source texts by file name, and the
    :class:`~rtc.api.compiling.CompileResult` of each file, in the order given."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    results: list[CompileResult] = field(default_factory=list)

    @property
    def groups(self) -> list[list[Diagnostic]]:
        """The diagnostics of each file in the order given, then the port conflicts
        between them (``rtc check prefill.rtc decode.rtc`` reports prefill.rtc first)."""
        per_file = [list(r.diagnostics) for r in self.results]
        n = sum(len(g) for g in per_file)
        return per_file + [self.diagnostics[n:]]

    @property
    def unreadable(self) -> bool:
        """True when no file could be read at all (the CLI exits 2)."""
        return all(r.topology is None and not r.sources for r in self.results)

    @property
    def ok(self) -> bool:
        """True when no diagnostic is an error (the CLI exits 0, else 1)."""
        return not has_errors(self.diagnostics)


def check(paths: Sequence[str], *, strict: bool = False,
          compile_one: Callable[[str, bool], CompileResult] | None = None) -> CheckResult:
    """Compile each of ``paths`` (file names) and, with more than one, check the ports of
    their jobs on shared hosts together (:func:`rtc.api.ports_across.cross_file_ports`).
    ``strict`` turns warnings into errors; ``compile_one(path, strict)`` compiles one file
    (default :func:`rtc.api.compiling.compile_file`; the CLI passes one that reads ``-`` from
    standard input and shows progress). Never raises for bad input: an unreadable file is
    an RTC001 diagnostic."""
    one = compile_one or (lambda p, s: compile_file(str(p), strict=s))
    out = CheckResult(results=[one(p, strict) for p in paths])
    for result in out.results:
        out.diagnostics += result.diagnostics
        out.sources.update(result.sources)
    if len(out.results) > 1:
        from rtc.api.ports_across import cross_file_ports

        out.diagnostics += cross_file_ports(out.results)
    return out
