"""``rtc validate`` of Kubernetes inputs: the rank tables inside ConfigMap YAML
(:mod:`rtc.tables.configmap`), checked by the same pipeline as a JSON table
(:func:`rtc.api.validate.validate_source`) with every location mapped into the YAML file.

A table whose ``status`` is ``initializing`` is not checked further: RTC774 says that HCCL
waits for it (a note; an error with ``require_completed``).
"""

from __future__ import annotations

import json
import re

from rtc.api.validate import Inventory, TableReport, validate_source
from rtc.diagnostics import Diagnostic, Related, Severity, Span, note, sorted_diagnostics
from rtc.tables.configmap import INITIALIZING, Embedded, embedded_tables

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
    tables, diags = embedded_tables(text, filename)
    for emb in tables:
        status = _status(emb.text)
        if status == "initializing":
            diags.append(_initializing(emb, filename, require_completed))
            report.form = report.form or "configmap:initializing"
            continue
        rep = validate_source(emb.text, filename, hardware=hardware, schema=schema,
                              inventory=inventory, fold=fold)
        diags += [_moved(d, emb, filename) for d in rep.diagnostics]
        report.doc, report.lowered = rep.doc, rep.lowered
        report.form = f"configmap:{rep.form}" if rep.form else report.form
        report.hardware = rep.hardware
    report.diagnostics = sorted_diagnostics(diags)
    return report


def _status(text: str) -> str | None:
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc.get("status") if isinstance(doc, dict) else None


def _initializing(emb: Embedded, filename: str, require_completed: bool) -> Diagnostic:
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


def _moved(d: Diagnostic, emb: Embedded, filename: str) -> Diagnostic:
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


def table_statuses(data: bytes, filename: str) -> list[str | None]:
    """The ``status`` of each rank table in a file: one for JSON, one per ConfigMap for
    YAML (:func:`rtc.tables.configmap.looks_like_yaml`); [] when none can be read."""
    from rtc.tables.configmap import looks_like_yaml

    if looks_like_yaml(data, filename):
        tables, _diags = embedded_tables(data.decode("utf-8", errors="replace"), filename)
        return [_status(t.text) for t in tables]
    status = _status(data.decode("utf-8-sig", errors="replace"))
    return [status]


def wait_until_completed(path: str, seconds: float, *, interval: float = 1.0,
                         sleep=None, clock=None) -> bool:
    """Re-read ``path`` every ``interval`` seconds (as HCCL does) until none of its tables
    says ``initializing`` or ``seconds`` have passed; True when it no longer does. A file
    that cannot be read yet (a ConfigMap volume not yet mounted) is waited for too.
    ``sleep`` / ``clock`` default to :func:`time.sleep` / :func:`time.monotonic`."""
    import time

    sleep = sleep or time.sleep
    clock = clock or time.monotonic
    deadline = clock() + seconds
    while True:
        try:
            with open(path, "rb") as f:
                statuses = table_statuses(f.read(), path)
        except OSError:
            statuses = ["initializing"]
        if statuses and "initializing" not in statuses:
            return True
        if clock() >= deadline:
            return False
        sleep(min(interval, max(0.0, deadline - clock())))


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
    d = _initializing(emb, filename, require_completed)
    report.diagnostics = [d._replace(message=d.message.replace(f"ConfigMap {filename}: ", f"{filename}: "),
        subject=None)]
    return report
