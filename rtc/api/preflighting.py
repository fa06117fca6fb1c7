"""The driver of ``rtc preflight report`` (Ascend NPUs) and ``rtc preflight nccl`` (NVIDIA
GPUs): read the results folders the preflight scripts wrote (or logs holding several,
:mod:`rtc.preflight.stream`) and judge them (:mod:`rtc.preflight`)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic

#: What ``kind`` may be: ``npu`` (rtc preflight report) or ``nccl`` (rtc preflight nccl).
KINDS = ("npu", "nccl")


@dataclass
class PreflightReport:
    """What :func:`preflight` found: ``diagnostics`` (sorted; RTC001 first for each path
    that does not exist), the texts of the files read (for showing source lines), ``text``
    the tables printed before the findings (reachability matrix, bandwidth, or nccl-tests
    busbw), ``document(diagnostics)`` the JSON document of ``--format json``, and
    ``missing`` the paths that cannot be read (the CLI exits 2)."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    text: str = ""
    document: Callable[[list[Diagnostic]], dict] = dict
    missing: list[str] = field(default_factory=list)


def preflight(paths: Sequence[str | os.PathLike], *, kind: str = "npu",
              strict: bool = False) -> PreflightReport:
    """Judge the preflight results at ``paths`` (results folders, one per server, or
    Slurm / ``kubectl logs`` output holding several): ``kind`` ``npu`` for the Ascend checks
    (RTC560-RTC569, RTC580-RTC582), ``nccl`` for nccl-tests results (RTC570-RTC575);
    ``strict`` turns warnings into errors; a path given twice is read once
    (:func:`distinct`). Never raises for bad input; ValueError for an
    unknown ``kind``."""
    from rtc.diagnostics import Severity, sorted_diagnostics

    if kind not in KINDS:
        raise ValueError(f"unknown preflight kind {kind!r} (kinds: {', '.join(KINDS)})")
    paths = distinct(paths)
    missing = unusable(paths)
    usable = [p for p in paths if p not in missing]
    rep = _npu(usable) if kind == "npu" else _nccl(usable)
    diags = sorted_diagnostics(missing_paths(missing) + rep.diagnostics)
    if strict:
        diags = [d.with_severity(Severity.ERROR) if d.severity is Severity.WARNING else d
                 for d in diags]
    rep.diagnostics, rep.missing = diags, [str(p) for p in missing]
    return rep


def _npu(paths) -> PreflightReport:
    from rtc.preflight import npu_bandwidth
    from rtc.preflight.findings import analyse
    from rtc.preflight.results import load_results

    with unpacked(paths) as (folders_at, relabel):
        folders = [load_results(p) for p in folders_at]
        diags, matrix, texts = analyse(folders)
        diags, texts = relabel(diags, texts)
    text = matrix.text() if any(r.problem is None for r in folders) else ""  # none unread
    text += npu_bandwidth.text(folders)
    sweeps = [x for x in map(npu_bandwidth.to_dict, folders) if x is not None]
    return PreflightReport(diags, texts, text, lambda ds: {
        "servers": [r.server for r in folders], "matrix": matrix.to_dict(),
        **({"bandwidth": sweeps} if sweeps else {}),
        "diagnostics": [d.to_dict() for d in ds]})


def _nccl(paths) -> PreflightReport:
    from rtc.preflight.nccl import judge, table

    with unpacked(paths) as (folders_at, relabel):
        judged = [judge(p) for p in folders_at]
        texts = {k: v for r, _d in judged for k, v in r.texts.items()}
        found, texts = relabel([d for _r, ds in judged for d in ds], texts)
    return PreflightReport(found, texts, "".join(table(r) for r, _d in judged),
                           lambda ds: {"results": [_nccl_json(r) for r, _d in judged],
                                       "diagnostics": [d.to_dict() for d in ds]})


def _nccl_json(r) -> dict:
    rows = [] if r.run is None else [
        {"size": x.size, "time_us": x.time, "algbw_gbps": x.algbw, "busbw_gbps": x.busbw,
         "in_place_busbw_gbps": x.in_busbw, "wrong": x.wrong} for x in r.run.rows]
    return {"server": r.label, "gpus": r.run.gpus if r.run else None,
            "expected_busbw_gbps": r.expected, "expected_link": r.link, "rows": rows}


@contextmanager
def unpacked(results: Sequence[str | os.PathLike]):
    """``(paths, relabel)``: the results folders to read, a log among ``results`` (Slurm's
    per-node output files, ``kubectl logs``; :mod:`rtc.preflight.stream`) unpacked into a
    temporary folder per server; ``relabel(diags, texts)`` names a file of such a folder
    ``LOG#SERVER/FILE`` instead of its temporary path. Paths that do not exist are left
    out (see :func:`missing_paths`)."""
    from rtc.preflight.stream import is_log, unpack

    with tempfile.TemporaryDirectory(prefix="rtc-preflight-") as tmp:
        paths, names = [], {}
        for i, p in enumerate(results):
            if not os.path.exists(p):
                continue
            if not is_log(str(p)):
                paths.append(str(p))
                continue
            for server, folder in unpack(str(p), os.path.join(tmp, str(i))):
                paths.append(folder)
                names[folder] = f"{p}#{server}"

        def relabel(diags: list, texts: dict):
            def name(f: str | None):
                for folder, label in names.items():
                    if f and f.startswith(folder + os.sep):
                        return label + f[len(folder):]
                return f
            out = [d._replace(span=d.span._replace(file=name(d.span.file)))
                   if d.span is not None else d for d in diags]
            return out, {name(k): v for k, v in texts.items()}

        yield paths, relabel


def distinct(paths: Sequence[str | os.PathLike]) -> list[str | os.PathLike]:
    """``paths`` without repeats: a path naming the same file or folder as an earlier one
    (``DIR``, ``DIR/``, ``./DIR``, a symbolic link to it; :func:`os.path.realpath`) is
    dropped, so one folder given twice is judged once (not "server appears twice" and
    every finding doubled). The first spelling is kept, order is kept."""
    seen, out = set(), []
    for p in paths:
        key = os.path.normcase(os.path.realpath(p))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def unusable(paths: Sequence[str | os.PathLike]) -> dict:
    """``{path: reason}`` of the results that cannot be read: missing, neither a folder
    nor a regular file (a device, a FIFO: never opened), a log larger than
    :func:`rtc.readfile.max_input_bytes`, or a log whose result lines are all rejected
    (:func:`rtc.preflight.stream.why_unusable`: nothing would be judged)."""
    from rtc.preflight.stream import is_log, why_unusable
    from rtc.readfile import check, reason_of

    out = {}
    for p in paths:
        try:
            if not os.path.isdir(p):
                check(p)
                if is_log(str(p)) and (why := why_unusable(str(p))) is not None:
                    out[p] = why
        except FileNotFoundError:
            out[p] = "it does not exist"
        except OSError as exc:
            out[p] = reason_of(exc)
    return out


def missing_paths(paths: dict) -> list[Diagnostic]:
    """An I/O error (RTC001) for each results path that cannot be read (``{path:
    reason}``, :func:`unusable`)."""
    from rtc.diagnostics import Span, error
    from rtc.rules import IO_ERROR

    return [error(IO_ERROR, f"cannot read {p}: {why}", Span.whole_file(str(p)),
                  hint="pass the folders the preflight scripts wrote "
                       "(default preflight-results/SERVER), or a log that carries them")
            for p, why in paths.items()]
