"""The value parsers of the language: one function per kind of attribute value, turning an
:class:`~rtc.syntax.ast.Attribute`'s words into a typed value (used by
:data:`rtc.syntax.schema.BLOCK_SPECS`).

* numbers, words, choices, on/off, templates, addresses, device sets;
* address plans (``device_ip 6.0.2.1 step 2``, lists, templates, ``inventory``) and super
  device id plans (``base N``);
* job placements (``on SERVER devices SET dp_local N``), ``env NAME = value``, ``policy``;
* networks (``cidr 10.0.0.0/24``, ``subnets A, B``; host bits must be zero), NIC names, TCP
  ports 1..65535;
* launch arguments (``args "--max-model-len 8192"``: a quoted string is split like a POSIX
  shell splits it, with :mod:`shlex`; a bare word is one argument) and job names.

Every parser raises :class:`~rtc.syntax.values.ValueProblem` with the rule of the
problem (RTC111 bad IP literal, RTC112 bad range, RTC113 bad template, RTC114 bad value),
the span narrowed to the offending word, and a hint.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import shlex
from typing import Callable

from rtc.diagnostics import Span
from rtc.syntax.ast import Assign, Attribute, ListArg, Word
from rtc.syntax.decls import (AddressPlan, BackupLine, EnvLine, LayerLine, NetInstanceLine,
                              ParamLine, PlacementRef, PolicyLine)
from rtc.syntax.values import (BAD_IP, BAD_RANGE, BAD_VALUE, ValueProblem, ascii_int,
                               attribute_words,
                               looks_like_placeholder, parse_int, parse_int_range, parse_ip,
                               parse_template)

#: Largest value of one parallel size (dp, tp, pp, pcp, dcp).
MAX_PARALLEL = 1_048_576

def _single(attr: Attribute) -> Word:
    words = attribute_words(attr)
    if len(words) != 1 or isinstance(attr.args[0], ListArg):
        raise ValueProblem(BAD_VALUE, f"'{attr.key}' takes exactly one value", attr.span,
                           f"write `{attr.key} VALUE`")
    return words[0]


def _single_quoted(word: Word) -> bool:
    return not word.quoted and len(word.text) >= 2 and word.text[0] == word.text[-1] == "'"


def check_quotes(attr: Attribute) -> None:
    """Single quotes are not string delimiters in rtc: `model '/m'` would keep the quotes
    in the value. Report them instead of passing them on."""
    words: list[Word] = []
    for a in attr.args:
        if isinstance(a, Word):
            words.append(a)
        elif isinstance(a, ListArg):
            words.extend(a.items)
        elif isinstance(a, Assign):
            words.extend((a.name, a.value))
    for w in words:
        if _single_quoted(w):
            inner = w.text[1:-1]
            raise ValueProblem(BAD_VALUE, f"'{attr.key}' value {w.text} uses single quotes, "
                               "which rtc keeps as part of the value; use double quotes",
                               w.span, f'write "{inner}" (or {inner} without quotes)')
    _split_single_quotes(attr.key, words)


def _split_single_quotes(key: str, words: list[Word]) -> None:
    """`env X = ' 5'`: single quotes around spaces are read as separate words (``'`` and
    ``5'``), which no attribute's shape fits; say so instead of "write `env NAME = value`"."""
    opened = next((i for i, w in enumerate(words) if not w.quoted and w.text.startswith("'")),
                  None)
    if opened is None:
        return
    closed = next((j for j in range(opened + 1, len(words))
                   if not words[j].quoted and words[j].text.endswith("'")), None)
    if closed is None:
        return
    parts = [w.text for w in words[opened:closed + 1]]
    shown = " ".join(parts)
    inner = shown[1:-1]
    first, last = words[opened].span, words[closed].span
    span = Span(first.file, first.line, first.column, last.end_line, last.end_column)
    raise ValueProblem(BAD_VALUE, f"'{key}' value {shown} uses single quotes, which are not "
                       "string delimiters in .rtc: it is read as the separate words "
                       + " and ".join(f"`{p}`" for p in parts) + "; use double quotes, or none",
                       span, f'write "{inner}" (or {inner.strip()} without quotes)')


def p_int(lo: int = 0, hi: int | None = None) -> Callable:
    def parse(attr: Attribute) -> int:
        w = _single(attr)
        return parse_int(w.text, w.span, lo=lo, hi=hi, what=f"'{attr.key}'")
    return parse


def p_prefix(attr: Attribute) -> int:
    """A device ``prefix``: a whole number 1..128 (IPv4 devices are held to 32 by RTC402).
    ``prefix 0`` is refused (BAD_VALUE): netmask 0.0.0.0 puts every address on the NPU's
    own link, so the NPU never uses its gateway and rtc's reachability model would call
    every peer reachable."""
    w = _single(attr)
    value = parse_int(w.text, w.span, lo=0, hi=128, what=f"'{attr.key}'")
    if value == 0:
        raise ValueProblem(
            BAD_VALUE, "`prefix 0` is netmask 0.0.0.0: every address would be on the NPU's "
            "own link, so it would ARP for peers on other subnets instead of using its "
            "gateway, and rtc could not judge reachability", w.span,
            "give the prefix length the NPU has (`hccn_tool -i 0 -ip -g` prints its netmask; "
            "255.255.255.0 is `prefix 24`), or drop `prefix` to take it from the inventory")
    return value


def p_word(attr: Attribute) -> str:
    return _single(attr).text


def p_choice(*choices: str) -> Callable:
    def parse(attr: Attribute) -> str:
        w = _single(attr)
        if w.text not in choices:
            close = difflib.get_close_matches(w.text, choices, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise ValueProblem(BAD_VALUE, f"'{attr.key}' cannot be '{w.text}'", w.span,
                               hint + "allowed: " + ", ".join(choices))
        return w.text
    return parse


def p_bool(attr: Attribute) -> bool:
    w = _single(attr)
    table = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False}
    if w.text.lower() not in table:
        raise ValueProblem(BAD_VALUE, f"'{attr.key}' must be on or off, not '{w.text}'", w.span)
    return table[w.text.lower()]


def p_template(attr: Attribute):
    w = _single(attr)
    return parse_template(w.text, w.span)


def _address_template(w: Word):
    t = parse_template(w.text, w.span)
    if t.is_constant:
        parse_ip(t.text, w.span, BAD_IP)
    return t


def p_address(attr: Attribute):
    return _address_template(_single(attr))


def p_devset(attr: Attribute) -> tuple[int, ...]:
    ids: list[int] = []
    for w in attribute_words(attr):
        ids.extend(parse_int_range(w.text, w.span, BAD_RANGE))
    return tuple(ids)


def p_address_plan(attr: Attribute) -> AddressPlan:
    words = attribute_words(attr)
    if len(words) == 1 and words[0].text == "inventory":
        return AddressPlan("inventory")
    if len(words) == 2 and words[0].text == "inventory" and attr.key == "device_ip":
        if words[1].text != "vnic":
            raise ValueProblem(BAD_VALUE, f"write `device_ip inventory` or `device_ip inventory "
                               f"vnic`, not '{words[1].text}'", words[1].span,
                               "vnic takes the A3 vNIC address (`hccn_tool -i N -vnic -g`)")
        return AddressPlan("inventory", source="vnic")
    if len(words) == 3 and words[1].text == "step" and not isinstance(attr.args[0], ListArg):
        start = _address_template(words[0])
        step = parse_int(words[2].text, words[2].span, lo=1, hi=2**32, what="step")
        return AddressPlan("step", (start,), step)
    if any(w.text == "step" for w in words):
        raise ValueProblem(BAD_VALUE, f"write `{attr.key} START step N`", attr.span)
    if len(attr.args) > 1:
        raise ValueProblem(BAD_VALUE, f"separate the addresses of '{attr.key}' with commas",
                           attr.args[1].span)
    items = tuple(_address_template(w) for w in words)
    if len(items) == 1 and items[0].variables & {"d", "k"}:
        return AddressPlan("template", items)
    return AddressPlan("list", items)


def p_super_device_plan(attr: Attribute) -> AddressPlan:
    """``super_device_id base N`` (N + device id), a list, or a template over i, d, k."""
    words = attribute_words(attr)
    if len(words) == 2 and words[0].text == "base":
        return AddressPlan("base", (parse_template(words[1].text, words[1].span),))
    items = tuple(parse_template(w.text, w.span) for w in words)
    if len(items) == 1 and items[0].variables & {"d", "k"}:
        return AddressPlan("template", items)
    return AddressPlan("list", items)


#: Hex digits of an EID (128 bits; HCCL rank_table_config_a5.md, MindCluster parse_eid.py).
EID_DIGITS = 32
_HEX_RE = re.compile(r"[0-9A-Fa-f]{1,32}")


def _eid_template(w: Word, hint: str = "copy it from `hccn_tool` (e.g. "
                  "000000000000000000100000dfdf0020)"):
    t = parse_template(w.text, w.span)
    if t.is_constant and not _HEX_RE.fullmatch(t.text):
        raise ValueProblem(BAD_VALUE, f"'{t.text}' is not an EID: an EID is up to "
                           f"{EID_DIGITS} hex digits", w.span, hint)
    return t


def p_eid_plan(attr: Attribute) -> AddressPlan:
    """``eid base HEX`` (die e of the device at position k gets HEX + k*dies + e; HEX may
    be a template in i) or a list of EIDs, one per die in device order (rank table 2.0)."""
    words = attribute_words(attr)
    if len(words) == 2 and words[0].text == "base":
        return AddressPlan("base", (_eid_template(words[1]),))
    if any(w.text == "base" for w in words):
        raise ValueProblem(BAD_VALUE, "write `eid base HEX` or a list of EIDs", attr.span)
    if len(attr.args) > 1:
        raise ValueProblem(BAD_VALUE, "separate the EIDs with commas", attr.args[1].span)
    return AddressPlan("list", tuple(_eid_template(w) for w in words))


def p_net_instance(attr: Attribute) -> NetInstanceLine:
    """``net_instance LAYER NAME``: layer 0..7 and a name template in i (rank table 2.0
    ``net_instance_id``, at most 1024 characters)."""
    words = attribute_words(attr)
    if len(words) != 2:
        raise ValueProblem(BAD_VALUE, "write `net_instance LAYER NAME`, e.g. "
                           "`net_instance 0 pod{i/8}_{i%8}`", attr.span)
    layer = parse_int(words[0].text, words[0].span, lo=0, hi=7, what="net layer")
    return NetInstanceLine(layer, parse_template(words[1].text, words[1].span),
                           value_span(attr))


def _layer_line(attr: Attribute, example: str, most: int | None = None) -> LayerLine:
    """``KEY LAYER V[, V ...]``: a layer 0..7 and templates (in i, d, k)."""
    words = attribute_words(attr)
    if len(words) < 2 or (most is not None and len(words) > most + 1):
        raise ValueProblem(BAD_VALUE, f"write `{attr.key} LAYER VALUE`, e.g. `{example}`",
                           attr.span)
    layer = parse_int(words[0].text, words[0].span, lo=0, hi=7, what="net layer")
    return LayerLine(layer, tuple(parse_template(w.text, w.span) for w in words[1:]),
                     value_span(attr))


def p_plane(attr: Attribute) -> LayerLine:
    """``plane LAYER NAME[, NAME]``: the rank table 2.0 ``plane_id`` at a layer, one name
    for every die or one per die (HCCL rank_table_config_a5.md ``plane_id``)."""
    return _layer_line(attr, "plane 1 plane{2*k}, plane{2*k+1}")


def p_port_eid(attr: Attribute) -> LayerLine:
    """``port_eid LAYER HEX``: one EID per port at a layer; HEX (a template in i, d, k) is
    the device's EID with port number 0, a port's EID adds its number."""
    line = _layer_line(attr, "port_eid 0 00000000000000000100000dfdf{i:02}{k}00", most=1)
    _eid_template(attribute_words(attr)[1], "copy it from `hccn_tool` and write 00 for the "
                  "port byte")
    return line


def p_level_ip(attr: Attribute) -> LayerLine:
    """``level_ip LAYER ADDR[, ADDR]``: IPv4 / IPv6 addresses (templates in i, d, k) a UB
    layer lists instead of EIDs, one per die or one for every die (the host NIC form of
    HCCL rank_table_config_a5.md)."""
    return _layer_line(attr, "level_ip 0 172.16.{i}.{d*2+10}")


#: The local_id of a 2.0 backup rank (HCCL rank_table_config_a5.md local_id 0..64; HCOMM
#: BACKUP_LOCAL_ID = 64, the "64 + 1" spare of a level-0 domain).
BACKUP_LOCAL_ID = 64


def p_backup(attr: Attribute) -> BackupLine:
    """``backup DEVICE replaces LOCAL``: device id 0..64 and the local_id 0..63 it replaces."""
    words = attribute_words(attr)
    if len(words) != 3 or words[1].text != "replaces":
        raise ValueProblem(BAD_VALUE, "write `backup DEVICE replaces LOCAL_ID`, e.g. "
                           "`backup 7 replaces 3`", attr.span)
    device = parse_int(words[0].text, words[0].span, lo=0, hi=BACKUP_LOCAL_ID, what="device id")
    replaced = parse_int(words[2].text, words[2].span, lo=0, hi=BACKUP_LOCAL_ID - 1,
                         what="replaced local_id")
    return BackupLine(device, replaced, value_span(attr))


def p_path(attr: Attribute) -> str:
    return _single(attr).text


def p_server_refs(attr: Attribute) -> tuple[Word, ...]:
    return tuple(attribute_words(attr))


def p_placement(attr: Attribute) -> PlacementRef:
    words = attribute_words(attr)
    if not words:
        raise ValueProblem(BAD_VALUE, "write `on SERVER [devices SET] [dp_local N]`", attr.span)
    server = words[0]
    devices = None
    devices_span = None
    dp_local = None
    rest = list(attr.args[1:])
    i = 0
    while i < len(rest):
        w = rest[i]
        if isinstance(w, Word) and w.text == "devices" and i + 1 < len(rest):
            arg = rest[i + 1]
            items = arg.items if isinstance(arg, ListArg) else (arg,)
            ids: list[int] = []
            for it in items:
                ids.extend(parse_int_range(it.text, it.span, BAD_RANGE))
            devices = tuple(ids)
            devices_span = arg.span
            i += 2
        elif isinstance(w, Word) and w.text == "dp_local" and i + 1 < len(rest):
            arg = rest[i + 1]
            dp_local = parse_int(arg.text, arg.span, lo=0, hi=MAX_PARALLEL, what="dp_local")
            i += 2
        else:
            raise ValueProblem(BAD_VALUE, f"unexpected '{getattr(w, 'text', '=')}' after the "
                               "server name", w.span,
                               "write `on SERVER devices 0..7 dp_local 1`")
    return PlacementRef(server, devices, devices_span, dp_local)


def p_env(attr: Attribute) -> EnvLine:
    """``env NAME = value``."""
    if len(attr.args) != 1 or not isinstance(attr.args[0], Assign):
        raise ValueProblem(BAD_VALUE, "write `env NAME = value`", attr.span)
    a = attr.args[0]
    return EnvLine(a.name.text, a.value.text, a.value.span)


def p_param(attr: Attribute) -> ParamLine:
    """``param KEY = VALUE`` (``param roce.alpha = 20us``); the key and the unit are
    checked against the cost model's parameter table later (RTC340)."""
    if (not attr.args or not isinstance(attr.args[0], Assign)
            or not all(isinstance(w, Word) for w in attr.args[1:])):
        raise ValueProblem(BAD_VALUE, "write `param LINK.FIELD = VALUE`, e.g. "
                           "`param roce.alpha = 20us`", attr.span)
    a = attr.args[0]
    if len(attr.args) == 1:
        return ParamLine(a.name.text, a.value.text, a.value.span, a.name.span)
    # `param roce.alpha = 20 us`: the number and its unit as separate words
    last = attr.args[-1].span
    text = " ".join([a.value.text] + [w.text for w in attr.args[1:]])
    span = Span(a.value.span.file, a.value.span.line, a.value.span.column, last.end_line,
                last.end_column)
    return ParamLine(a.name.text, text, span, a.name.span)


def p_policy(attr: Attribute) -> PolicyLine:
    """``policy RULE error|warn|allow`` (the rule is checked against the catalogue later,
    RTC118)."""
    words = attribute_words(attr)
    if len(words) != 2:
        raise ValueProblem(BAD_VALUE, "write `policy NAME error|warn|allow`", attr.span)
    if words[1].text not in ("error", "warn", "allow"):
        raise ValueProblem(BAD_VALUE, f"policy level must be error, warn or allow, not "
                           f"'{words[1].text}'", words[1].span)
    return PolicyLine(words[0].text, words[1].text, value_span(attr))


_NIC_RE = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")


def parse_cidr(text: str, span) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """``10.0.0.0/24`` -> network. A host address with its prefix (``10.0.0.6/24``) is
    rejected with the network it belongs to as the hint."""
    if "/" not in text:
        raise ValueProblem(BAD_VALUE, f"'{text}' is not a network: write ADDRESS/PREFIX, "
                           "e.g. 10.0.0.0/24", span)
    if looks_like_placeholder(text.split("/")[0]):
        raise ValueProblem(BAD_IP, f"'{text}' is a placeholder, not a network", span,
                           "write the real network, e.g. 6.0.0.0/16")
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError:
        pass
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        address, _, prefix = text.partition("/")
        bits = 128 if ":" in address else 32
        length = ascii_int(prefix, 4)
        if length is not None and length > bits:
            raise ValueProblem(BAD_IP, f"'{text}': prefix /{prefix} is longer than the "
                               f"{bits} bits of an IPv{6 if bits == 128 else 4} address", span,
                               f"a prefix is 0..{bits}, e.g. {address}/{bits // 2}")
        raise ValueProblem(BAD_IP, f"'{text}' is not a valid network (ADDRESS/PREFIX)", span,
                           "e.g. 10.0.0.0/24 or fd00::/64")
    raise ValueProblem(BAD_VALUE, f"'{text}' has host bits set; the network is {net}", span,
                       f"write {net}")


def p_cidr(attr: Attribute):
    words = attribute_words(attr)
    if len(words) != 1:
        raise ValueProblem(BAD_VALUE, f"'{attr.key}' takes one network, e.g. 10.0.0.0/24",
                           attr.span)
    return parse_cidr(words[0].text, words[0].span)


def p_cidr_list(attr: Attribute) -> tuple:
    if len(attr.args) > 1:
        raise ValueProblem(BAD_VALUE, f"separate the networks of '{attr.key}' with commas",
                           attr.args[1].span)
    return tuple((parse_cidr(w.text, w.span), w.span) for w in attribute_words(attr))


def _nic_name(w) -> str:
    if not _NIC_RE.fullmatch(w.text):
        raise ValueProblem(BAD_VALUE, f"'{w.text}' is not a network interface name", w.span,
                           "interface names are up to 15 letters, digits, '-', '_', '.' (no "
                           "templates), e.g. eno0 or enp189s0f0")
    return w.text


def p_nic(attr: Attribute) -> str:
    """A server's host NIC (``nic eno0``), checked like a Linux interface name."""
    words = attribute_words(attr)
    if len(words) != 1 or len(attr.args) != 1:
        raise ValueProblem(BAD_VALUE, f"'{attr.key}' takes one interface name, e.g. eno0",
                           attr.span)
    return _nic_name(words[0])


def p_nic_list(attr: Attribute) -> tuple[str, ...]:
    if len(attr.args) > 1:
        raise ValueProblem(BAD_VALUE, f"separate the NIC names of '{attr.key}' with commas",
                           attr.args[1].span)
    return tuple(_nic_name(w) for w in attribute_words(attr))


def p_port(attr: Attribute) -> int:
    words = attribute_words(attr)
    if len(words) != 1 or len(attr.args) != 1:
        raise ValueProblem(BAD_VALUE, f"'{attr.key}' takes one port number", attr.span,
                           f"write `{attr.key} PORT`, e.g. `{attr.key} 8000`")
    return parse_int(words[0].text, words[0].span, lo=1, hi=65535, what=f"'{attr.key}'")


def p_args(attr: Attribute) -> tuple[str, ...]:
    out: list[str] = []
    for a in attr.args:
        if isinstance(a, Assign):
            raise ValueProblem(BAD_VALUE, f"'{attr.key}' does not take `NAME = value`; quote "
                               "arguments with '=' in them", a.span,
                               f'write e.g. `{attr.key} "--foo=bar"`')
        items = a.items if isinstance(a, ListArg) else (a,)
        for w in items:
            if w.quoted:
                try:
                    out.extend(shlex.split(w.text))
                except ValueError as exc:
                    raise ValueProblem(BAD_VALUE, f"'{attr.key}': {exc} in \"{w.text}\"", w.span,
                                       "close every quote inside the string")
            else:
                out.append(w.text)
    if not out:
        raise ValueProblem(BAD_VALUE, f"'{attr.key}' is empty", attr.span,
                           f'write e.g. `{attr.key} "--max-model-len 8192"`')
    return tuple(out)


def p_job_refs(attr: Attribute) -> tuple[Word, ...]:
    out: list[Word] = []
    for a in attr.args:
        if isinstance(a, Assign):
            raise ValueProblem(BAD_VALUE, f"'{attr.key}' takes job names", a.span,
                               f"write `{attr.key} JOB` or `{attr.key} JOB, JOB`")
        out.extend(a.items if isinstance(a, ListArg) else (a,))
    if len(attr.args) > 1:
        raise ValueProblem(BAD_VALUE, f"separate the job names of '{attr.key}' with commas",
                           attr.args[1].span)
    return tuple(out)


def value_span(attr: Attribute) -> Span:
    """From the first to the last word of an attribute's value (its key when it has none)."""
    first = attr.args[0].span if attr.args else attr.key_span
    last = attr.args[-1].span if attr.args else attr.key_span
    return Span(first.file, first.line, first.column, last.end_line, last.end_column)
