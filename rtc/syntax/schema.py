"""The shape of the language: which attributes each block accepts and what their words mean.

The grammar only knows blocks, attributes and words; this module turns a generic
:class:`~rtc.syntax.ast.SourceFile` into :class:`Decl` records whose attribute values are
typed (integers, device sets, :class:`~rtc.syntax.values.Template`, address plans, ...),
each with its source span. Unknown keys get "did you mean"; bad literals get a precise
column. Adding an attribute is one entry in :data:`BLOCK_SPECS` (data, not branches).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

from rtc.diagnostics import Diagnostic, Span, error
from rtc.rules import rule
from rtc.syntax.ast import Assign, Attribute, Block, ListArg, SourceFile, Word
from rtc.syntax.values import (ValueProblem, attribute_words, parse_family_name, parse_int,
                               parse_int_range, parse_ip, parse_template)
from rtc.network.values import p_cidr, p_cidr_list, p_nic, p_nic_list, p_port
from rtc.emit.launch.values import p_args, p_job_refs

UNKNOWN_ATTRIBUTE = rule("RTC110", "unknown-attribute", "error",
                         "A block holds an attribute it does not know.", """
    What: e.g. `hots 10.0.0.6` in a server, or `tpp 8` in a job.
    Why: a misspelt fact would otherwise be silently ignored and the plan would differ
    from what you wrote.
    Example: `tpp 8` -> did you mean `tp`?
    Fix: use one of the block's attributes (rtc lists the closest one).""")
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
DUPLICATE_ATTRIBUTE = rule("RTC115", "duplicate-attribute", "error",
                           "An attribute that may appear once appears twice.", """
    What: e.g. two `host` lines in one server.
    Why: only one of them can be right, and rtc will not pick one silently.
    Example: `tp 8` and later `tp 16` in one job.
    Fix: delete one of them.""")
MISSING_ATTRIBUTE = rule("RTC116", "missing-attribute", "error",
                         "A required attribute is missing.", """
    What: e.g. a server without `devices` (when the hardware preset cannot supply them).
    Why: the rank table cannot be built without it.
    Example: a `cluster` block without `hardware`.
    Fix: add the attribute named in the message.""")
BAD_LABEL = rule("RTC117", "bad-block-label", "error", "A block's name is missing or invalid.", """
    What: `server {` without a name, or a family whose name has no `[FIRST..LAST]`.
    Why: servers and jobs are referred to by name; families expand their name range.
    Example: `family node {`.
    Fix: write `server NAME {` or `family node[0..15] {`.""")


@dataclass(frozen=True)
class Located:
    """A typed value and the span of the words it came from."""

    value: Any
    span: Span


@dataclass(frozen=True)
class AddressPlan:
    """How a server's per-device addresses are given.

    ``kind`` is ``"list"`` (one template per device, in device order), ``"step"`` (a start
    address plus ``step`` per device position: device at position k gets start + k*step),
    ``"template"`` (one template rendered per device with d and k), or ``"inventory"``
    (taken from the server's inventory captures)."""

    kind: str
    items: tuple = ()
    step: int = 1


@dataclass(frozen=True)
class PlacementRef:
    """A job line ``on SERVER [devices SET] [dp_local N]``."""

    server: Word
    devices: tuple[int, ...] | None
    devices_span: Span | None
    dp_local: int | None


@dataclass(frozen=True)
class Decl:
    """One block with typed attributes. ``attrs[key]`` is a :class:`Located` for
    single attributes and a tuple of :class:`Located` for repeatable ones."""

    kind: str
    name: str | None
    name_span: Span
    attrs: dict
    span: Span
    children: tuple = ()
    #: Keys whose value could not be read (already reported). Lowering and the checks must
    #: not fall back to defaults for them as if they had not been written.
    failed: frozenset = frozenset()

    def get(self, key: str, default: Any = None) -> Any:
        loc = self.attrs.get(key)
        if loc is None:
            return default
        if isinstance(loc, tuple):
            return tuple(x.value for x in loc)
        return loc.value

    def span_of(self, key: str) -> Span:
        loc = self.attrs.get(key)
        if isinstance(loc, tuple):
            return loc[0].span if loc else self.name_span
        return loc.span if loc is not None else self.name_span


# ---------------------------------------------------------------------------------------
# Value parsers: (attribute) -> value; they raise ValueProblem.

def _single(attr: Attribute) -> Word:
    words = attribute_words(attr)
    if len(words) != 1 or isinstance(attr.args[0], ListArg):
        raise ValueProblem(BAD_VALUE, f"'{attr.key}' takes exactly one value", attr.span,
                           f"write `{attr.key} VALUE`")
    return words[0]


def _single_quoted(word: Word) -> bool:
    return not word.quoted and len(word.text) >= 2 and word.text[0] == word.text[-1] == "'"


def _check_quotes(attr: Attribute) -> None:
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


def p_int(lo: int = 0, hi: int | None = None) -> Callable:
    def parse(attr: Attribute) -> int:
        w = _single(attr)
        return parse_int(w.text, w.span, lo=lo, hi=hi, what=f"'{attr.key}'")
    return parse


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


def p_env(attr: Attribute) -> tuple[str, str, Span]:
    if len(attr.args) != 1 or not isinstance(attr.args[0], Assign):
        raise ValueProblem(BAD_VALUE, "write `env NAME = value`", attr.span)
    a = attr.args[0]
    return (a.name.text, a.value.text, a.value.span)


def p_policy(attr: Attribute) -> tuple[str, str]:
    words = attribute_words(attr)
    if len(words) != 2:
        raise ValueProblem(BAD_VALUE, "write `policy NAME error|warn|allow`", attr.span)
    if words[1].text not in ("error", "warn", "allow"):
        raise ValueProblem(BAD_VALUE, f"policy level must be error, warn or allow, not "
                           f"'{words[1].text}'", words[1].span)
    return (words[0].text, words[1].text)


@dataclass(frozen=True)
class AttrSpec:
    """How one attribute is read: its value parser, whether it may repeat, and a one-line
    description used in "did you mean" hints and the docs."""

    parse: Callable
    repeat: bool = False
    doc: str = ""


@dataclass(frozen=True)
class BlockSpec:
    """Which attributes a block kind accepts and whether it needs a label."""

    attrs: dict
    label: str = "required"      # required | optional | family
    doc: str = ""
    children: tuple = ()


#: Largest value of one parallel size (dp, tp, pp, pcp, dcp).
MAX_PARALLEL = 1_048_576
#: Largest world size dp*pp*pcp*tp of one job (131,072 servers x 16 NPUs).
MAX_WORLD = 2_097_152
WORLD_KEYS = ("dp", "pp", "pcp", "tp")

_SERVER_ATTRS = {
    "server_id": AttrSpec(p_template, doc="server_id in the rank table (default: the name)"),
    "host": AttrSpec(p_address, doc="host IP (HCCL_IF_IP, --data-parallel-address)"),
    "nic": AttrSpec(p_nic, doc="host NIC name (HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME)"),
    "devices": AttrSpec(p_devset, doc="physical device ids, e.g. 0..7"),
    "device_ip": AttrSpec(p_address_plan, doc="RoCE IP per device: list, START step N, template"),
    "gateway": AttrSpec(p_address_plan, doc="RoCE gateway per device"),
    "prefix": AttrSpec(p_int(0, 128), doc="RoCE prefix length per device, e.g. 31"),
    "super_pod": AttrSpec(p_template, doc="super_pod_id (A3, rank table 1.2)"),
    "super_device_id": AttrSpec(p_super_device_plan, doc="SDID per device: base N, list, template"),
    "inventory": AttrSpec(p_path, doc="folder of hccn_tool / npu-smi captures for this server"),
    "visible_devices": AttrSpec(p_devset, doc="physical ids the container sees, in order "
                                "(container id = position), e.g. 4..7"),
}

BLOCK_SPECS: dict[str, BlockSpec] = {
    "cluster": BlockSpec({
        "hardware": AttrSpec(p_word, doc="hardware preset: atlas-800t-a2, atlas-800-a3, ..."),
        "cann": AttrSpec(p_word, doc="CANN version, e.g. 8.2.RC1"),
        "devices_per_server": AttrSpec(p_int(1, 64), doc="NPUs per server (generic hardware)"),
        "policy": AttrSpec(p_policy, repeat=True, doc="policy RULE error|warn|allow"),
        "vllm_version": AttrSpec(p_word, doc="vLLM version the launch scripts target"),
    }, label="optional", doc="the cluster: hardware preset, CANN version, policies"),
    "server": BlockSpec(dict(_SERVER_ATTRS), doc="one server"),
    "family": BlockSpec(dict(_SERVER_ATTRS), label="family",
                        doc="N alike servers, e.g. family node[0..1023]"),
    "job": BlockSpec({
        "role": AttrSpec(p_choice("serve", "prefill", "decode", "train"), doc="what the job does"),
        "framework": AttrSpec(p_choice("vllm", "mindspore", "torch_npu", "megatron"),
                              doc="framework (default vllm)"),
        "servers": AttrSpec(p_server_refs, doc="servers whose devices the job uses (all devices)"),
        "on": AttrSpec(p_placement, repeat=True, doc="on SERVER [devices SET] [dp_local N]"),
        "dp": AttrSpec(p_int(1, MAX_PARALLEL), doc="data parallel size"),
        "tp": AttrSpec(p_int(1, MAX_PARALLEL), doc="tensor parallel size"),
        "pp": AttrSpec(p_int(1, MAX_PARALLEL), doc="pipeline parallel size"),
        "pcp": AttrSpec(p_int(1, MAX_PARALLEL), doc="prefill context parallel size"),
        "dcp": AttrSpec(p_int(1, MAX_PARALLEL), doc="decode context parallel size"),
        "expert_parallel": AttrSpec(p_bool, doc="expert parallel on/off"),
        "model_kind": AttrSpec(p_choice("moe", "dense"), doc="moe (default) or dense"),
        "order": AttrSpec(p_word, doc="Megatron-LM order string, e.g. tp-cp-ep-dp-pp"),
        "env": AttrSpec(p_env, repeat=True, doc="env NAME = value"),
        "policy": AttrSpec(p_policy, repeat=True, doc="policy RULE error|warn|allow"),
        "port": AttrSpec(p_port, doc="vLLM API server port (--port; default 8000)"),
        "dp_address": AttrSpec(p_address, doc="--data-parallel-address (default: head's host)"),
        "dp_rpc_port": AttrSpec(p_port, doc="--data-parallel-rpc-port (default 29550)"),
        "kv_connector": AttrSpec(p_choice("mooncake", "mooncake_layerwise", "llmdatadist"),
                                 doc="KV transfer connector (PD disaggregation)"),
        "kv_port": AttrSpec(p_port, doc="kv_transfer_config kv_port (Mooncake: + rank)"),
        "ray_port": AttrSpec(p_port, doc="Ray head (GCS) port; Ray is used when given"),
        "model": AttrSpec(p_path, doc="model path or name (vllm serve MODEL)"),
        "served_name": AttrSpec(p_word, doc="--served-model-name"),
        "entry": AttrSpec(p_path, doc="script run per rank / by torchrun (mindspore, "
                          "torch_npu, megatron)"),
        "args": AttrSpec(p_args, repeat=True, doc='extra arguments on every node, e.g. '
                         'args "--max-model-len 8192"'),
        "head_args": AttrSpec(p_args, repeat=True, doc="extra arguments on the head only"),
        "worker_args": AttrSpec(p_args, repeat=True, doc="extra arguments on the other nodes"),
        "executor": AttrSpec(p_choice("mp", "ray"), doc="vLLM executor (default: ray when "
                             "a replica spans servers with dp 1, or ray_port is given)"),
        "lb": AttrSpec(p_choice("internal", "external", "hybrid"),
                       doc="DP load balancing (default internal)"),
        "master_port": AttrSpec(p_port, doc="--master-port (vLLM --nnodes, torchrun, torch_npu)"),
    }, doc="a job: which devices, parallel sizes, role, framework, environment"),
    "network": BlockSpec({
        "cidr": AttrSpec(p_cidr, doc="the host network, e.g. 10.0.0.0/24"),
        "nic": AttrSpec(p_nic_list, doc="host NIC name(s) on this network, e.g. eno0"),
    }, doc="a host network: servers whose `nic` is listed have their `host` in `cidr`"),
    "fabric": BlockSpec({
        "subnets": AttrSpec(p_cidr_list, doc="device networks routed to each other"),
    }, doc="a routed RoCE fabric: device subnets (with gateways) in it reach each other"),
    "disaggregation": BlockSpec({
        "prefill": AttrSpec(p_job_refs, repeat=True, doc="prefill job(s), e.g. prefill p1, p2"),
        "decode": AttrSpec(p_job_refs, repeat=True, doc="decode job(s)"),
    }, label="optional", doc="prefill/decode pairing: which prefill jobs feed which decode jobs"),
}


def elaborate(source: SourceFile) -> tuple[list[Decl], list[Diagnostic]]:
    """Turn the generic AST into typed :class:`Decl` records, one per top-level block,
    in source order. Every problem becomes a diagnostic (RTC110-RTC117); a block with
    errors is still returned with the attributes that could be read."""
    diags: list[Diagnostic] = []
    decls = [_elaborate_block(b, diags) for b in source.blocks]
    return decls, diags


def _elaborate_block(block: Block, diags: list[Diagnostic]) -> Decl:
    spec = BLOCK_SPECS[block.kind]
    name = block.label.text if block.label else None
    name_span = block.label.span if block.label else block.kind_span
    if spec.label in ("required", "family") and block.label is None:
        diags.append(error(BAD_LABEL, f"this {block.kind} block has no name", block.kind_span,
                           hint=f"write `{block.kind} NAME {{`" if spec.label == "required"
                           else "write `family node[0..15] {`"))
    if spec.label == "family" and block.label is not None:
        try:
            parse_family_name(block.label.text, block.label.span, BAD_LABEL)
        except ValueProblem as p:
            diags.append(error(p.code, p.message, p.span, hint=p.hint))
    attrs: dict = {}
    failed: set[str] = set()
    children = []
    for item in block.body:
        if isinstance(item, Block):
            diags.append(error(UNKNOWN_ATTRIBUTE, f"a {item.kind} block cannot be nested inside "
                               f"a {block.kind} block", item.kind_span,
                               hint="write blocks at the top level of the file"))
            continue
        aspec = spec.attrs.get(item.key)
        if aspec is None:
            close = difflib.get_close_matches(item.key, list(spec.attrs), n=1, cutoff=0.6)
            hint = (f"did you mean '{close[0]}'?" if close else
                    f"a {block.kind} block accepts: " + ", ".join(spec.attrs) if spec.attrs else
                    f"{block.kind} blocks take no attributes yet")
            where = f"{block.kind} '{name}'" if name else f"the {block.kind} block"
            from rtc.syntax.parser import _show

            diags.append(error(UNKNOWN_ATTRIBUTE, f"unknown attribute {_show(item.key)} in {where}",
                               item.key_span, hint=hint))
            continue
        try:
            _check_quotes(item)
            value = aspec.parse(item)
        except ValueProblem as p:
            diags.append(error(p.code, p.message, p.span, hint=p.hint))
            failed.add(item.key)
            continue
        loc = Located(value, _value_span(item))
        if aspec.repeat:
            if item.key == "env":
                first = next((x for x in attrs.get("env", ()) if x.value[0] == value[0]), None)
                if first is not None:
                    where = f"{block.kind} '{name}'" if name else f"the {block.kind} block"
                    diags.append(error(DUPLICATE_ATTRIBUTE, f"env {value[0]} is set twice in "
                                       f"{where}", item.args[0].span,
                                       hint=f"keep one `env {value[0]} = ...` line; rtc will "
                                            "not pick one of two values silently",
                                       related=[_related(first.span, "first set here")]))
                    failed.add(item.key)
                    continue
            attrs[item.key] = attrs.get(item.key, ()) + (loc,)
        elif item.key in attrs:
            diags.append(error(DUPLICATE_ATTRIBUTE, f"'{item.key}' is given twice in "
                               f"{block.kind} '{name}'", item.key_span,
                               hint="keep one of them",
                               related=[_related(attrs[item.key].span, "first given here")]))
        else:
            attrs[item.key] = loc
    if block.kind == "job":
        _check_world(attrs, failed, diags, name)
    return Decl(block.kind, name, name_span, attrs, block.span, tuple(children),
                frozenset(failed))


def _check_world(attrs: dict, failed: set, diags: list[Diagnostic], name: str | None) -> None:
    """Reject a job whose dp*pp*pcp*tp is larger than any cluster rtc can describe (each
    size alone is capped by its parser); the error sits at the largest size."""
    given = [(k, attrs[k]) for k in WORLD_KEYS if k in attrs]
    world = 1
    for _k, loc in given:
        world *= loc.value
    if world <= MAX_WORLD or not given:
        return
    key, loc = max(given, key=lambda kv: kv[1].value)
    sizes = " x ".join(f"{k} {attrs[k].value}" for k in WORLD_KEYS if k in attrs)
    diags.append(error(BAD_VALUE, f"job {name or ''} asks for a world of {world:,} devices "
                       f"({sizes}); rtc handles at most {MAX_WORLD:,} per job", loc.span,
                       hint=f"check '{key}' for a typo; dp*pp*pcp*tp must equal the number of "
                            "devices the job is given"))
    for k, _loc in given:
        failed.add(k)
        del attrs[k]  # never lower an absurd world


def _value_span(attr: Attribute) -> Span:
    first = attr.args[0].span if attr.args else attr.key_span
    last = attr.args[-1].span if attr.args else attr.key_span
    return Span(first.file, first.line, first.column, last.end_line, last.end_column)


def _related(span: Span, message: str):
    from rtc.diagnostics import Related

    return Related(span, message)
