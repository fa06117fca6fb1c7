#!/usr/bin/env python3
"""Ecosystem check: every rtc reader over the corpus of real public artefacts in
``tests/ecosystem/<kind>/`` (the way ruff's ecosystem check and mypy_primer measure a tool
against real inputs rather than its own fixtures).

Each kind folder holds captures / tables kept byte for byte and a ``SOURCES.md`` with one
markdown table ``| file | source | facts |``; ``facts`` is ``key=value; key=value`` -- what a
person reads from the file. The adapter of the kind reads the file with rtc's public reader
(the same function every command uses), derives the same keys and compares them as strings;
only the keys a row names are compared. ``verdict=ok|bad`` says whether rtc must report an
error. Fact keys per kind: ``tests/ecosystem/README.md``.

Usage::

    python3 tools/ecosystem.py              # per-kind table; exit 1 on any failure
    python3 tools/ecosystem.py --verbose    # and every failing file with the reason
    python3 tools/ecosystem.py --json       # machine-readable, per file

Columns: files (rows in SOURCES.md), read (the reader returned a result and, unless the row
says ``verdict=bad``, no error), facts (files whose listed facts all equal rtc's), findings
(rtc diagnostics over the kind's files, any severity), tracebacks (a reader raised).
A file in a kind folder without a row, or a row without a file, is a failure too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rtc_deps import require_project_deps  # noqa: E402

require_project_deps(__file__)  # one line and exit 2 under a Python without rtc's deps

from rtc.api.validating import validate_source  # noqa: E402
from rtc.diagnostics import Severity  # noqa: E402
from rtc.inventory import (detect_kinds, device_from_filename, load_inventory_files,  # noqa: E402
                           parse_hccn_conf,
                           parse_hccn_tool, parse_npu_smi_chip_map, parse_npu_smi_info,
                           parse_npu_smi_topo)
from rtc.inventory._common import read_text  # noqa: E402
from rtc.inventory.ibv_devinfo import parse_ibv_devinfo  # noqa: E402
from rtc.inventory.nccl_tests import parse_nccl_tests  # noqa: E402
from rtc.inventory.nccl_topo import parse_nccl_topo_xml  # noqa: E402
from rtc.inventory.npu_smi_board import parse_npu_smi_board  # noqa: E402
from rtc.inventory.nvidia_smi import parse_gpu_list, parse_gpu_names, parse_gpu_topo  # noqa: E402
from rtc.preflight.bench_output import BenchOutputError, read_bench_output  # noqa: E402

CORPUS = ROOT / "tests" / "ecosystem"


class Unread(Exception):
    """The reader gave no result for the file (the message says why)."""


@dataclass
class Outcome:
    """What reading one file gave: ``facts`` (key -> text), ``diags`` (rtc diagnostics)."""

    facts: dict[str, str] = field(default_factory=dict)
    diags: list = field(default_factory=list)


def _sniffed(path: Path, text: str, want: str) -> None:
    """The file must be recognised as ``want`` by the inventory's sniffing and as no other
    table kind (an hccn_tool record in an npu-smi capture is allowed)."""
    kinds = detect_kinds(path.name, text)
    if want not in kinds:
        raise Unread(f"sniffed as {kinds or 'nothing'}, not {want}")


def _text(path: Path) -> tuple[str, list]:
    text, diags = read_text(path, path.name)
    if text is None:
        raise Unread("; ".join(d.message for d in diags))
    return text, diags


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _parsed(path: Path, sniff: str, parse):
    """Read ``path``, check the sniffing takes it for ``sniff``, parse it with ``parse``;
    returns ``(result, diagnostics)``; :class:`Unread` when the reader gives no result."""
    text, diags = _text(path)
    _sniffed(path, text, sniff)
    got, more = parse(text, path.name)
    if got is None:
        raise Unread("; ".join(d.message for d in more))
    return got, diags + more


# -- adapters: Path -> Outcome ------------------------------------------------------------------

def npu_smi_info(path: Path) -> Outcome:
    info, diags = _parsed(path, "npu_smi_info", parse_npu_smi_info)
    names = sorted({c.name.value for c in info.chips})
    return Outcome({"npus": str(len(info.npu_ids)), "chips": str(len(info.chips)),
                    "name": ",".join(names), "version": str(info.version)}, diags)


def npu_smi_topo(path: Path) -> Outcome:
    topo, diags = _parsed(path, "npu_smi_topo", parse_npu_smi_topo)
    codes = sorted({f.value for (a, b), f in topo.links.items() if a != b})
    return Outcome({"npus": str(len(topo.ids)), "islands": str(len(topo.hccs_islands())),
                    "links": ",".join(codes)}, diags)


def npu_smi_chips(path: Path) -> Outcome:
    chips, diags = _parsed(path, "npu_smi_chips", parse_npu_smi_chip_map)
    acc = chips.accelerators
    return Outcome({"npus": str(len({e.npu_id for e in acc})), "chips": str(len(acc))},
                   diags)


def npu_smi_board(path: Path) -> Outcome:
    info, diags = _parsed(path, "npu_smi_board", parse_npu_smi_board)
    boards = info.boards
    return Outcome({"npus": str(len({b.npu_id for b in boards})),
                    "chips": str(sum(b.chip_id is not None for b in boards)),
                    "board_id": ",".join(sorted({b.board_id for b in boards})),
                    "name": ",".join(sorted({b.chip_name for b in boards if b.chip_name})) or "none",
                    "firmware": ",".join(sorted({b.fields.get("Firmware Version", "none")
                                                 for b in boards}))}, diags)


_TOOL_FIELDS = ("ip", "netmask", "ipv6", "link", "net_health", "gateway", "netdetect",
                "lldp_ifname", "vnic_ip")


def hccn_tool(path: Path) -> Outcome:
    text, diags = _text(path)
    _sniffed(path, text, "hccn_tool")
    out, more = parse_hccn_tool(text, path.name, device=device_from_filename(path.name),
                                vnic="vnic" in path.stem.lower())
    facts = {"devices": str(len(out.devices)), "pings": str(len(out.pings)),
             "pings_ok": str(sum(p.ok for p in out.pings))}
    for name in _TOOL_FIELDS:
        facts[name] = str(sum(name in f for f in out.facts.values()))
    ips = [str(f["ip"].value) for _, f in sorted(out.facts.items()) if "ip" in f]
    facts["first_ip"] = ips[0] if ips else "none"
    ups = sum(f["link"].value == "UP" for f in out.facts.values() if "link" in f)
    facts["link_up"] = str(ups)
    return Outcome(facts, diags + more)


def hccn_conf(path: Path) -> Outcome:
    text, diags = _text(path)
    _sniffed(path, text, "hccn_conf")
    conf, more = parse_hccn_conf(text, path.name)
    with_addr = [d for d, f in conf.devices.items() if "address" in f]
    return Outcome({"devices": str(len(conf.devices)), "addresses": str(len(with_addr))},
                   diags + more)


def ranktable(path: Path) -> Outcome:
    report = validate_source(path.read_bytes(), path.name)
    facts = {"verdict": "ok" if report.ok else "bad", "form": str(report.form)}
    if report.lowered is not None:
        servers = report.lowered.topology.servers
        facts["servers"] = str(len(servers))
        facts["ranks"] = str(sum(len(s.devices) for s in servers))
    return Outcome(facts, report.diagnostics)


def nccl_tests(path: Path) -> Outcome:
    text, diags = _text(path)
    run, more = parse_nccl_tests(text, path.name)
    if run is None:
        raise Unread("; ".join(d.message for d in more))
    facts = {"gpus": str(run.gpus), "rows": str(len(run.rows)),
             "avg_busbw": "none" if run.avg_busbw is None else f"{run.avg_busbw:g}",
             "peak_busbw": "none" if run.peak() is None else f"{run.peak().best_busbw:g}"}
    try:   # the calibrate reader of the same file must take the same rows
        facts["samples"] = str(len(read_bench_output(path.name, text).samples))
    except BenchOutputError as exc:
        facts["samples"] = "0"
        more = more + [exc]
    return Outcome(facts, diags + more)


def hccl_test(path: Path) -> Outcome:
    text, diags = _text(path)
    try:
        run = read_bench_output(path.name, text)
    except BenchOutputError as exc:
        raise Unread(str(exc)) from None
    peak = max((s.nbytes for s in run.samples), default=0)
    return Outcome({"rows": str(len(run.samples)), "op": str(run.op),
                    "max_bytes": f"{peak:g}", "dropped": str(len(run.notes))}, diags)


def nvidia_smi_topo(path: Path) -> Outcome:
    topo, diags = _parsed(path, "nvidia_smi_topo", parse_gpu_topo)
    nvlink = any(topo.nvlinks(a, b) for (a, b) in topo.links if a != b)
    return Outcome({"gpus": str(len(topo.gpus)), "nics": str(len(topo.nics)),
                    "nvlink": _yes(nvlink)}, diags)


def nvidia_smi_query_gpu(path: Path) -> Outcome:
    gpus, diags = _parsed(path, "nvidia_smi_gpus", parse_gpu_list)
    return Outcome({"gpus": str(len(gpus.gpus))}, diags)


def nvidia_smi_l(path: Path) -> Outcome:
    """``nvidia-smi -L`` (inventory does not take it: it names GPUs, not links)."""
    text, diags = _text(path)
    names, more = parse_gpu_names(text, path.name)
    if names is None:
        raise Unread("; ".join(d.message for d in more))
    diags = diags + more
    return Outcome({"gpus": str(len(names.gpus)), "mig": str(len(names.mig))}, diags)


def ibv_devinfo(path: Path) -> Outcome:
    info, diags = _parsed(path, "ibv_devinfo", parse_ibv_devinfo)
    ports = [p for _, p in info.ports()]
    layers = sorted({p.link_layer for p in ports if p.link_layer})
    return Outcome({"devices": str(len(info.devices)), "ports": str(len(ports)),
                    "active": str(sum(p.active for p in ports)), "link_layer": ",".join(layers),
                    "gids": str(sum(len(p.gids) for p in ports))}, diags)


def nccl_topo_xml(path: Path) -> Outcome:
    """NCCL's topology XML (``NCCL_TOPO_DUMP_FILE`` / ``NCCL_TOPO_FILE``); what rtc's
    preflight reads in ``nccl-topo-dump.xml``. A cut-short dump is unread (verdict=bad)."""
    text, diags = _text(path)
    topo, more = parse_nccl_topo_xml(text, path.name)
    if topo is None:
        if any(d.severity is Severity.ERROR for d in more):
            return Outcome({}, diags + more)
        raise Unread("; ".join(d.message for d in more))
    switch = any(l.tclass == "0x068000" for l in topo.nvlinks)
    return Outcome({"gpus": str(len(topo.gpus)), "nets": str(len(topo.nets)),
                    "nic_pcis": str(len(topo.nic_pcis)), "cpus": str(len(topo.cpus)),
                    "nvlinks": str(len(topo.nvlinks)), "nvswitch": _yes(switch)}, diags + more)


def unrecognised(path: Path) -> Outcome:
    """A capture of a tool rtc does not read: the inventory must take it for no kind and say
    in one RTC488 warning what it looks like (never hand it to another tool's reader)."""
    text, diags = _text(path)
    kinds = detect_kinds(path.name, text)
    _, more = load_inventory_files([path])
    said = next((m.group(1) for d in more if d.code == "RTC488"
                 and (m := re.search(r"it looks like (?:an? )?`?([^`;,)]+)", d.message))), "nothing")
    return Outcome({"kinds": ",".join(kinds) or "none", "looks_like": said.strip(),
                    "warnings": str(len(more))}, diags + more)


#: kind folder -> (adapter, what reads it in rtc). A static registry: a kind without an
#: adapter is reported as such (its files count as unread).
ADAPTERS = (
    ("npu-smi-info", npu_smi_info, "rtc.inventory.npu_smi.parse_npu_smi_info"),
    ("npu-smi-topo", npu_smi_topo, "rtc.inventory.npu_smi.parse_npu_smi_topo"),
    ("npu-smi-chips", npu_smi_chips, "rtc.inventory.npu_smi.parse_npu_smi_chip_map"),
    ("npu-smi-board", npu_smi_board, "rtc.inventory.npu_smi_board.parse_npu_smi_board"),
    ("hccn-tool", hccn_tool, "rtc.inventory.hccn_tool.parse_hccn_tool"),
    ("hccn-conf", hccn_conf, "rtc.inventory.hccn_conf.parse_hccn_conf"),
    ("ranktable", ranktable, "rtc.api.validating.validate_source"),
    ("nccl-tests", nccl_tests, "rtc.inventory.nccl_tests + rtc.preflight.bench_output"),
    ("hccl-test", hccl_test, "rtc.preflight.bench_output.read_bench_output"),
    ("nvidia-smi-topo", nvidia_smi_topo, "rtc.inventory.nvidia_smi.parse_gpu_topo"),
    ("nvidia-smi-query-gpu", nvidia_smi_query_gpu, "rtc.inventory.nvidia_smi.parse_gpu_list"),
    ("nvidia-smi-L", nvidia_smi_l, "rtc.inventory.nvidia_smi.parse_gpu_names"),
    ("ibv-devinfo", ibv_devinfo, "rtc.inventory.ibv_devinfo.parse_ibv_devinfo"),
    ("nccl-topo-xml", nccl_topo_xml, "rtc.inventory.nccl_topo.parse_nccl_topo_xml"),
    ("unrecognised", unrecognised, "rtc.inventory.load_inventory_files (RTC488)"),
)


# -- SOURCES.md ----------------------------------------------------------------------------------

def read_sources(folder: Path) -> tuple[dict[str, dict[str, str]], list[str]]:
    """``SOURCES.md`` rows: file -> expected facts; and problems with the table itself."""
    rows: dict[str, dict[str, str]] = {}
    problems: list[str] = []
    path = folder / "SOURCES.md"
    if not path.is_file():
        return rows, [f"{folder.name}: no SOURCES.md"]
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or len(cells) < 3 or cells[0] in ("file", "") \
                or set(cells[0]) <= set("-: "):
            continue
        name, facts = cells[0].strip("`"), cells[-1]
        expected: dict[str, str] = {}
        for pair in filter(None, (p.strip() for p in facts.split(";"))):
            key, eq, value = pair.partition("=")
            if not eq:
                problems.append(f"SOURCES.md:{no}: fact '{pair}' is not key=value")
                continue
            expected[key.strip()] = value.strip()
        rows[name] = expected
    return rows, problems


# -- running -------------------------------------------------------------------------------------

@dataclass
class FileResult:
    kind: str
    file: str
    read: bool = False
    facts_equal: bool = False
    findings: int = 0
    traceback: str | None = None
    why: list[str] = field(default_factory=list)


def check_file(kind: str, adapter, path: Path, expected: dict[str, str]) -> FileResult:
    res = FileResult(kind, path.name)
    try:
        got = adapter(path)
    except Unread as exc:
        res.why.append(f"not read: {exc}")
        return res
    except Exception:   # the point of the corpus: a reader must never raise
        res.traceback = traceback.format_exc()
        res.why.append("traceback: " + res.traceback.strip().splitlines()[-1])
        return res
    res.findings = len(got.diags)
    bad = expected.get("verdict") == "bad"
    errors = [d for d in got.diags if getattr(d, "severity", Severity.ERROR) is Severity.ERROR]
    res.read = bad or not errors
    if not res.read:
        res.why.append("errors: " + " | ".join(getattr(d, "message", str(d))[:160] for d in errors[:3]))
    got.facts.setdefault("verdict", "bad" if errors else "ok")
    diff = [f"{k}: SOURCES {v!r}, rtc {got.facts.get(k)!r}" for k, v in expected.items()
            if got.facts.get(k) != v]
    res.facts_equal = bool(expected) and not diff
    if not expected:
        res.why.append("SOURCES.md row lists no facts")
    res.why += diff
    return res


def run(corpus: Path = CORPUS) -> tuple[list[FileResult], list[str]]:
    """Every file of every kind. Returns the per-file results and corpus-level problems
    (a kind folder without an adapter, files without rows, rows without files)."""
    results: list[FileResult] = []
    problems: list[str] = []
    known = {k for k, _, _ in ADAPTERS}
    for folder in sorted(p for p in corpus.iterdir() if p.is_dir()):
        if folder.name not in known:
            problems.append(f"{folder.name}: no adapter in tools/ecosystem.py ADAPTERS")
    for kind, adapter, _ in ADAPTERS:
        folder = corpus / kind
        if not folder.is_dir():
            continue
        rows, bad_rows = read_sources(folder)
        problems += [f"{kind}/{p}" for p in bad_rows]
        files = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != "SOURCES.md")
        problems += [f"{kind}/{n}: no SOURCES.md row" for n in files if n not in rows]
        problems += [f"{kind}/{n}: SOURCES.md row without a file" for n in rows if n not in files]
        for name in files:
            if name in rows:
                results.append(check_file(kind, adapter, folder / name, rows[name]))
    return results, problems


def summary(results: list[FileResult]) -> list[dict]:
    """Per-kind counts, in registry order, plus a total row."""
    rows = []
    for kind, _, reader in ADAPTERS:
        mine = [r for r in results if r.kind == kind]
        if mine:
            rows.append({"kind": kind, "files": len(mine), "read": sum(r.read for r in mine),
                         "facts": sum(r.facts_equal for r in mine),
                         "findings": sum(r.findings for r in mine),
                         "tracebacks": sum(r.traceback is not None for r in mine), "reader": reader})
    total = {k: sum(r[k] for r in rows) for k in ("files", "read", "facts", "findings", "tracebacks")}
    rows.append({"kind": f"total ({len(rows)} kinds)", **total, "reader": ""})
    return rows


def render(rows: list[dict]) -> str:
    out = ["| kind | files | read | facts equal | findings | tracebacks |", "|---|---:|---:|---:|---:|---:|"]
    out += [f"| {r['kind']} | {r['files']} | {r['read']} | {r['facts']} | {r['findings']} | "
            f"{r['tracebacks']} |" for r in rows]
    return "\n".join(out)


def failed(results: list[FileResult], problems: list[str]) -> bool:
    return bool(problems) or any(not (r.read and r.facts_equal) or r.traceback for r in results)


# -- mutations -----------------------------------------------------------------------------------

_TOKENS = ("N/A", "ERR!", "-1", "99999999999999999999", "X", "NV", "\x1b[4m", "\t", "", "null", "0x")


def mutate(text: str, rng) -> str:
    """One damaged variant of a capture, the way captures get damaged on their way to rtc:
    cut short, a line lost or doubled, lines swapped, CRLF, tabs <-> spaces, a token replaced
    (``N/A``, ``ERR!``, huge numbers, escapes), stray bytes inserted."""
    lines = text.split("\n")
    op = rng.randrange(9)
    if op == 0:
        return text[:rng.randrange(len(text) + 1)]
    if op in (1, 2) and lines:
        i = rng.randrange(len(lines))
        return "\n".join(lines[:i] + lines[i + 1:] if op == 1 else lines[:i + 1] + lines[i:])
    if op == 3 and len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if op == 4:
        return text.replace("\n", "\r\n")
    if op == 5:
        return text.replace("\t", "    ") if "\t" in text else text.replace("  ", "\t")
    if op == 6:
        words = text.split(" ")
        i = rng.randrange(len(words))
        words[i] = rng.choice(_TOKENS)
        return " ".join(words)
    at = rng.randrange(len(text) + 1)
    junk = "".join(chr(rng.choice((0, 9, 27, 0xfeff, 0x3000, rng.randrange(32, 0x2fff))))
                   for _ in range(rng.randrange(1, 6)))
    return text[:at] + junk + text[at:]


def mutation_run(corpus: Path, per_kind: int, seed: int = 0, work: Path | None = None) -> dict:
    """``per_kind`` mutated variants of each kind's files (round robin), each read by the
    kind's adapter. Returns kind -> ``{"runs", "read", "unread", "tracebacks", "first"}``:
    read (the reader gave facts), unread (it said why not), tracebacks (a reader raised;
    ``first`` is the first traceback's last line and its input file)."""
    import random
    import tempfile

    rng = random.Random(seed)
    out: dict = {}
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        for kind, adapter, _ in ADAPTERS:
            folder = corpus / kind
            files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != "SOURCES.md") \
                if folder.is_dir() else []
            if not files:
                continue
            stats = {"runs": 0, "read": 0, "unread": 0, "tracebacks": 0, "first": None}
            for n in range(per_kind):
                src = files[n % len(files)]
                case = Path(tmp) / kind / f"{n:05d}" / src.name
                case.parent.mkdir(parents=True)
                case.write_text(mutate(src.read_text(encoding="utf-8", errors="replace"), rng),
                                encoding="utf-8", errors="surrogatepass")
                stats["runs"] += 1
                try:
                    adapter(case)
                    stats["read"] += 1
                except Unread:
                    stats["unread"] += 1
                except Exception:
                    stats["tracebacks"] += 1
                    if stats["first"] is None:
                        stats["first"] = (f"{src.name}: "
                                          + traceback.format_exc().strip().splitlines()[-1])
            out[kind] = stats
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--json", action="store_true", help="per-file results as JSON")
    ap.add_argument("--verbose", "-v", action="store_true", help="list every failing file")
    ap.add_argument("--mutate", type=int, metavar="N", default=0,
                    help="instead: read N damaged variants of each kind's files; exit 1 on a traceback")
    args = ap.parse_args(argv)
    if args.mutate:
        stats = mutation_run(args.corpus, args.mutate)
        print("| kind | mutated inputs | read | unread (said why) | tracebacks |")
        print("|---|---:|---:|---:|---:|")
        for kind, st in stats.items():
            print(f"| {kind} | {st['runs']} | {st['read']} | {st['unread']} | {st['tracebacks']} |")
            if st["first"]:
                print(f"  first traceback: {st['first']}")
        return 1 if any(st["tracebacks"] for st in stats.values()) else 0
    results, problems = run(args.corpus)
    if args.json:
        print(json.dumps({"summary": summary(results), "problems": problems,
                          "files": [r.__dict__ for r in results]}, indent=1))
    else:
        print(render(summary(results)))
        for p in problems:
            print(f"corpus: {p}")
        for r in results:
            if r.why or r.traceback:
                if args.verbose or r.traceback or not (r.read and r.facts_equal):
                    print(f"{r.kind}/{r.file}: " + "; ".join(r.why))
                if r.traceback and args.verbose:
                    print(r.traceback)
    return 1 if failed(results, problems) else 0


if __name__ == "__main__":
    sys.exit(main())
