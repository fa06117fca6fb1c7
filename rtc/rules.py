"""Rules: what a rule id (``RTCnnn``) means, declared once next to the code that reports it.

Every diagnostic rtc produces carries the code of a :class:`Rule`. A module declares its
rules with :func:`rule` as module constants and lists them in a module-level ``RULES``
tuple; diagnostics are made from the constant (``error(DUPLICATE_IP, ...)``), never from a
bare ``"RTC208"`` string. The catalogue of every rule (``rtc rules``, ``rtc explain``, SARIF,
policy names) is the static tuple :data:`rtc.catalogue.RULES`, which imports
those ``RULES`` tuples by name. Ids are unique and never reused.

This module also declares the driver rules every command can report: I/O errors (RTC001),
impossible command lines (RTC002), an emitted file failing rtc's own schema (RTC003), other
internal errors (RTC004) and a missing helper program such as Graphviz (RTC005 when an
optional output is skipped, RTC006 when the requested output cannot be made).
"""

from __future__ import annotations

import inspect
import sys
from typing import NamedTuple

from rtc.diagnostics import Severity

_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING, "note": Severity.NOTE}


class Rule(NamedTuple):
    """One rule: ``code`` (``RTC203``), a short kebab-case ``name``, its default
    ``severity``, a one-line ``summary``, the ``explanation`` ``rtc explain`` prints
    (What / Why / Example / Fix paragraphs) and ``also``: the other severities the rule is
    reported at, each with the case that gives it (e.g. ``(Severity.NOTE, "without
    vllm_version")``). A call may report a rule only at one of :attr:`severities`
    (``tests/test_architecture.py`` checks every call); policies and ``--strict`` change a
    finding's severity afterwards, for any rule. ``module`` is the module that declares
    the rule (``rtc.checks.nccl_env``), :attr:`path` its file: from a rule id to its code
    in one step (``rtc explain RTC472`` prints it)."""

    code: str
    name: str
    severity: Severity
    summary: str
    explanation: str
    also: tuple[tuple[Severity, str], ...] = ()
    module: str = ""

    def __str__(self) -> str:
        return self.code

    @property
    def severities(self) -> tuple[Severity, ...]:
        """The declared severity first, then the others of :attr:`also`."""
        return (self.severity,) + tuple(s for s, _ in self.also)

    @property
    def path(self) -> str:
        """The file that declares the rule, from the repository root
        (``rtc/checks/nccl_env.py``; a package's ``__init__.py``)."""
        parts = self.module.split(".")
        return "/".join(parts) + ".py" if not _is_package(self.module) else \
            "/".join(parts) + "/__init__.py"


def rule(code: str, name: str, severity: str, summary: str, explanation: str, *,
         also: dict[str, str] | None = None) -> Rule:
    """Declare a rule: ``severity`` is ``error``, ``warning`` or ``note``; ``also`` maps
    another severity word to the case reported at it; the explanation is dedented
    (:func:`inspect.cleandoc`); the rule records the module whose top level calls this (as
    :func:`collections.namedtuple` finds its ``__module__``). Raises KeyError for another
    severity word."""
    others = tuple((_SEVERITIES[s], why) for s, why in (also or {}).items())
    module = sys._getframe(1).f_globals.get("__name__", "")
    return Rule(code, name, _SEVERITIES[severity], summary, inspect.cleandoc(explanation),
                others, module)


def _is_package(module: str) -> bool:
    """True when ``module`` (a name in sys.modules) is a package (its file is __init__.py)."""
    found = sys.modules.get(module)
    return getattr(found, "__file__", "").endswith("__init__.py")


IO_ERROR = rule("RTC001", "io-error", "error", "A file cannot be read or written.", """
    What: the input does not exist or is unreadable, or an output folder is missing or
    read-only.
    Why: nothing can be compiled or written.
    Example: `rtc compile clutser.rtc`.
    Fix: check the path and permissions.""")
USAGE = rule("RTC002", "usage", "error", "The command line asks for something impossible.", """
    What: e.g. `-o` with a file that has several jobs and no `--job`.
    Why: rtc will not guess which output you wanted.
    Example: `rtc compile pd.rtc -o hccl.json` when the file has jobs prefill and decode.
    Fix: follow the message (choose `--job`, or `--out-dir`).""")
SCHEMA_SELF = rule("RTC003", "internal-schema-violation", "error",
                   "rtc built a rank table that its own JSON Schema rejects.", """
    What: an internal error: the emitted table failed validation against schemas/.
    Why: rtc never writes a table it cannot vouch for.
    Example: none expected; please report it with the input file.
    Fix: report the bug; nothing was written.""")

INTERNAL = rule("RTC004", "internal-error", "error", "rtc failed while building an output.", """
    What: an internal error: drawing a diagram or building another output raised an
    unexpected exception.
    Why: the output would be incomplete, so it is not written.
    Example: none expected; please report it with the input file.
    Fix: report the bug with the input file; the other outputs of the run are unaffected.""")
TOOL_MISSING = rule("RTC005", "tool-missing", "warning",
                    "A program an optional output needs is not installed.", """
    What: Graphviz `dot`, which renders the SVG diagrams `rtc compile --out-dir` writes
    beside the tables, is not on PATH.
    Why: the rank tables and scripts are still written; only the diagrams are skipped.
    Example: `rtc compile cluster.rtc --out-dir build/` on a machine without graphviz.
    Fix: install it (`apt-get install graphviz`), or pass `--no-diagrams`.""")
TOOL_REQUIRED = rule("RTC006", "tool-required", "error",
                     "A program or package the requested output needs is not installed.", """
    What: the output asked for cannot be made without it: `rtc diagram --format svg|png|pdf`
    needs Graphviz `dot`; `rtc compile --target k8s` and `rtc lint` of pod templates need
    the Python package kubernetes-validate (the `k8s` extra).
    Why: rtc writes nothing rather than unchecked or missing files.
    Example: `rtc compile cluster.rtc --target k8s --out-dir k8s/` after `pip install .`.
    Fix: install it (`apt-get install graphviz`; `pip install '.[k8s]'` in the rtc
    checkout), or use `rtc diagram --format dot`.""")

RULES = (IO_ERROR, USAGE, SCHEMA_SELF, INTERNAL, TOOL_MISSING, TOOL_REQUIRED)
