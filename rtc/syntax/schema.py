"""The shape of the language: which attributes each block accepts and what their words mean.

The grammar only knows blocks, attributes and words; this module turns a generic
:class:`~rtc.syntax.ast.SourceFile` into typed declarations (:mod:`rtc.syntax.decls`: one
record per block, one field per attribute: integers, device sets,
:class:`~rtc.syntax.values.Template`, address plans, ...), with the span of every value.
Unknown keys get "did you mean"; bad literals get a precise column. Adding an attribute is
one entry in :data:`BLOCK_SPECS` and one field of its block's declaration class.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Callable

from rtc.diagnostics import Diagnostic, Related, Span, error
from rtc.rules import rule
from rtc.syntax.ast import Attribute, Block, SourceFile
from rtc.syntax.attribute_values import (MAX_PARALLEL, check_quotes, p_address,
                                         p_address_plan, p_args, p_bool, p_choice, p_cidr,
                                         p_cidr_list, p_devset, p_env, p_int, p_job_refs,
                                         p_nic, p_nic_list, p_path, p_placement, p_policy,
                                         p_port, p_server_refs, p_super_device_plan,
                                         p_template, p_word, value_span)
from rtc.syntax.decls import (ClusterDecl, Decl, DisaggregationDecl, FabricDecl, JobDecl,
                              NetworkDecl, ServerDecl)
from rtc.syntax.values import BAD_VALUE, ValueProblem, parse_family_name, show_text

UNKNOWN_ATTRIBUTE = rule("RTC110", "unknown-attribute", "error",
                         "A block holds an attribute it does not know.", """
    What: e.g. `hots 10.0.0.6` in a server, or `tpp 8` in a job.
    Why: a misspelt fact would otherwise be silently ignored and the plan would differ
    from what you wrote.
    Example: `tpp 8` -> did you mean `tp`?
    Fix: use one of the block's attributes (rtc lists the closest one).""")
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
class AttrSpec:
    """How one attribute is read: its value parser, whether it may repeat, and a one-line
    description used in "did you mean" hints and the docs."""

    parse: Callable
    repeat: bool = False
    doc: str = ""


@dataclass(frozen=True)
class BlockSpec:
    """Which attributes a block kind accepts, the declaration class they fill (one field
    per attribute, same name), and whether the block needs a label."""

    decl: type
    attrs: dict
    label: str = "required"      # required | optional | family
    doc: str = ""

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
    "cluster": BlockSpec(ClusterDecl, {
        "hardware": AttrSpec(p_word, doc="hardware preset: atlas-800t-a2, atlas-800-a3, ..."),
        "cann": AttrSpec(p_word, doc="CANN version, e.g. 8.2.RC1"),
        "devices_per_server": AttrSpec(p_int(1, 64), doc="NPUs per server (generic hardware)"),
        "policy": AttrSpec(p_policy, repeat=True, doc="policy RULE error|warn|allow"),
        "vllm_version": AttrSpec(p_word, doc="vLLM version the launch scripts target"),
    }, label="optional", doc="the cluster: hardware preset, CANN version, policies"),
    "server": BlockSpec(ServerDecl, dict(_SERVER_ATTRS), doc="one server"),
    "family": BlockSpec(ServerDecl, dict(_SERVER_ATTRS), label="family",
                        doc="N alike servers, e.g. family node[0..1023]"),
    "job": BlockSpec(JobDecl, {
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
    "network": BlockSpec(NetworkDecl, {
        "cidr": AttrSpec(p_cidr, doc="the host network, e.g. 10.0.0.0/24"),
        "nic": AttrSpec(p_nic_list, doc="host NIC name(s) on this network, e.g. eno0"),
    }, doc="a host network: servers whose `nic` is listed have their `host` in `cidr`"),
    "fabric": BlockSpec(FabricDecl, {
        "subnets": AttrSpec(p_cidr_list, doc="device networks routed to each other"),
    }, doc="a routed RoCE fabric: device subnets (with gateways) in it reach each other"),
    "disaggregation": BlockSpec(DisaggregationDecl, {
        "prefill": AttrSpec(p_job_refs, repeat=True, doc="prefill job(s), e.g. prefill p1, p2"),
        "decode": AttrSpec(p_job_refs, repeat=True, doc="decode job(s)"),
    }, label="optional", doc="prefill/decode pairing: which prefill jobs feed which decode jobs"),
}


def elaborate(source: SourceFile) -> tuple[list[Decl], list[Diagnostic]]:
    """Turn the generic AST into typed declarations (:mod:`rtc.syntax.decls`), one per
    top-level block, in source order. Every problem becomes a diagnostic (RTC110-RTC117); a
    block with errors is still returned with the attributes that could be read."""
    diags: list[Diagnostic] = []
    decls = [_elaborate_block(b, diags) for b in source.blocks]
    return decls, diags


def _elaborate_block(block: Block, diags: list[Diagnostic]) -> Decl:
    spec = BLOCK_SPECS[block.kind]
    name = block.label.text if block.label else None
    name_span = block.label.span if block.label else block.kind_span
    _check_label(block, spec, diags)
    where = f"{block.kind} '{name}'" if name else f"the {block.kind} block"
    values: dict = {}
    spans: dict[str, Span] = {}
    lines: dict[str, list[Span]] = {}    # repeatable attribute -> the span of each line
    failed: set[str] = set()
    for item in block.body:
        aspec = _attribute_spec(item, block, spec, where, diags)
        if aspec is None:
            continue
        try:
            check_quotes(item)
            value = aspec.parse(item)
        except ValueProblem as p:
            diags.append(error(p.code, p.message, p.span, hint=p.hint))
            failed.add(item.key)
            continue
        span = value_span(item)
        if not aspec.repeat and item.key in spans:
            diags.append(error(DUPLICATE_ATTRIBUTE, f"'{item.key}' is given twice in "
                               f"{block.kind} '{name}'", item.key_span, hint="keep one of them",
                               related=[Related(spans[item.key], "first given here")]))
        elif not aspec.repeat:
            values[item.key], spans[item.key] = value, span
        elif item.key == "env" and _env_twice(value, values, lines, item, where, diags):
            failed.add(item.key)
        else:
            values[item.key] = values.get(item.key, ()) + (value,)
            lines.setdefault(item.key, []).append(span)
            spans.setdefault(item.key, span)
    if block.kind == "job":
        _check_world(values, spans, failed, diags, name)
    return spec.decl(kind=block.kind, name=name, name_span=name_span, span=block.span,
                     spans=spans, failed=frozenset(failed), **values)


def _check_label(block: Block, spec: BlockSpec, diags: list[Diagnostic]) -> None:
    """RTC117 for a block without the label its kind needs, or a bad family name."""
    if spec.label in ("required", "family") and block.label is None:
        diags.append(error(BAD_LABEL, f"this {block.kind} block has no name", block.kind_span,
                           hint=f"write `{block.kind} NAME {{`" if spec.label == "required"
                           else "write `family node[0..15] {`"))
    if spec.label == "family" and block.label is not None:
        try:
            parse_family_name(block.label.text, block.label.span, BAD_LABEL)
        except ValueProblem as p:
            diags.append(error(p.code, p.message, p.span, hint=p.hint))


def _attribute_spec(item, block: Block, spec: BlockSpec, where: str,
                    diags: list[Diagnostic]) -> AttrSpec | None:
    """The spec of one body item, or None after reporting it (RTC110: a nested block or an
    unknown attribute, with the closest known one)."""
    if isinstance(item, Block):
        diags.append(error(UNKNOWN_ATTRIBUTE, f"a {item.kind} block cannot be nested inside "
                           f"a {block.kind} block", item.kind_span,
                           hint="write blocks at the top level of the file"))
        return None
    aspec = spec.attrs.get(item.key)
    if aspec is None:
        close = difflib.get_close_matches(item.key, list(spec.attrs), n=1, cutoff=0.6)
        hint = (f"did you mean '{close[0]}'?" if close else
                f"a {block.kind} block accepts: " + ", ".join(spec.attrs) if spec.attrs else
                f"{block.kind} blocks take no attributes yet")
        diags.append(error(UNKNOWN_ATTRIBUTE, f"unknown attribute {show_text(item.key)} in "
                           f"{where}", item.key_span, hint=hint))
    return aspec


def _env_twice(line, values: dict, lines: dict, item: Attribute, where: str,
               diags: list[Diagnostic]) -> bool:
    """RTC115 when ``env NAME`` was already set in this block (True: the line is dropped)."""
    firsts = [span for old, span in zip(values.get("env", ()), lines.get("env", ()))
              if old.name == line.name]
    if not firsts:
        return False
    diags.append(error(DUPLICATE_ATTRIBUTE, f"env {line.name} is set twice in {where}",
                       item.args[0].span,
                       hint=f"keep one `env {line.name} = ...` line; rtc will not pick one of "
                            "two values silently",
                       related=[Related(firsts[0], "first set here")]))
    return True


def _check_world(values: dict, spans: dict, failed: set, diags: list[Diagnostic],
                 name: str | None) -> None:
    """Reject a job whose dp*pp*pcp*tp is larger than any cluster rtc can describe (each
    size alone is capped by its parser); the error sits at the largest size."""
    given = [k for k in WORLD_KEYS if k in values]
    world = 1
    for k in given:
        world *= values[k]
    if world <= MAX_WORLD or not given:
        return
    key = max(given, key=lambda k: values[k])
    sizes = " x ".join(f"{k} {values[k]}" for k in given)
    diags.append(error(BAD_VALUE, f"job {name or ''} asks for a world of {world:,} devices "
                       f"({sizes}); rtc handles at most {MAX_WORLD:,} per job", spans[key],
                       hint=f"check '{key}' for a typo; dp*pp*pcp*tp must equal the number of "
                            "devices the job is given"))
    for k in given:
        failed.add(k)
        del values[k], spans[k]  # never lower an absurd world


#: The rules this module reports (collected by rtc.report.rule_catalogue).
RULES = (UNKNOWN_ATTRIBUTE, DUPLICATE_ATTRIBUTE, MISSING_ATTRIBUTE, BAD_LABEL)
