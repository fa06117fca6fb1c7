"""Typed values of the rtc language: templates, address plans, device sets, family names.

Templates are words with ``{expression}`` groups, e.g. ``10.1.{i/256}.{i%256}``. An
expression uses integers, ``+ - * / %`` and parentheses (``/`` is integer division, as
in the issue's ``{i/256}``) over these variables:

* ``i`` -- the server's index in its family (the number in its name, ``node[0..1023]``);
  0 for a plain server;
* ``d`` -- the physical device id (``device_id``);
* ``k`` -- the device's position in the server's device list (0, 1, ...).

An optional zero-padded width follows a colon: ``node-{i:04}`` gives ``node-0007``.
"""

from __future__ import annotations

import ast as pyast
import functools
import ipaddress
import re
import unicodedata
from ipaddress import IPv4Address
from dataclasses import dataclass
from typing import Callable, NamedTuple

from rtc.diagnostics import Span
from rtc.rules import rule

BAD_IP = rule("RTC111", "bad-ip-literal", "error", "A word is not a valid IP address.", """
    What: an address such as `10.0.0.256`, `10.0.0`, or a placeholder `-.-.-.-`.
    Why: HCCL parses every address in the rank table; a bad one stops communicator setup,
    and a placeholder means the real address was never filled in.
    Example: `host 10.0.0.300`.
    Fix: write the real address (device IPs come from `hccn_tool -i N -ip -g`).""")
BAD_RANGE = rule("RTC112", "bad-range", "error", "A range or device set is malformed.", """
    What: `7..0` (backwards), `0..` or `0-7` (use two dots), a family name without `[a..b]`.
    Why: the set of devices or servers would be ambiguous.
    Example: `devices 7..0`.
    Fix: write inclusive ranges FIRST..LAST, e.g. `devices 0..7`.""")
BAD_TEMPLATE = rule("RTC113", "bad-template", "error", "A {template} expression is invalid.", """
    What: a `{...}` group that is not integer arithmetic over i, d, k, or divides by zero.
    Why: addresses and ids computed from templates must be exact.
    Example: `host 10.1.{j/256}.1` (unknown variable j).
    Fix: use i (server index), d (device id), k (device position), + - * / % and ( ).""")
BAD_VALUE = rule("RTC114", "bad-value", "error", "An attribute's value has the wrong form.", """
    What: a value that is not one of the allowed words or not a number where one is needed.
    Why: rtc would otherwise guess, and a guessed plan is worse than none.
    Example: `tp eight`, `expert_parallel maybe`, `role server`.
    Fix: follow the hint, which lists what the attribute accepts.""")

VARIABLES = ("i", "d", "k")
MAX_EXPRESSION_CHARS = 200  # longer formulas are mistakes (and deep ones exhaust the parser)
MAX_PAD_WIDTH = 32          # `{i:04}`: wider pads are mistakes (and huge ones exhaust memory)


class ValueProblem(Exception):
    """A word that does not mean what its attribute needs. Carries the rule id, the span
    (narrowed to the offending part when possible) and a hint."""

    def __init__(self, code, message: str, span: Span, hint: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.span = span
        self.hint = hint


#: Longest number rtc reads from user text: more digits is a mistake (and int() refuses
#: more than 4,300 digits).
MAX_DIGITS = 20


def ascii_int(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """The value of ``text`` when it is 1 to ``max_digits`` ASCII digits 0-9, else None.
    ``str.isdigit()``, ``\\d`` and ``int()`` also take Unicode digits (superscript '²',
    fullwidth '８', Arabic-Indic '٨'); this never does, and never calls ``int()`` on a
    huge string."""
    if 0 < len(text) <= max_digits and text.isascii() and text.isdigit():
        return int(text)
    return None


def non_ascii_digit_hint(text: str) -> str | None:
    """A hint for ``text`` when it holds a digit that is not ASCII 0-9 (``'８'``, ``'²'``),
    with the ASCII spelling when there is one; None when it holds none."""
    odd = next((ch for ch in text if ch.isdigit() and not ch.isascii()), None)
    if odd is None:
        return None
    ascii_text = "".join(str(unicodedata.digit(ch, "")) if ch.isdigit() and not ch.isascii()
                         else ch for ch in text)
    fix = f", here {ascii_text}" if ascii_text.isascii() and len(ascii_text) <= 40 else ""
    return (f"{show_text(odd)} (U+{ord(odd):04X}) is not an ASCII digit: write ASCII digits "
            f"(0-9){fix}")


def short_text(text: str, limit: int = 40) -> str:
    """``text`` for a message, cut to ``limit`` characters with its length when longer."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def show_text(text: str) -> str:
    """``text`` quoted for a message; invisible or control characters (a byte order
    mark, a zero-width space, a tab) are shown escaped, never raw."""
    if all(ch.isprintable() for ch in text):
        return f"'{text}'"
    return "'" + "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                         for ch in text) + "'"


_ALLOWED_NODES = (pyast.Expression, pyast.BinOp, pyast.UnaryOp, pyast.Constant, pyast.Name,
                  pyast.Load, pyast.Add, pyast.Sub, pyast.Mult, pyast.Div, pyast.FloorDiv,
                  pyast.Mod, pyast.USub, pyast.UAdd)


_NO_BUILTINS: dict = {"__builtins__": {}}


class _IntDiv(pyast.NodeTransformer):
    def visit_BinOp(self, node):  # noqa: N802 - ast API
        self.generic_visit(node)
        if isinstance(node.op, pyast.Div):
            node.op = pyast.FloorDiv()
        return node


def _sub_span(span: Span, offset: int, length: int) -> Span:
    col = span.column + offset
    return Span(span.file, span.line, col, span.line, col + max(1, length))


class Group(NamedTuple):
    """One compiled ``{expression}`` group of a template.

    ``fn(env) -> int`` evaluates it; ``variables`` are the names it uses; ``width`` is the
    zero-pad width (0 for none); ``expr`` is the source text between the braces; ``body``
    is the vetted Python expression AST (``/`` already turned into ``//``), from which
    :attr:`Template.ipv4_octets` builds its arithmetic form."""

    fn: Callable[[dict], int]
    width: int
    expr: str
    variables: frozenset
    body: pyast.expr


def _check_ascii_expression(expr: str, span: Span, code) -> None:
    """Raise :class:`ValueProblem` when a ``{...}`` expression holds a character that is not
    ASCII: Python would read a fullwidth 'ｉ' as i, and no expression needs one."""
    odd = next((ch for ch in expr if not ch.isascii()), None)
    if odd is None:
        return
    raise ValueProblem(code, f"template expression '{{{expr}}}' has the character "
                       f"{show_text(odd)} (U+{ord(odd):04X}), which is not ASCII", span,
                       non_ascii_digit_hint(expr) or "write the expression in ASCII: i, d, "
                       "k, the digits 0-9, + - * / % and parentheses, e.g. {i/256}")


def compile_group(expr: str, span: Span, code: str) -> Group:
    """Compile one ``{...}`` expression into a :class:`Group`. Raises
    :class:`ValueProblem` with ``code`` on bad syntax or names."""
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise ValueProblem(code, f"template expression of {len(expr)} characters is too long "
                           f"(at most {MAX_EXPRESSION_CHARS})", span,
                           "templates are short formulas such as {i/256} or {(i%16)*16 + 2*d + 1}")
    _check_ascii_expression(expr, span, code)
    width = 0
    body = expr
    m = re.fullmatch(r"(.*?):([0-9]+)", expr)
    if m:
        body, width = m.group(1), ascii_int(m.group(2))
        if width is None or width > MAX_PAD_WIDTH:
            raise ValueProblem(code, f"pad width {short_text(m.group(2), 12)} in "
                               f"'{{{short_text(expr)}}}' is too large (at most "
                               f"{MAX_PAD_WIDTH})", span, "a pad width gives the digits of a "
                               "name part, e.g. node-{i:04}")
    odd_number = re.search(r"(?<![A-Za-z0-9_.])(0[0-9]|0[xXbBoO]|[0-9]+_[0-9])", body)
    if odd_number:
        raise ValueProblem(code, f"template expression '{{{expr}}}' writes a number as "
                           f"'{odd_number.group(0)}...': numbers are plain decimals", span,
                           "write integers without leading zeros, prefixes (0x, 0b, 0o) or '_', "
                           "e.g. {i*16 + 1}")
    try:
        tree = pyast.parse(body.strip(), mode="eval")
    except SyntaxError:
        raise ValueProblem(code, f"bad template expression '{{{expr}}}'", span,
                           "use integers, i, d, k, + - * / % and parentheses, e.g. {i/256}")
    names = set()
    for node in pyast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise ValueProblem(code, f"template expression '{{{expr}}}' uses something other than "
                               "integers, variables and + - * / %", span,
                               "allowed: i (server index), d (device id), k (device position)")
        if isinstance(node, pyast.Constant) and not isinstance(node.value, int):
            raise ValueProblem(code, f"template expression '{{{expr}}}' may only use integers", span)
        if isinstance(node, pyast.Name):
            if node.id not in VARIABLES:
                raise ValueProblem(code, f"unknown variable '{node.id}' in template '{{{expr}}}'",
                                   span, "variables: i (server index in its family), "
                                   "d (device id), k (device position in the server)")
            names.add(node.id)
    tree = pyast.fix_missing_locations(_IntDiv().visit(tree))
    compiled = compile(tree, "<rtc-template>", "eval")

    def run(env: dict) -> int:
        return eval(compiled, _NO_BUILTINS, env)  # noqa: S307 - vetted AST above

    return Group(run, width, expr, frozenset(names), tree.body)


@dataclass(frozen=True)
class Template:
    """A word with optional ``{expression}`` groups. ``render(i=, d=, k=)`` gives the text.

    Raises :class:`ValueProblem` from :meth:`render` on division by zero."""

    text: str
    span: Span
    parts: tuple  # str | Group
    variables: frozenset

    @property
    def is_constant(self) -> bool:
        return not self.variables and all(isinstance(p, str) for p in self.parts)

    def render(self, **env: int) -> str:
        return self.render_env(env)

    def render_env(self, env: dict) -> str:
        """:meth:`render` with the variables in a dict (no keyword packing per call)."""
        if len(self.parts) == 1 and isinstance(self.parts[0], str):
            return self.parts[0]
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            fn, width, expr = part.fn, part.width, part.expr
            try:
                value = fn(env)
            except ZeroDivisionError:
                shown = ", ".join(f"{k}={v}" for k, v in env.items() if k in part.variables)
                raise ValueProblem(BAD_TEMPLATE, f"template '{{{expr}}}' divides by zero"
                                   + (f" ({shown})" if shown else ""), self.span,
                                   "change the divisor (or the modulus) so it is never 0 for "
                                   "any server or device, e.g. {i/256}")
            except NameError as exc:
                var = getattr(exc, "name", None) or "d or k"
                raise ValueProblem(BAD_TEMPLATE, f"template '{{{expr}}}' uses {var}, which is known "
                                   "only per device, where the value is computed once per server",
                                   self.span, "d (device id) and k (device position) work in a "
                                   "per-device template such as `device_ip 6.0.{i}.{d+1}`; "
                                   "`START step N`, host, server_id and super_pod take only i")
            try:
                text = str(value)
            except ValueError:  # more digits than Python will convert (sys.int_info)
                raise ValueProblem(BAD_TEMPLATE, f"template '{{{expr}}}' computes a number too large "
                                   "to write", self.span, "an address part is 0-255; check the "
                                   "multiplications in the template")
            out.append(text.zfill(width) if width else text)
        return "".join(out)

    def bind(self, **env: int) -> "Template":
        """Evaluate the groups that use only the given variables (e.g. ``i`` once per
        server) and return a template that still needs the others (``d``, ``k``).
        Literal neighbours are merged, so a per-device render evaluates fewer groups."""
        names = set(env)
        parts: list = []
        for part in self.parts:
            if not isinstance(part, str) and part.variables <= names:
                part = Template(self.text, self.span, (part,), part.variables).render_env(env)
            if isinstance(part, str) and parts and isinstance(parts[-1], str):
                parts[-1] = parts[-1] + part
            else:
                parts.append(part)
        left = frozenset(v for v in self.variables if v not in names)
        return Template(self.text, self.span, tuple(parts) or ("",), left)

    @functools.cached_property
    def _ipv4_octet_exprs(self) -> list | None:
        """The four octets of an IPv4-shaped template as expression ASTs (see
        :attr:`ipv4_octets`), or None for any other template."""
        fields: list[str | Group] = []
        for part in self.parts:
            if isinstance(part, str):
                pieces = part.split(".")
                if fields:
                    if isinstance(fields[-1], str):
                        fields[-1] += pieces[0]
                    elif pieces[0]:
                        return None  # a group glued to a number, e.g. {d}1
                    pieces = pieces[1:]
                fields.extend(pieces)
            else:
                if fields and fields[-1] != "":
                    return None  # a number glued to a group, e.g. 1{d}
                if fields:
                    fields[-1] = part
                else:
                    fields.append(part)
        if len(fields) != 4:
            return None
        octets: list[pyast.expr] = []
        for f in fields:
            if isinstance(f, Group):
                if f.width:
                    return None
                octets.append(f.body)
            elif re.fullmatch(_OCTET, f):
                octets.append(pyast.Constant(int(f)))
            else:
                return None  # empty, a leading zero, 256, text: the text path explains it
        return octets

    @functools.cached_property
    def ipv4_octets(self) -> Callable[[int, int, int], tuple] | None:
        """For a template shaped like an IPv4 address whose four parts are each a plain
        number (``6``) or one ``{expression}`` without a pad width (``{i%256}``): a function
        ``(i, d, k) -> (a, b, c, e)`` computing the four octets with integer arithmetic,
        built once from the vetted group ASTs. None for any other template (IPv6,
        ``1{d}``, ``{i:03}``), which must be rendered as text.

        The octets are not range-checked here: see :meth:`ipv4_addresses`."""
        octets = self._ipv4_octet_exprs
        if octets is None:
            return None
        return _compiled(pyast.Lambda(_lambda_args(*VARIABLES), pyast.Tuple(octets, pyast.Load())))

    @functools.cached_property
    def _ipv4_rows(self) -> Callable | None:
        """:attr:`ipv4_octets` for a whole server in one call: ``(i, enumerate(device
        ids)) -> [(a, b, c, e), ...]`` (one list comprehension, no call per device)."""
        octets = self._ipv4_octet_exprs
        if octets is None:
            return None
        names = pyast.Tuple([pyast.Name("k", pyast.Store()), pyast.Name("d", pyast.Store())],
                            pyast.Store())
        rows = pyast.ListComp(pyast.Tuple(octets, pyast.Load()), [pyast.comprehension(
            names, pyast.Name("pairs", pyast.Load()), [], 0)])
        return _compiled(pyast.Lambda(_lambda_args("i", "pairs"), rows))

    def ipv4_addresses(self, i: int, device_ids: list[int]) -> list | None:
        """The IPv4 addresses of a server's devices by arithmetic (see
        :attr:`ipv4_octets`): one ``ipaddress.IPv4Address`` per device id, in order, with
        ``k`` the position; an entry is None where an octet falls outside 0-255. Returns
        None when the template is not an arithmetic IPv4 shape or a group divides by zero;
        callers then render the text, which explains the problem.

        Same results as rendering the text and parsing it, several times faster."""
        rows = self._ipv4_rows
        if rows is None:
            return None
        try:
            octets = rows(i, enumerate(device_ids))
        except ZeroDivisionError:
            return None
        # all four in 0-255 <=> their OR is: OR of ints is negative iff one is
        return [IPv4Address(a << 24 | b << 16 | c << 8 | e) if 0 <= a | b | c | e <= 255
                else None for a, b, c, e in octets]


def _lambda_args(*names: str) -> pyast.arguments:
    return pyast.arguments(posonlyargs=[], args=[pyast.arg(v) for v in names], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _compiled(fn: pyast.Lambda):
    """The function of a lambda AST built from vetted template groups (no builtins)."""
    code = compile(pyast.fix_missing_locations(pyast.Expression(fn)), "<rtc-ipv4-template>",
                   "eval")
    return eval(code, _NO_BUILTINS)  # noqa: S307 - built from the vetted group ASTs


def attribute_words(attr) -> list:
    """The words of an attribute's value (:class:`rtc.syntax.ast.Word`), a comma list
    flattened. Raises :class:`ValueProblem` (RTC114) for a ``NAME = value`` argument, which
    only ``env`` takes."""
    from rtc.syntax.ast import ListArg, Word

    out: list = []
    for a in attr.args:
        if isinstance(a, Word):
            out.append(a)
        elif isinstance(a, ListArg):
            out.extend(a.items)
        else:
            raise ValueProblem(BAD_VALUE, f"'{attr.key}' does not take `NAME = value`", a.span)
    return out


def parse_template(text: str, span: Span, code=BAD_TEMPLATE) -> Template:
    """Split ``text`` into literal parts and compiled ``{expression}`` groups."""
    parts: list = []
    variables: set = set()
    pos = 0
    for m in re.finditer(r"\{([^{}]*)\}", text):
        if m.start() > pos:
            parts.append(text[pos:m.start()])
        group = compile_group(m.group(1), _sub_span(span, m.start(), len(m.group(0))), code)
        parts.append(group)
        variables |= group.variables
        pos = m.end()
    if pos < len(text) or not parts:
        parts.append(text[pos:])
    if any(isinstance(p, str) and ("{" in p or "}" in p) for p in parts):
        raise ValueProblem(code, f"unbalanced braces in '{text}'", span,
                           "a template group looks like {i/256}")
    return Template(text, span, tuple(parts), frozenset(variables))


PLACEHOLDER_RE = re.compile(r"(^|[.:])(\*|-|x|X|\?)+($|[.:])|<|>|\bx\.x\b")


def looks_like_placeholder(text: str) -> bool:
    """True for documentation placeholders such as ``-.-.-.-``, ``192.1.*.6``, ``x.x.x.x``
    or ``<ip>``: they are never real addresses."""
    return bool(PLACEHOLDER_RE.search(text))


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_DOTTED_QUAD = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}")


def fast_ipv4(text: str):
    """``ipaddress.IPv4Address`` for a plain dotted quad without leading zeros, built from
    its packed bytes (several times faster than parsing); None for anything else, which
    then goes through :func:`ipaddress.ip_address` and its error messages."""
    if _DOTTED_QUAD.fullmatch(text) is None:
        return None
    return ipaddress.IPv4Address(bytes(map(int, text.split("."))))


def _check_octets(text: str, parts: list[str], span: Span, code) -> None:
    """Raise :class:`ValueProblem` for the first of the four ``parts`` of ``text`` that is
    not an octet: a leading zero, more than 255, or not ASCII digits (``'８'``, ``'²'``)."""
    for idx, part in enumerate(parts):
        off = sum(len(p) + 1 for p in parts[:idx])
        where = _sub_span(span, off, len(part))
        value = ascii_int(part)
        if value is not None and len(part) > 1 and part[0] == "0" and value <= 255:
            raise ValueProblem(code, f"'{text}' is not an IPv4 address: '{part}' has a "
                               "leading zero (some tools read it as octal)", where,
                               f"write {value}; in a template, put no digits or pad "
                               "width before a group (`{i}`, not `0{i}` or `{i:03}`)")
        if value is None or value > 255:
            raise ValueProblem(code, f"'{short_text(text)}' is not an IPv4 address: "
                               f"{show_text(short_text(part, 20))} is not a number from 0 to "
                               "255", where, non_ascii_digit_hint(part)
                               or "each of the four parts is 0-255")


def parse_ip(text: str, span: Span, code=BAD_IP):
    """Parse an IPv4/IPv6 address literal. Raises :class:`ValueProblem` (``code``) with a
    message that says why (octet out of range, too few parts, placeholder)."""
    fast = fast_ipv4(text)
    if fast is not None:
        return fast
    if "%" in text:
        raise ValueProblem(code, f"'{text}' has a zone id ('%{text.split('%', 1)[1]}'): rank "
                           "tables and HCCL take plain addresses", span,
                           f"write {text.split('%', 1)[0]}; the interface is chosen by the "
                           "route (or HCCL_SOCKET_IFNAME for hosts)")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if looks_like_placeholder(text):
        raise ValueProblem(code, f"'{text}' is a placeholder, not an IP address", span,
                           "write the real address (from `hccn_tool -i N -ip -g` for device IPs)")
    parts = text.split(".")
    if ":" not in text and len(parts) != 4:
        raise ValueProblem(code, f"'{text}' is not an IPv4 address: it has {len(parts)} "
                           f"part{'s' if len(parts) != 1 else ''}, not 4", span,
                           "an IPv4 address has four numbers 0-255, e.g. 10.0.0.6")
    if ":" not in text:
        _check_octets(text, parts, span, code)
    if ":" in text and "." not in text:
        groups = text.split(":")
        for idx, group in enumerate(groups):
            if len(group) > 4 or any(c not in "0123456789abcdefABCDEF" for c in group):
                off = sum(len(g) + 1 for g in groups[:idx])
                raise ValueProblem(code, f"'{text}' is not an IPv6 address: '{group}' is not a "
                                   "group of 1 to 4 hex digits", _sub_span(span, off, len(group)),
                                   "each IPv6 group is 0-ffff in hex; a template writes its "
                                   "value in decimal, so keep it below 10000")
    raise ValueProblem(code, f"'{text}' is not a valid IP address", span,
                       "write an IPv4 (10.0.0.6) or IPv6 (fd00::6) address")


def parse_int(text: str, span: Span, *, lo: int | None = None, hi: int | None = None,
              what: str = "value", code=BAD_VALUE) -> int:
    """Parse a non-negative decimal integer within [lo, hi]. Raises :class:`ValueProblem`:
    "must be a whole number" for anything but ASCII digits, "out of range" for a number
    outside [lo, hi] (a negative one too: ``-2`` is out of range (1..N), lo or 0)."""
    negative = text[:1] == "-"
    magnitude = text[1:] if negative else text
    if not (magnitude.isascii() and magnitude.isdigit()):
        raise ValueProblem(code, f"{what} must be a whole number, not {show_text(text)}", span,
                           non_ascii_digit_hint(text) or "write digits, e.g. 8")
    digits = magnitude.lstrip("0") or "0"
    value = ascii_int(digits)  # None past MAX_DIGITS: no int() on a 5,000-digit string
    if negative:  # negative numbers are never valid here
        if digits == "0":
            raise ValueProblem(code, f"{what} {show_text(text)} has a minus sign", span,
                               "write plain digits, e.g. 8")
        lo, digits = (0 if lo is None else lo), "-" + digits
        value = None if value is None else -value
    if value is None or lo is not None and value < lo or hi is not None and value > hi:
        if hi is None:
            rng, use = f">= {lo}", f"use a value of at least {lo}"
        elif lo is None:
            rng, use = f"<= {hi}", f"use a value of at most {hi:,}"
        else:
            rng, use = f"{lo}..{hi}", f"use a value from {lo} to {hi:,}"
        shown = str(value) if value is not None else f"{digits[:12]}... ({len(digits)} digits)"
        raise ValueProblem(code, f"{what} {shown} is out of range ({rng})", span, use)
    return value


_RANGE_RE = re.compile(r"([0-9]+)\.\.([0-9]+)")
#: A number or range with a minus sign on a bound (``-1``, ``-1..7``, ``0..-3``).
_NEGATIVE_RANGE_RE = re.compile(r"(?=.*-)-?[0-9]+(\.\.-?[0-9]+)?")

#: Largest device range one attribute may expand to (no server has more NPUs).
MAX_RANGE_ITEMS = 1024
#: Largest family (servers). 131,072 A3 servers would be over two million NPUs.
MAX_FAMILY_SIZE = 131072


def parse_int_range(text: str, span: Span, code=BAD_RANGE) -> list[int]:
    """``7`` -> [7]; ``0..7`` -> [0..7] (inclusive). Raises :class:`ValueProblem` for
    reversed or malformed ranges (``7..0``, ``0..``, ``0...7``, ``a..b``)."""
    if text.isascii() and text.isdigit():
        value = ascii_int(text)
        if value is None:
            raise ValueProblem(code, f"device id {text[:12]}... ({len(text)} digits) is far too "
                               "large", span, "device ids are the NPUs of one server, e.g. 0..7")
        return [value]
    m = _RANGE_RE.fullmatch(text)
    bounds = (ascii_int(m.group(1)), ascii_int(m.group(2))) if m else ()
    if None in bounds:
        raise ValueProblem(code, f"range '{short_text(text)}' has far too many items", span,
                           "device ids are the NPUs of one server, e.g. 0..7 or 0..15")
    if not m:
        digit_hint = non_ascii_digit_hint(text)
        if digit_hint:
            raise ValueProblem(code, f"{show_text(text)} is not a number or a range", span,
                               digit_hint)
        if _NEGATIVE_RANGE_RE.fullmatch(text):
            raise ValueProblem(code, f"'{short_text(text)}': device ids cannot be negative",
                               span, "device ids count from 0 on each server, e.g. 0..7")
        if ".." in text or "-" in text:
            raise ValueProblem(code, f"'{text}' is not a range: write FIRST..LAST, e.g. 0..7",
                               span, "ranges are inclusive and use two dots: 0..7")
        raise ValueProblem(code, f"'{text}' is not a number or a range", span,
                           "write device ids as 0..7 or 0, 2, 4..7")
    lo, hi = bounds
    if lo > hi:
        raise ValueProblem(code, f"range '{text}' runs backwards ({lo} > {hi})", span,
                           f"write {hi}..{lo}")
    if hi - lo + 1 > MAX_RANGE_ITEMS:
        raise ValueProblem(code, f"range '{text}' has {hi - lo + 1:,} items; a server has at "
                           f"most {MAX_RANGE_ITEMS} devices", span,
                           "device ids are the NPUs of one server, e.g. 0..7 or 0..15")
    return list(range(lo, hi + 1))


class FamilyName(NamedTuple):
    """``node[0000..1023]`` -> prefix ``node``, indices 0..1023, zero-padded to width 4.
    ``name(i)`` gives a member's name (``node0007``)."""

    prefix: str
    first: int
    last: int
    width: int
    suffix: str

    def name(self, i: int) -> str:
        return f"{self.prefix}{str(i).zfill(self.width)}{self.suffix}"

    @property
    def indices(self) -> range:
        return range(self.first, self.last + 1)


_FAMILY_RE = re.compile(r"([^\[\]]*)\[([0-9]+)\.\.([0-9]+)\]([^\[\]]*)")


def parse_family_name(text: str, span: Span, code=BAD_RANGE) -> FamilyName:
    """Parse ``prefix[FIRST..LAST]suffix``; the width is that of FIRST when it has leading
    zeros (``[000..255]``), as in shell brace expansion. Raises :class:`ValueProblem`."""
    m = _FAMILY_RE.fullmatch(text)
    if not m:
        raise ValueProblem(code, f"'{text}' is not a family name: write PREFIX[FIRST..LAST], "
                           "e.g. node[0..1023]", span, non_ascii_digit_hint(text))
    first_s, last_s = m.group(2), m.group(3)
    first, last = ascii_int(first_s), ascii_int(last_s)
    if first is None or last is None:
        raise ValueProblem(code, f"family range in '{short_text(text)}' is far too large", span,
                           f"rtc handles at most {MAX_FAMILY_SIZE:,} servers per family")
    if first > last:
        raise ValueProblem(code, f"family range [{first_s}..{last_s}] runs backwards", span)
    if last - first + 1 > MAX_FAMILY_SIZE:
        raise ValueProblem(code, f"family [{first_s}..{last_s}] has {last - first + 1:,} servers; "
                           f"rtc handles at most {MAX_FAMILY_SIZE:,} per family", span,
                           "check the range for a typo (an extra digit?)")
    width = len(first_s) if first_s.startswith("0") and len(first_s) > 1 else 0
    if width == 0 and len(last_s) > len(first_s) and last_s.startswith("0"):
        width = len(last_s)
    return FamilyName(m.group(1), first, last, width, m.group(4))


def is_family_ref(text: str) -> bool:
    """True when ``text`` names a range of servers (``node[0..3]``)."""
    return bool(_FAMILY_RE.fullmatch(text))

#: The rules this module reports (collected by rtc.catalogue).
RULES = (BAD_IP, BAD_RANGE, BAD_TEMPLATE, BAD_VALUE)
