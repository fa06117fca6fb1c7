"""``rtc validate`` of Kubernetes inputs: the rank tables inside ConfigMap YAML
(:mod:`rtc.tables.configmap`), checked by the same pipeline as a JSON table
(:func:`rtc.api.validating.validate_source`) with every location mapped into the YAML file.

A table whose ``status`` is ``initializing`` is not checked further: RTC774 says that HCCL
waits for it (a note; an error with ``require_completed``).
"""

from __future__ import annotations

import json
import re

from rtc.api.validating import Inventory, TableReport, validate_source
from rtc.diagnostics import Diagnostic, Related, Severity, Span, note, sorted_diagnostics
from rtc.tables.configmap import INITIALIZING, Embedded, embedded_tables
from rtc.tables.recognise import rtc_description

_STATUS = re.compile(r'"status"\s*:\s*"')


def validate_configmap(data: bytes | str, filename: str, *, hardware: str | None = None,
                       schema: str | None = None, inventory: Inventory | None = None,
                       fold: bool = False, require_completed: bool = False) -> TableReport:
    """Validate every ConfigMap rank table of a YAML file (``data``: its bytes or text).

    The report's ``text`` is the YAML (findings are located in it), ``doc`` the last
    table's document and ``form`` its form prefixed with ``configmap:``. Never raises for
    bad input: every problem is a diagnostic."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    text = text[1:] if text.startswith("\ufeff") else text
    report = TableReport(filename, text)
    described = rtc_description(text, filename)
    if described is not None:  # not YAML at all: an rtc description given by mistake
        report.diagnostics = [described]
        return report
    tables, diags = embedded_tables(text, filename)
    for emb in tables:
        status = _status(emb.text)
        if status == "initializing":
            diags.append(initializing(emb, filename, require_completed))
            report.form = report.form or "configmap:initializing"
            continue
        rep = validate_source(emb.text, filename, hardware=hardware, schema=schema,
                              inventory=inventory, fold=fold)
        diags += [moved(d, emb, filename) for d in rep.diagnostics]
        report.doc, report.lowered = rep.doc, rep.lowered
        report.form = f"configmap:{rep.form}" if rep.form else report.form
        report.hardware = rep.hardware
    report.diagnostics = sorted_diagnostics(diags)
    return report


def _status(text: str) -> str | None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return doc.get("status") if isinstance(doc, dict) else None


def initializing(emb: Embedded, filename: str, require_completed: bool) -> Diagnostic:
    """RTC774 for the table of ``emb``, whose status is still ``initializing`` (an error
    with ``require_completed``, else the rule's note)."""
    m = _STATUS.search(emb.text)
    line, col = (emb.text.count("\n", 0, m.start()) + 1,
                 m.start() - (emb.text.rfind("\n", 0, m.start()) + 1) + 1) if m else (1, 1)
    yl, yc = emb.where.position(line, col)
    d = note(INITIALIZING, f"ConfigMap {emb.name}: the rank table's status is "
             "initializing; HCCL re-reads it every second and gives up after 30 minutes, "
             "and its other fields are not checked until it is completed",
             Span(filename, yl, yc), subject=f"ConfigMap {emb.name}",
             hint="wait until the operator sets status completed (every pod needs its "
                  "ascend.kubectl.kubernetes.io/ascend-910-configuration annotation), "
                  "then validate again")
    return d.with_severity(Severity.ERROR) if require_completed else d


def configmap_tables(text: str,
                     filename: str) -> tuple[list[Embedded], list[Diagnostic], list[Embedded]]:
    """The rank tables of the ConfigMap YAML (or JSON) ``text`` (decoded, without a byte
    order mark: the caller has both) for ``rtc import``: ``(completed tables, the YAML's
    own errors RTC771-773, tables still initializing)``."""
    tables, diags = embedded_tables(text, filename)
    diags = [d for d in diags if d.severity is Severity.ERROR]
    pending = [t for t in tables if _status(t.text) == "initializing"]
    return [t for t in tables if t not in pending], diags, pending


def moved(d: Diagnostic, emb: Embedded, filename: str) -> Diagnostic:
    """``d`` with its spans (and related spans) in ``filename`` moved into the YAML."""
    def move(s: Span | None) -> Span | None:
        if s is None or s.file != filename:
            return s
        line, col = emb.where.position(s.line, s.column)
        if s.end_line and s.end_line == s.line and emb.where.exact:
            end_line, end_col = emb.where.position(s.end_line, s.end_column)
        else:
            end_line = end_col = 0
        return Span(filename, line, col, end_line, end_col)

    related = tuple(Related(move(r.span), r.message) for r in d.related)
    subject = f"ConfigMap {emb.name}, {d.subject}" if d.subject else f"ConfigMap {emb.name}"
    return d._replace(span=move(d.span), related=related, subject=subject)


_NOT_JSON = "is not complete JSON yet"


def _not_ready(data: bytes, filename: str) -> str | None:
    """Why the table file ``data`` is not ready to validate (a phrase after its name:
    still initializing, not complete JSON, no rank table yet), or None when it is."""
    from rtc.tables.configmap import looks_like_yaml

    if looks_like_yaml(data, filename):
        tables, _diags = embedded_tables(data.decode("utf-8", errors="replace"), filename)
        texts = [t.text for t in tables]
        if not texts:
            return "holds no rank table yet"
    else:
        texts = [data.decode("utf-8-sig", errors="replace")]
    for text in texts:
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):      # a writer half-way through (truncated) or an empty file
            return _NOT_JSON
        if isinstance(doc, dict) and doc.get("status") == "initializing":
            return "still says initializing"
    return None


def wait_for_table(path: str, seconds: float, *, interval: float = 1.0,
                   sleep=None, clock=None) -> str | None:
    """Re-read ``path`` every ``interval`` seconds (as HCCL does) until it is ready or
    ``seconds`` have passed. Not ready: missing or unreadable (a ConfigMap volume not yet
    mounted), not complete JSON (a writer half-way through), or a table whose ``status``
    is ``initializing``. Returns None once ready, else why it still was not at the end
    (``"does not exist yet"``, ``"is not complete JSON yet"``, ``"still says
    initializing"``...). ``sleep`` / ``clock`` default to :func:`time.sleep` /
    :func:`time.monotonic`."""
    import time

    from rtc.readfile import InputRefused, read_bytes

    sleep = sleep or time.sleep
    clock = clock or time.monotonic
    deadline = clock() + seconds
    while True:
        try:
            why = _not_ready(read_bytes(path), path)
        except FileNotFoundError:
            why = "does not exist yet"
        except InputRefused:    # not a regular file, too large: the validation says so
            return None
        except OSError as e:
            why = f"cannot be read yet ({e.strerror or e})"
        if why is None or clock() >= deadline:
            return why
        sleep(min(interval, max(0.0, deadline - clock())))


def wait_until_completed(path: str, seconds: float, *, interval: float = 1.0,
                         sleep=None, clock=None) -> bool:
    """:func:`wait_for_table`, True when the table became ready within ``seconds``."""
    return wait_for_table(path, seconds, interval=interval, sleep=sleep, clock=clock) is None


def initializing_json(data: bytes, filename: str, require_completed: bool
                      ) -> TableReport | None:
    """For a JSON table whose status is ``initializing``: a report with RTC774 only (the
    table is not checked further); None for any other input."""
    text = data.decode("utf-8-sig", errors="replace")
    if _status(text) != "initializing":
        return None
    from rtc.tables.configmap import LineMap

    report = TableReport(filename, text, form="initializing")
    emb = Embedded(filename, text, LineMap(1, 1, 0))
    d = initializing(emb, filename, require_completed)
    report.diagnostics = [d._replace(message=d.message.replace(f"ConfigMap {filename}: ", f"{filename}: "),
        subject=None)]
    return report
