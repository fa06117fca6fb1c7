"""Typed declarations: one record per top-level block, each attribute a typed field.

:func:`rtc.syntax.schema.elaborate` turns the generic syntax tree into these records; the
lowering passes (:mod:`rtc.model.lower_decls`) read their fields. A field is None (or ``()``
for repeatable attributes) when the attribute was not written or could not be read; the
attributes that were written but could not be read (an error was reported) are in
``failed``, so that lowering never falls back to a default for them as if they had not been
written. ``spans[key]`` is where the attribute's value was written (its first line for a
repeatable attribute).

The records are read-only by convention. They are plain classes whose annotated class
attributes are the fields and their defaults (:meth:`Decl.fields` lists them), not
dataclasses: a dataclass compiles its generated methods when the module is imported, about
a third of this module's import cost per class, and every ``rtc`` run imports it.
"""

from __future__ import annotations

from typing import NamedTuple

from rtc.diagnostics import Span
from rtc.syntax.ast import Word
from rtc.syntax.values import Template


class AddressPlan(NamedTuple):
    """How a server's per-device addresses (or super device ids) are given.

    ``kind`` is ``"list"`` (one template per device, in device order), ``"step"`` (a start
    address plus ``step`` per device position: device at position k gets start + k*step),
    ``"template"`` (one template rendered per device with d and k), ``"base"`` (super
    device ids: the template's value plus the device id) or ``"inventory"`` (taken from the
    server's inventory captures)."""

    kind: str
    items: tuple[Template, ...] = ()
    step: int = 1
    #: ``inventory`` plans: which captured address (``ip``: ``-ip -g`` / hccn.conf;
    #: ``vnic``: the A3 vNIC address of ``-vnic -g``, written ``device_ip inventory vnic``).
    source: str = "ip"


class PlacementRef(NamedTuple):
    """A job line ``on SERVER [devices SET] [dp_local N]``."""

    server: Word
    devices: tuple[int, ...] | None
    devices_span: Span | None
    dp_local: int | None


class EnvLine(NamedTuple):
    """``env NAME = value``: the variable, its value, and where the value was written."""

    name: str
    value: str
    span: Span


class ParamLine(NamedTuple):
    """``param KEY = VALUE`` in a ``links`` block: the cost-model parameter
    (``roce.alpha``), its value as written (``20us``), and where key and value were
    written. Checked against the parameter table by :mod:`rtc.checks.cost_inputs`."""

    key: str
    value: str
    span: Span
    key_span: Span


class PolicyLine(NamedTuple):
    """``policy RULE error|warn|allow``: a rule id or name as written, the level, and the
    span of the whole value (the rule name starts at its first column)."""

    rule: str
    level: str
    span: Span


class NetInstanceLine(NamedTuple):
    """``net_instance LAYER NAME``: the rank table 2.0 ``net_instance_id`` of the server at
    network layer ``layer`` (a template in i), and where the line was written."""

    layer: int
    name: Template
    span: Span


class LayerLine(NamedTuple):
    """``plane`` / ``port_eid`` / ``level_ip`` lines (rank table 2.0): a network ``layer``,
    its values (templates in i, d, k: one per die, or one for every die) and where the line
    was written."""

    layer: int
    values: tuple
    span: Span


class BackupLine(NamedTuple):
    """``backup DEVICE replaces LOCAL``: the server's spare NPU (rank table 2.0 backup rank,
    ``local_id`` 64) and the ``local_id`` it stands in for."""

    device: int
    replaces: int
    span: Span


class Decl:
    """What every block has: its kind, label (None when omitted) and spans, the spans of
    the attributes that were read (attribute -> Span of its value), and the attributes that
    could not be read. A subclass declares one annotated class attribute per attribute of
    its block, with its default; the constructor takes them as keywords."""

    kind: str
    name: str | None
    name_span: Span
    span: Span
    spans: dict
    failed: frozenset

    def __init__(self, *, kind: str, name: str | None, name_span: Span, span: Span,
                 spans: dict | None = None, failed: frozenset = frozenset(), **values):
        self.kind, self.name, self.name_span, self.span = kind, name, name_span, span
        self.spans = {} if spans is None else spans
        self.failed = failed
        self.__dict__.update(values)

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """The attribute fields of this kind of declaration (its annotated names, without
        the common ones of :class:`Decl`)."""
        own = [n for c in reversed(cls.__mro__[:-1]) if c is not Decl
               for n in c.__dict__.get("__annotations__", ())]
        return tuple(own)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.kind} {self.name!r} at {self.name_span}>"

    def span_of(self, key: str) -> Span:
        """Where attribute ``key`` was written (the block's label when it was not)."""
        return self.spans.get(key, self.name_span)

    def line_span(self, key: str, k: int) -> Span:
        """Where the ``k``-th line of the repeatable attribute ``key`` was written (the
        first line's span, or the block's, when not known)."""
        got = getattr(self, "line_spans", {}).get(key, ())
        return got[k] if k < len(got) else self.span_of(key)

    def given(self, key: str) -> bool:
        """True when attribute ``key`` was written and read."""
        return key in self.spans


class ClusterDecl(Decl):
    """``cluster NAME { hardware PRESET ... }``."""

    hardware: str | None = None
    cann: str | None = None
    devices_per_server: int | None = None
    policy: tuple[PolicyLine, ...] = ()
    vllm_version: str | None = None
    nvlink_island: tuple[tuple[int, ...], ...] = ()


class ServerDecl(Decl):
    """``server NAME { ... }`` or ``family PREFIX[FIRST..LAST] { ... }`` (``kind`` tells)."""

    server_id: Template | None = None
    host: Template | None = None
    nic: str | None = None
    devices: tuple[int, ...] | None = None
    device_ip: AddressPlan | None = None
    gateway: AddressPlan | None = None
    prefix: int | None = None
    super_pod: Template | None = None
    super_device_id: AddressPlan | None = None
    inventory: str | None = None
    visible_devices: tuple[int, ...] | None = None
    eid: AddressPlan | None = None
    net_instance: tuple[NetInstanceLine, ...] = ()
    plane: tuple[LayerLine, ...] = ()
    port_eid: tuple[LayerLine, ...] = ()
    level_ip: tuple[LayerLine, ...] = ()
    backup: BackupLine | None = None
    ib_hca: tuple[str, ...] | None = None
    nccl_topo_file: bool | None = None
    container_ip: Template | None = None


class JobDecl(Decl):
    """``job NAME { ... }``: devices, parallel sizes, launch settings (None: not given)."""

    role: str | None = None
    framework: str | None = None
    servers: tuple[Word, ...] | None = None
    on: tuple[PlacementRef, ...] = ()
    dp: int | None = None
    tp: int | None = None
    pp: int | None = None
    pcp: int | None = None
    dcp: int | None = None
    expert_parallel: bool | None = None
    model_kind: str | None = None
    order: str | None = None
    env: tuple[EnvLine, ...] = ()
    policy: tuple[PolicyLine, ...] = ()
    port: int | None = None
    dp_address: Template | None = None
    dp_rpc_port: int | None = None
    kv_connector: str | None = None
    kv_port: int | None = None
    ray_port: int | None = None
    model: str | None = None
    served_name: str | None = None
    entry: str | None = None
    args: tuple[tuple[str, ...], ...] = ()          # one argv tuple per line
    head_args: tuple[tuple[str, ...], ...] = ()
    worker_args: tuple[tuple[str, ...], ...] = ()
    executor: str | None = None
    lb: str | None = None
    master_port: int | None = None
    cost_model: str | None = None
    decode_seqs: int | None = None
    prefill_tokens: int | None = None
    mtp_tokens: int | None = None


class NetworkDecl(Decl):
    """``network NAME { cidr ...  nic ... }``: a host network."""

    cidr: object = None                              # ipaddress.IPv4Network | IPv6Network
    nic: tuple[str, ...] | None = None


class FabricDecl(Decl):
    """``fabric NAME { subnets ... }``: device subnets routed to each other."""

    subnets: tuple[tuple[object, Span], ...] | None = None   # (network, span)


class DisaggregationDecl(Decl):
    """``disaggregation [NAME] { prefill JOB, ...  decode JOB, ... }`` (one tuple of job
    name words per line)."""

    prefill: tuple[tuple[Word, ...], ...] = ()
    decode: tuple[tuple[Word, ...], ...] = ()


class LinksDecl(Decl):
    """``links [NAME] { preset nominal|hccl-plan  param KEY = VALUE ... }``: the cost
    model's link parameters for this cluster (reference ``cost-model.md`` §1.6)."""

    preset: str | None = None
    param: tuple[ParamLine, ...] = ()
