"""The language reference, generated from the attribute table the parser uses.

:data:`rtc.syntax.schema.BLOCK_SPECS` says which attributes each block accepts and how each
is read; its :class:`~rtc.syntax.schema.AttrSpec` entries also carry what a reader needs
(value in words, default, what the attribute becomes in the outputs, an example). This
module turns that table into

* :func:`render_language_reference`: ``docs/language.md`` (Markdown), written with
  ``rtc explain --language-reference > docs/language.md`` (:data:`REGENERATE`);
  ``tests/syntax/test_language_reference.py`` fails when the file differs from this text, so the
  reference cannot drift from the parser;
* :func:`render_attribute_entry`: what ``rtc explain ATTRIBUTE`` prints.
"""

from __future__ import annotations

import textwrap

from rtc.syntax.schema import BLOCK_SPECS, AttrSpec, BlockSpec

#: The command that prints the reference, and the one that writes docs/language.md.
COMMAND = "rtc explain --language-reference"
REGENERATE = f"{COMMAND} > docs/language.md"

_INTRO = """\
An `.rtc` file is a list of blocks. A block is a kind, usually a name, and a body in
braces with one attribute per line: the attribute's name, then its value.

```text
server atlas-01 {
  host 10.0.0.6        # a comment runs to the end of the line
  devices 0..7
}
```

Values are words (`atlas-01`, `10.0.0.6`, `8.2.RC1`), double-quoted strings
(`"/models/DeepSeek-R1-W8A8"`; single quotes are an error), comma lists (`p1, p2`) and
`NAME = value` (in `env`). A line ending in `\\` continues on the next one.

* *Strings*: a string ends on its line and knows four escapes: `\\"` (a quote), `\\\\`
  (a backslash), `\\n` (a newline) and `\\t` (a tab). Any other backslash in a string
  (`\\u001b`, `\\d`) is an error (RTC119): write a literal backslash as `\\\\`
  (`"C:\\\\models"`). A bare word keeps its backslashes as written (`a\\b`). A tab may be
  written raw in a string; any other control character (ESC, BEL, DEL, C1) is an error
  (RTC119) in a string, a word or a key, as rtc would otherwise pass it to server_id,
  hccl.json and terminals. Between words, a tab or a form feed is a space.
* *Integers and ports*: decimal; ports are 1..65535.
* *Device sets*: ids and inclusive ranges, e.g. `0..7` or `0, 2, 4..7`.
* *Templates*: words with `{expression}` groups computed per server and device, e.g.
  `10.1.{i/256}.{i%256}`. Expressions use integers, `+ - * / %` (rounding towards minus
  infinity, as in Python) and parentheses over `i` (the member's number in a family:
  `node[5..7]` gives 5, 6, 7; 0 for a server), `d` (the device id) and `k` (the device's
  position); `{i:04}` zero-pads. Values computed once per server (`host`, `server_id`,
  `super_pod`, the START of `START step N`) use only `i`.
* *Address plans* (`device_ip`, `gateway`): a list with one address per device in device
  order, `START step N` (the device at position k gets START + k x N), a template in `d`
  or `k`, or `inventory` (the server's captures).

In the tables below, *default* is what rtc uses when the line is left out ("required":
leaving it out is an error); a *repeatable* attribute may be written on several lines,
which add up; any other attribute written twice is an error (RTC115). An attribute a block
does not accept is an error with the closest known one (RTC110). *Becomes* says where the
value ends up: the rank table (`hccl.json`), the environment files, the launch scripts, or
the checks. `rtc explain NAME` prints one attribute's entry (`rtc explain family` one block's);
`rtc explain RTC208` a rule."""

_LABELS = {
    "required": "{kind} NAME {{ ... }}",
    "optional": "{kind} [NAME] {{ ... }}",
    "family": "{kind} PREFIX[FIRST..LAST] {{ ... }}",
}


def label_form(kind: str, spec: BlockSpec) -> str:
    """How a block of ``kind`` opens, e.g. ``server NAME { ... }`` or
    ``family PREFIX[FIRST..LAST] { ... }``."""
    return _LABELS[spec.label].format(kind=kind)


def render_language_reference() -> str:
    """The whole language reference as Markdown (the text of ``docs/language.md``): a
    header saying how it is generated, an introduction to the syntax, then one section per
    block kind with its label form, description, example and attribute table."""
    lines = [f"<!-- Generated from rtc/syntax/schema.py (BLOCK_SPECS) by `{REGENERATE}`;",
             "     do not edit by hand: change the table and regenerate. -->", "",
             "# The rtc language", "",
             "The full reference, generated from the parser's attribute table "
             "(`rtc/syntax/schema.py`).", "", _INTRO, "", "Blocks:", ""]
    lines += [f"* [`{kind}`](#{kind}): {spec.doc}" for kind, spec in BLOCK_SPECS.items()]
    for kind, spec in BLOCK_SPECS.items():
        lines += [""] + _block_section(kind, spec)
    return "\n".join(lines) + "\n"


def _block_section(kind: str, spec: BlockSpec) -> list[str]:
    """The Markdown section of one block kind."""
    out = [f"## {kind}", "", f"`{label_form(kind, spec)}`", "", _sentence(spec.doc), ""]
    if spec.example:
        out += ["```text", spec.example, "```", ""]
    out += ["| attribute | meaning | value | default | repeatable | becomes | example |",
            "|---|---|---|---|---|---|---|"]
    out += [_row(name, a) for name, a in spec.attrs.items()]
    return out


def _row(name: str, a: AttrSpec) -> str:
    """One attribute as a table row."""
    cells = [f"`{name}`", a.doc, a.value, a.default or "none", "yes" if a.repeat else "no",
             a.becomes, f"`{a.example}`" if a.example else ""]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell (pipes escaped, one line)."""
    return " ".join(text.split()).replace("|", "\\|")


def _sentence(text: str) -> str:
    """``text`` with a capital letter and a full stop."""
    text = text.strip()
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def attribute_names() -> list[str]:
    """Every attribute name of every block, sorted, each once."""
    return sorted({name for spec in BLOCK_SPECS.values() for name in spec.attrs})


def attribute_entries(name: str) -> list[tuple[tuple[str, ...], AttrSpec]]:
    """The specs of attribute ``name``, each with the block kinds that accept it that way
    (``server`` and ``family`` share theirs), in table order; [] for an unknown name."""
    out: list[tuple[list[str], AttrSpec]] = []
    for kind, spec in BLOCK_SPECS.items():
        a = spec.attrs.get(name)
        if a is None:
            continue
        same = next((kinds for kinds, seen in out if seen == a), None)
        if same is not None:
            same.append(kind)
        else:
            out.append(([kind], a))
    return [(tuple(kinds), a) for kinds, a in out]


def render_attribute_entry(name: str, width: int = 88) -> str | None:
    """What ``rtc explain NAME`` prints for an attribute: for each way it is read, the
    blocks that accept it, its description, value, default, whether it repeats, what it
    becomes and an example (lines wrapped at ``width``). None for an unknown name."""
    entries = attribute_entries(name)
    if not entries:
        return None
    parts = [_entry_text(name, kinds, a, width) for kinds, a in entries]
    parts.append(f"The whole language: docs/language.md (`{COMMAND}`).")
    return "\n\n".join(parts) + "\n"


def render_block_entry(kind: str, width: int = 88) -> str | None:
    """What ``rtc explain KIND`` prints for a block keyword of the grammar (``cluster``,
    ``family``, ``job``, ``disaggregation``, ...): how the block opens, its description,
    the attributes it accepts and its example. None for a word that opens no block."""
    spec = BLOCK_SPECS.get(kind)
    if spec is None:
        return None
    lines = [f"{kind} (block)", "", _wrap(_sentence(spec.doc), width, "", ""), "",
             f"  opens with  {label_form(kind, spec)}",
             _wrap(", ".join(spec.attrs), width, "  attributes ", " " * 14)]
    if spec.example:
        lines += ["  example", *("    " + x for x in spec.example.splitlines())]
    lines += ["", f"One attribute: `rtc explain ATTRIBUTE`; the whole language: "
              f"docs/language.md (`{COMMAND}`)."]
    return "\n".join(lines) + "\n"


def _entry_text(name: str, kinds: tuple[str, ...], a: AttrSpec, width: int) -> str:
    """One reference entry of attribute ``name`` as plain text."""
    where = ", ".join(kinds)
    head = f"{name} (attribute of {'block' if len(kinds) == 1 else 'blocks'} {where})"
    fields = [("value", a.value), ("default", a.default or "none"),
              ("repeatable", "yes" if a.repeat else "no"), ("becomes", a.becomes),
              ("example", a.example)]
    lines = [head, "", _wrap(_sentence(a.doc), width, "", ""), ""]
    for label, text in fields:
        if text:
            lines.append(_wrap(text, width, f"  {label:<11} ", " " * 14))
    return "\n".join(lines)


def _wrap(text: str, width: int, first: str, rest: str) -> str:
    """``text`` wrapped at ``width`` without breaking words or flags at hyphens."""
    return textwrap.fill(" ".join(text.split()), width, initial_indent=first,
                         subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False)
