"""Parsers for ``npu-smi`` outputs.

* ``npu-smi info``: the box table. Per chip two rows,
  ``| <NPU> <Name> | <Health> | <Power> <Temp> ... |`` then
  ``| <Chip> [<Phy-ID>] | <Bus-Id> | ... |`` (A3 prints ``Chip  Phy-ID`` and two chips per NPU).
  The process table after it is ignored. -> :class:`NpuSmiInfo`.
* ``npu-smi info -t topo``: an N x N matrix with rows and columns ``NPU0..NPUn`` (A3 rows and
  columns may read ``Phy-ID<k>``), entries ``X HCCS HCCS_SW SIO PIX PXB PHB SYS NA`` and a
  trailing ``CPU Affinity`` column; a legend follows. -> :class:`TopoMatrix`.
* ``npu-smi info -m``: columns ``NPU ID  Chip ID  Chip Logic ID  Chip Name`` (910B lists an
  ``Mcu`` chip with logic id ``-``). -> :class:`ChipMap`.

Each parser finds its table anywhere in the text, so a mixed capture (several commands'
outputs in one file) works; ``lines`` on each result tells which lines the table took.

Rule ids used here:

* ``RTC486`` npu-smi output rtc cannot read or that contradicts itself: the table is missing
  (error), a row is cut short (error), an unknown link code, a row label outside the header,
  a non-square matrix, a diagonal entry other than ``X``, an asymmetric pair, a box-table chip
  row without its second row (warnings). Why: topology-aware checks (HCCS groups, SIO pairs)
  rely on the matrix and chip list. Fix: re-capture the raw command output into its own file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Related, Span, error, warning

from ._common import Fact, ascii_int, display_name, read_text, short_text, split_lines, value_span
from rtc.inventory.rules import NPU_SMI_UNREADABLE

#: Link codes of ``npu-smi info -t topo`` (``PIB`` is reserved in the ACL API).
LINK_CODES = ("X", "HCCS", "HCCS_SW", "SIO", "PIX", "PXB", "PIB", "PHB", "SYS", "NA")
#: The codes of links HCCL's intra-server algorithms run over at HCCS speed: HCCS, HCCS
#: through the A3 switches, and SIO between the two dies of one A3 chip (reference
#: ranktable-formats.md 6.3; ``aclrtGetDevicesTopo`` ACL_RT_DEVS_TOPOLOGY_HCCS / HCCS_SW /
#: SIO). Every other code (PIX, PXB, PIB, PHB, SYS) is a PCIe path through switches or the
#: CPU; NA is unknown.
HCCS_CODES = ("HCCS", "HCCS_SW", "SIO")

#: a matrix label; its number is 1 to 20 ASCII digits (\d would take a fullwidth '８', and a
#: 5,000-digit label would reach int()): another label ends the matrix, like other text
_LABEL = re.compile(r"^(?P<prefix>NPU|Phy-?ID|Chip|Card|Die|Dev(?:ice)?)[-_]?(?P<n>[0-9]{1,20})$", re.I)
_BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")
_SEPARATOR = re.compile(r"^\s*\+[-=+]*\+?\s*$")
_VERSION = re.compile(r"npu-smi\s+(?P<tool>\S+)\s+Version:\s*(?P<v>\S+)", re.I)

#: command -> (what its output is called, what rtc looks for, what is unknown without it): the
#: RTC486 error each parser reports when it finds no output of its command
_NOT_FOUND = {
    "npu-smi info -t topo": ("matrix", "expected a header row 'NPU0 NPU1 ... CPU Affinity' and one row per NPU",
                             "the intra-server links are unknown"),
    "npu-smi info -m": ("table", "expected a header 'NPU ID  Chip ID  Chip Logic ID  Chip Name'",
                        "the chip numbering is unknown"),
    "npu-smi info": ("table", "expected a '| NPU  Name | Health | ...' header",
                     "chip names and health are unknown"),
}


def _not_found(file: str, command: str) -> list[Diagnostic]:
    """The RTC486 error for a capture that holds no output of ``command``."""
    kind, expected, unknown = _NOT_FOUND[command]
    return [error(
        NPU_SMI_UNREADABLE,
        f"no '{command}' {kind} found in {display_name(file)} ({expected}); {unknown}",
        Span.whole_file(file),
        hint=f"save the raw output of `{command}` into its own file",
    )]


# -- npu-smi info -t topo ----------------------------------------------------------------------

@dataclass
class TopoMatrix:
    """``npu-smi info -t topo``. ``ids`` are the numbers of the column labels in order;
    ``links[(a, b)]`` is a Fact holding the code (upper-case) of the path from ``a`` to ``b``;
    ``extra[name][a]`` holds trailing columns (``CPU Affinity``)."""

    file: str
    labels: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    links: dict[tuple[int, int], Fact] = field(default_factory=dict)
    extra: dict[str, dict[int, Fact]] = field(default_factory=dict)
    row_spans: dict[int, Span] = field(default_factory=dict)
    lines: range = range(0)

    def link(self, a: int, b: int) -> str | None:
        f = self.links.get((a, b))
        return None if f is None else f.value

    @property
    def cpu_affinity(self) -> dict[int, str]:
        return {k: f.value for k, f in self.extra.get("CPU Affinity", {}).items()}

    def peers(self, a: int, code: str) -> list[int]:
        """Devices ``a`` reaches over ``code`` (e.g. all HCCS peers of NPU0)."""
        return [b for b in self.ids if b != a and self.link(a, b) == code]

    def hccs_islands(self) -> list[tuple[int, ...]]:
        """The NPUs joined by HCCS-class links, as connected components (each sorted,
        ordered by their first id): pairs whose code is in :data:`HCCS_CODES` (``HCCS``,
        ``HCCS_SW`` through the A3 switches, ``SIO`` between the dies of one A3 chip)
        are joined; ``PIX`` / ``PXB`` / ``PHB`` / ``SYS`` (PCIe, the CPU) and ``NA`` are
        not. A 910B server is one island of 8, a 910A server two of 4 (0-3, 4-7), a box
        whose NPUs see each other only over PCIe is 8 islands of one."""
        parent = {i: i for i in self.ids}

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for (a, b), f in self.links.items():
            if a != b and a in parent and b in parent and f.value in HCCS_CODES:
                parent[root(a)] = root(b)
        groups: dict[int, list[int]] = {}
        for i in self.ids:
            groups.setdefault(root(i), []).append(i)
        return sorted((tuple(sorted(g)) for g in groups.values()), key=lambda g: g[0])


def _tokens(line: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group()) for m in re.finditer(r"\S+", line)]


def _topo_header(line: str) -> tuple[list[tuple[int, str]], list[str]] | None:
    toks = _tokens(line)
    labels = []
    for pos, tok in toks:
        if _LABEL.match(tok):
            labels.append((pos, tok))
        else:
            break
    if not labels:
        return None
    rest_start = toks[len(labels)][0] if len(toks) > len(labels) else len(line)
    rest = line[rest_start:].strip()
    extras = [c.strip() for c in re.split(r"\s{2,}", rest) if c.strip()] if rest else []
    if not extras and len(labels) < 2:
        return None
    if extras and not all("affinity" in e.lower() or "numa" in e.lower() for e in extras):
        return None
    return labels, extras


def find_topo(lines: list[str]) -> int | None:
    """Index of the header line of a topo matrix in ``lines``, or None."""
    for i, line in enumerate(lines[:-1]):
        nxt = lines[i + 1].split()
        if nxt and _LABEL.match(nxt[0]) and _topo_header(line) is not None:
            return i
    return None


def parse_npu_smi_topo(text: str, file: str = "<npu-smi topo>") -> tuple[TopoMatrix | None, list[Diagnostic]]:
    """Parse ``npu-smi info -t topo`` output. None (and an RTC486 error) when no matrix is found."""
    lines = split_lines(text)
    start = find_topo(lines)
    if start is None:
        return None, _not_found(file, "npu-smi info -t topo")
    labels, extras = _topo_header(lines[start])
    topo = TopoMatrix(file, [t for _, t in labels], [int(_LABEL.match(t).group("n")) for _, t in labels])
    for e in extras:
        topo.extra[e] = {}
    diags: list[Diagnostic] = []
    end = start + 1
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            break
        lm = _LABEL.match(_tokens(line)[0][1])
        if not lm:
            break
        end = i + 1
        diags += _topo_row(topo, extras, int(lm.group("n")), line, i + 1)
    topo.lines = range(start + 1, end + 1)
    diags += _topo_square(topo, start + 1)
    diags += _topo_pairs(topo)
    return topo, diags


def _topo_source(topo: TopoMatrix, no: int) -> str:
    """The Fact.source of a value read from line ``no`` of the matrix."""
    return f"npu-smi info -t topo ({display_name(topo.file)}:{no})"


def _topo_row(topo: TopoMatrix, extras: list[str], row: int, line: str, no: int) -> list[Diagnostic]:
    """Read the matrix row of NPU ``row`` (``NPU3  HCCS  X ...  0-23``, line ``no``) into
    ``topo``: one link per column, then the ``extras`` columns; its problems."""
    file, name = topo.file, display_name(topo.file)
    toks = _tokens(line)
    label_pos, label = toks[0]
    n = len(topo.ids)
    diags: list[Diagnostic] = []
    topo.row_spans[row] = value_span(file, no, label_pos, len(label))
    if row not in topo.ids:
        diags.append(warning(
            NPU_SMI_UNREADABLE,
            f"row '{label}' of the topo matrix in {name} has no column of its own "
            f"(columns: {' '.join(topo.labels)}); its links are kept but may be misread",
            topo.row_spans[row],
            hint="re-capture `npu-smi info -t topo` unedited",
        ))
    cells = toks[1:1 + n]
    if len(cells) < n:
        diags.append(error(
            NPU_SMI_UNREADABLE,
            f"row '{label}' of the topo matrix in {name} has {len(cells)} entries for "
            f"{n} columns; the links of this NPU are unknown",
            Span(file, no, label_pos + 1, no, len(line.rstrip()) + 1),
            hint="re-capture `npu-smi info -t topo`; the row was probably cut or wrapped",
        ))
        return diags
    diags += _topo_links(topo, row, label, cells, no)
    _topo_extras(topo, extras, row, toks[1 + n:], line, no)
    return diags


def _topo_links(topo: TopoMatrix, row: int, label: str, cells: list[tuple[int, str]],
                no: int) -> list[Diagnostic]:
    """Keep the link codes of row ``row`` (one cell per column); warn about unknown codes,
    which are kept as written."""
    diags: list[Diagnostic] = []
    for col, (pos, code) in zip(topo.ids, cells):
        value = code.upper()
        span = value_span(topo.file, no, pos, len(code))
        if value not in LINK_CODES:
            diags.append(warning(
                NPU_SMI_UNREADABLE,
                f"unknown link code '{code}' between {label} and {topo.labels[topo.ids.index(col)]} "
                f"in {display_name(topo.file)}; rtc cannot tell which fabric joins them",
                span,
                hint="known codes: " + ", ".join(LINK_CODES) + "; check for a typo or a newer npu-smi",
            ))
            value = code
        topo.links[(row, col)] = Fact(value, span, _topo_source(topo, no))
    return diags


def _topo_extras(topo: TopoMatrix, extras: list[str], row: int, rest: list[tuple[int, str]],
                 line: str, no: int) -> None:
    """Keep the trailing columns (``CPU Affinity``) of row ``row``: one token per column,
    whatever is left joins the last one."""
    if not extras or not rest:
        return
    for k, e in enumerate(extras):
        if k >= len(rest):
            break
        if k == len(extras) - 1:
            pos = rest[k][0]
            val = line[pos:].strip()
        else:
            pos, val = rest[k]
        topo.extra[e][row] = Fact(val, value_span(topo.file, no, pos, len(val)), _topo_source(topo, no))


def _topo_square(topo: TopoMatrix, header_no: int) -> list[Diagnostic]:
    """Warn when the rows are not the columns (the matrix is not square)."""
    rows = sorted(topo.row_spans)
    if not rows or rows == sorted(topo.ids):
        return []
    return [warning(
        NPU_SMI_UNREADABLE,
        f"the topo matrix in {display_name(topo.file)} has rows {rows} but columns {topo.ids}; "
        "it is not square, so some links are unknown",
        Span(topo.file, header_no, 1),
        hint="re-capture `npu-smi info -t topo` unedited",
    )]


def _topo_pairs(topo: TopoMatrix) -> list[Diagnostic]:
    """Warn about a diagonal entry other than ``X`` and about pairs that differ by direction."""
    name = display_name(topo.file)
    diags: list[Diagnostic] = []
    for (a, b), f in sorted(topo.links.items()):
        if a == b and f.value != "X":
            diags.append(warning(
                NPU_SMI_UNREADABLE,
                f"diagonal entry {a},{a} of the topo matrix in {name} is '{f.value}', not 'X' "
                "(self); the rows or columns are probably shifted",
                f.span, hint="re-capture `npu-smi info -t topo` unedited",
            ))
        elif a < b and (b, a) in topo.links and topo.links[(b, a)].value != f.value:
            g = topo.links[(b, a)]
            diags.append(warning(
                NPU_SMI_UNREADABLE,
                f"the topo matrix in {name} is not symmetric: {a}->{b} is '{f.value}' but "
                f"{b}->{a} is '{g.value}'; one of them is wrong",
                f.span, hint="re-capture `npu-smi info -t topo` unedited",
                related=[Related(g.span, f"{b}->{a}")],
            ))
    return diags


# -- npu-smi info -m -------------------------------------------------------------------------

@dataclass(frozen=True)
class ChipMapEntry:
    """One row of ``npu-smi info -m``. ``logic_id`` is None for ``-`` (e.g. the ``Mcu``);
    ``phy_id`` only when the output has a ``Chip Phy-ID`` column."""

    npu_id: int
    chip_id: int
    logic_id: int | None
    name: str
    span: Span
    phy_id: int | None = None


@dataclass
class ChipMap:
    file: str
    entries: list[ChipMapEntry] = field(default_factory=list)
    lines: range = range(0)

    @property
    def accelerators(self) -> list[ChipMapEntry]:
        """The chips with a logic id (NPUs/dies; not the Mcu)."""
        return [e for e in self.entries if e.logic_id is not None]

    def by_logic_id(self) -> dict[int, ChipMapEntry]:
        return {e.logic_id: e for e in self.accelerators}


def find_chip_map(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        low = " ".join(line.split()).lower()
        if low.startswith("npu id") and "chip logic id" in low and "chip name" in low:
            return i
    return None


def parse_npu_smi_chip_map(text: str, file: str = "<npu-smi info -m>") -> tuple[ChipMap | None, list[Diagnostic]]:
    """Parse ``npu-smi info -m`` output. None (and an RTC486 error) when no table is found."""
    lines = split_lines(text)
    start = find_chip_map(lines)
    if start is None:
        return None, _not_found(file, "npu-smi info -m")
    cols = [c.strip().lower() for c in re.split(r"\s{2,}|\t", lines[start].strip()) if c.strip()]
    numeric = cols[:-1]
    cmap = ChipMap(file)
    diags: list[Diagnostic] = []
    end = start + 1
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            if end > start + 1:
                break
            continue
        toks = _tokens(line)
        if len(toks) <= len(numeric) or not toks[0][1].isdigit():
            break
        end = i + 1
        entry, problem = _chip_map_row(file, numeric, line, i + 1, toks)
        if problem is not None:
            diags.append(problem)
        if entry is not None:
            cmap.entries.append(entry)
    cmap.lines = range(start + 1, end + 1)
    if not cmap.entries:
        diags.append(error(
            NPU_SMI_UNREADABLE,
            f"the npu-smi -m table in {display_name(file)} has a header but no chip rows; "
            "the chip numbering is unknown",
            Span(file, start + 1, 1),
            hint="re-capture `npu-smi info -m` on a host where the driver sees the NPUs",
        ))
    return cmap, diags


def _chip_map_row(file: str, numeric: list[str], line: str, no: int,
                  toks: list[tuple[int, str]]) -> tuple[ChipMapEntry | None, Diagnostic | None]:
    """One row of the ``-m`` table: a number (or ``-``) per ``numeric`` column, then the chip
    name. No entry for a row without NPU or chip id, nor (with an error) for a cell that is
    not a number."""
    vals: dict[str, int | None] = {}
    for col, (pos, tok) in zip(numeric, toks):
        value = ascii_int(tok)
        if value is not None:
            vals[col] = value
        elif tok == "-":
            vals[col] = None
        else:                   # a word, a '²' or '８', a 5,000-digit number
            return None, error(
                NPU_SMI_UNREADABLE,
                f"'{short_text(tok)}' in column '{col}' of the npu-smi -m table in "
                f"{display_name(file)} is not a number (ASCII digits 0-9, at most 20); this "
                "chip is left out",
                value_span(file, no, pos, len(tok)),
                hint="re-capture `npu-smi info -m` unedited",
            )
    if vals.get("npu id") is None or vals.get("chip id") is None:
        return None, None
    chip_name = line[toks[len(numeric)][0]:].strip()
    return ChipMapEntry(vals["npu id"], vals["chip id"], vals.get("chip logic id"), chip_name,
                        Span(file, no, toks[0][0] + 1, no, len(line.rstrip()) + 1),
                        vals.get("chip phy-id", vals.get("chip phy id"))), None


# -- npu-smi info (box table) ------------------------------------------------------------------

@dataclass(frozen=True)
class NpuChip:
    """One chip of the ``npu-smi info`` box table. ``name`` (e.g. ``910B2``), ``health``
    (``OK``, ``Warning``, ``Alarm``, ``Critical`` ...) and ``bus_id`` are Facts; ``phy_id``
    is set on A3 (``Chip  Phy-ID`` column)."""

    npu_id: int
    name: Fact
    health: Fact
    chip_id: int | None
    phy_id: int | None
    bus_id: Fact | None
    span: Span


@dataclass
class NpuSmiInfo:
    file: str
    version: str | None = None
    chips: list[NpuChip] = field(default_factory=list)
    lines: range = range(0)

    @property
    def npu_ids(self) -> list[int]:
        return sorted({c.npu_id for c in self.chips})


def _cells(line: str) -> list[tuple[int, str]]:
    """Cells of a ``| a | b |`` row as (0-based start of the stripped text, text)."""
    bars = [i for i, ch in enumerate(line) if ch == "|"]
    out = []
    for a, b in zip(bars, bars[1:]):
        raw = line[a + 1:b]
        lead = len(raw) - len(raw.lstrip())
        out.append((a + 1 + lead, raw.strip()))
    return out


def find_box_table(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if line.lstrip().startswith("|"):
            cells = [t for _, t in _cells(line)]
            if len(cells) >= 2 and re.match(r"^NPU\s+Name\b", cells[0]) and cells[1].startswith("Health"):
                return i
    return None


def parse_npu_smi_info(text: str, file: str = "<npu-smi info>") -> tuple[NpuSmiInfo | None, list[Diagnostic]]:
    """Parse the ``npu-smi info`` box table. None (and an RTC486 error) when there is none."""
    lines = split_lines(text)
    start = find_box_table(lines)
    if start is None:
        return None, _not_found(file, "npu-smi info")
    info = NpuSmiInfo(file, _box_version(lines, start))
    reader = _BoxTableReader(info)
    end = start + 1
    for i in range(start + 1, len(lines)):
        kind = _box_row_kind(lines[i])
        if kind == "end":
            break
        if kind in ("border", "header", "row"):
            end = i + 1
        if kind == "row" and not reader.row(lines[i], i + 1):
            break
    reader.flush_pending()
    info.lines = range(_box_top(lines, start) + 1, end + 1)
    if not info.chips:
        reader.diags.append(error(
            NPU_SMI_UNREADABLE,
            f"the npu-smi info table in {reader.name} lists no NPUs; chip names and health are unknown",
            Span(file, start + 1, 1),
            hint="check that the driver sees the NPUs (npu-smi info on the host) and re-capture",
        ))
    return info, reader.diags


def _box_version(lines: list[str], start: int) -> str | None:
    """The npu-smi ``Version:`` in the rows just above the header at ``start`` (the last one)."""
    version = None
    for line in lines[max(0, start - 6):start]:
        vm = _VERSION.search(line)
        if vm:
            version = vm.group("v")
    return version


def _box_top(lines: list[str], start: int) -> int:
    """Index of the table's first line: the border and version rows above the header count."""
    top = start
    while top > 0 and lines[top - 1].lstrip().startswith(("+", "|")):
        top -= 1
    return top


#: Lines that stand for rows left out where a capture was pasted into a document.
_ELISIONS = ("...", "\u2026", "......")
#: The Bus-Id cell of a chip whose bus id the driver does not report (Atlas 300 / 310 cards).
_NO_BUS_ID = ("NA", "N/A", "-")


def _box_row_kind(line: str) -> str:
    """How a line after the header counts: ``"blank"`` (also ``...``, rows elided in a
    document) and ``"short"`` (fewer than two cells) are passed over, ``"border"`` and ``"header"`` (the ``Chip`` row) belong to the table,
    ``"row"`` is a data row and ``"end"`` (text, the process table) ends it."""
    s = line.strip()
    if not s or s in _ELISIONS:
        return "blank"        # an empty line, or rows a document elided ("...")
    if _SEPARATOR.match(line):
        return "border"
    if not s.startswith("|"):
        return "end"
    texts = [t for _, t in _cells(line)]
    if any(t.startswith(("Process id", "Process name")) for t in texts):
        return "end"
    if len(texts) < 2:
        return "short"
    if texts[0].startswith("Chip") and not texts[0][:1].isdigit():
        return "header"
    return "row"


class _BoxTableReader:
    """Reads the data rows of a box table into ``info``: an NPU row (``| 0  910B2 | OK |``)
    waits in ``pending`` until the chip row after it (``| 0  | 0000:C1:00.0 |``) completes it."""

    def __init__(self, info: NpuSmiInfo):
        self.info = info
        self.name = display_name(info.file)
        self.diags: list[Diagnostic] = []
        self.pending: tuple[int, Fact, Fact, Span] | None = None

    def row(self, line: str, no: int) -> bool:
        """Read one data row; False when it ends the table (``No running processes``)."""
        cells = _cells(line)
        first_pos, first = cells[0]
        bm = re.fullmatch(r"([0-9]{1,20})(?:\s+([0-9]{1,20}))?", first)
        if bm and (_BUS_ID.match(cells[1][1]) or cells[1][1] in _NO_BUS_ID):
            self.chip_row(bm, first_pos, cells[1], no)
            return True
        am = re.fullmatch(r"([0-9]{1,20})\s+(\S.*)", first)
        if am:
            self.npu_row(am, cells, line, no)
            return True
        return "no running processes" not in line.strip().lower()

    def npu_row(self, am: re.Match, cells: list[tuple[int, str]], line: str, no: int) -> None:
        """``| <NPU> <Name> | <Health> | ...``: the first row of a chip."""
        self.flush_pending()
        (first_pos, _), (second_pos, second) = cells[0], cells[1]
        nm = am.group(2)
        src = f"npu-smi info ({self.name}:{no})"
        nfact = Fact(nm, value_span(self.info.file, no, first_pos + am.start(2), len(nm)), src)
        hfact = Fact(second, value_span(self.info.file, no, second_pos, len(second)), src)
        self.pending = (int(am.group(1)), nfact, hfact,
                        Span(self.info.file, no, first_pos + 1, no, len(line.rstrip()) + 1))

    def chip_row(self, bm: re.Match, first_pos: int, bus_cell: tuple[int, str], no: int) -> None:
        """``| <Chip> [<Phy-ID>] | <Bus-Id> | ...``: completes the pending NPU row."""
        file = self.info.file
        if self.pending is None:
            self.diags.append(warning(
                NPU_SMI_UNREADABLE,
                f"chip row at line {no} of {self.name} has no NPU row before it; it is ignored",
                Span(file, no, first_pos + 1), hint="re-capture `npu-smi info` unedited",
            ))
            return
        npu, nfact, hfact, span = self.pending
        self.pending = None
        bus_pos, bus_id = bus_cell
        bus = None if bus_id in _NO_BUS_ID else Fact(
            bus_id, value_span(file, no, bus_pos, len(bus_id)), f"npu-smi info ({self.name}:{no})")
        phy = int(bm.group(2)) if bm.group(2) else None
        self.info.chips.append(NpuChip(npu, nfact, hfact, int(bm.group(1)), phy, bus, span))

    def flush_pending(self) -> None:
        """Keep an NPU row that no chip row followed (chip and bus id unknown), with a warning."""
        if self.pending is None:
            return
        npu, nfact, hfact, span = self.pending
        self.diags.append(warning(
            NPU_SMI_UNREADABLE,
            f"NPU {npu} in the npu-smi info table of {self.name} has no chip row (Chip / Bus-Id) "
            "after it; its chip and bus id are unknown",
            span, hint="re-capture `npu-smi info` unedited",
        ))
        self.info.chips.append(NpuChip(npu, nfact, hfact, None, None, None, span))
        self.pending = None


# -- files -------------------------------------------------------------------------------------

def _load(parse, path, file):
    label = file if file is not None else os.fspath(path)
    text, diags = read_text(path, label)
    if text is None:
        return None, diags
    res, more = parse(text, label)
    return res, diags + more


def load_npu_smi_topo(path: str | os.PathLike, file: str | None = None) -> tuple[TopoMatrix | None, list[Diagnostic]]:
    return _load(parse_npu_smi_topo, path, file)


def load_npu_smi_chip_map(path: str | os.PathLike, file: str | None = None) -> tuple[ChipMap | None, list[Diagnostic]]:
    return _load(parse_npu_smi_chip_map, path, file)


def load_npu_smi_info(path: str | os.PathLike, file: str | None = None) -> tuple[NpuSmiInfo | None, list[Diagnostic]]:
    return _load(parse_npu_smi_info, path, file)
