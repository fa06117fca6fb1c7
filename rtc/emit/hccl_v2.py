"""Emit the HCCL rank table version 2.0 (Ascend 950) and the per-server topology file it
is paired with, from a checked Topology whose preset is an A5 one (:attr:`Preset.is_a5`).

Formats (HCCL user guide, hicann/hccl @09300b70
``docs/zh/user_guide/cluster_info_config/rank_table_config_a5.md``; the parser's checks,
libochao-huawei/hcomm @8958adbf ``src/coll_communicator_mgr/rank_graph/rank_table_info/``
``rank_table_info.cc``; ``schemas/hccl-v2.0.schema.json`` and ``schemas/topo-v2.0.schema.json``)::

    {"status": "completed", "version": "2.0", "rank_count": 16,
     "rank_list": [{"rank_id": 0, "local_id": 0, "device_id": 0,
                    "level_list": [{"net_layer": 0, "net_instance_id": "0_0",
                                    "net_type": "TOPO_FILE_DESC", "net_attr": "",
                                    "rank_addr_list": [{"addr_type": "EID", "addr": "<32 hex>",
                                                        "ports": ["1/0", ...],
                                                        "plane_id": "0"}, ...]}, ...]}]}

    {"version": "2.0", "peer_count": 8, "peer_list": [{"local_id": 0}, ...],
     "edge_count": N, "edge_list": [{"net_layer": 0, "link_type": "PEER2PEER", ...}, ...]}

Numbers are JSON integers. Ranks are numbered like 1.x tables (servers in declared order,
devices ascending); ``local_id`` is the physical device id (MindCluster uses the physical
id in super pods), except for the server's ``backup`` device: local_id 64 and
``replaced_local_id`` (HCCL's backup rank; HCOMM ``UpdaterFor64Plus1``). Levels come from the preset (:class:`rtc.model.presets.NetLevel`), lowest
first:

* ``net_instance_id``: the server's ``net_instance LAYER NAME`` when written; else at a
  ``server`` level ``<super pod>_<n>`` (n = the server's place among its super pod's
  servers, MindCluster's ``<super pod>_<chassis>``) or the server_id outside a super pod;
  at a ``super_pod`` level the super pod (the level is left out for a server without
  one); at a ``cluster`` level ``CLUSTER`` (MindCluster mindcluster-tools const.py).
* addresses: at an ``eid`` level one EID per die with the die's ports there (the in-server
  mesh ports towards the server's other devices at the mesh level); where the server has
  ``level_ip`` for the layer, one IPV4 / IPV6 address per die with those ports instead;
  where it has ``port_eid``, one EID entry per port (MindCluster's physical EIDs); at a
  ``device_ip`` level the device's RoCE address (``IPV4`` / ``IPV6``). A die without
  ports there, or a device without the address, contributes no entry (checks report
  missing addresses). ``plane_id``: the server's ``plane`` line for the layer, else the
  preset's (the die number, or a fixed name such as ``CLUSTER``).
* mesh ports: peer b of device a uses ``mesh_ports[j]`` where j is b's place among the
  preset's other devices (a physical, not a per-job, numbering).

The topology file of a server lists every device of the server as a peer, one PEER2PEER
``1DMESH`` edge per device pair at the mesh level and one PEER2NET edge per device and
higher level (``position`` DEVICE). Output bytes are deterministic (2-space indent,
trailing newline).
"""

from __future__ import annotations

from ipaddress import IPv6Address

from rtc.diagnostics import Diagnostic, Severity, error
from rtc.model.net_instances import default_instances, net_instance
from rtc.model.presets import NetLevel, Preset
from rtc.model.topology import Device, Job, Server, Topology
from rtc.rules import SCHEMA_SELF

BACKUP_LOCAL_ID = 64  # the backup rank's local_id (HCOMM BACKUP_LOCAL_ID; the "64 + 1" spare)


def mesh_port(preset: Preset, a: int, b: int) -> str | None:
    """The ``die/port`` of device ``a``'s mesh link to device ``b`` (None when the preset's
    mesh has no port for it)."""
    j = b if b < a else b - 1
    return preset.mesh_ports[j] if 0 <= j < len(preset.mesh_ports) else None


def _plane(level: NetLevel, die: int) -> str:
    return str(die) if level.plane == "die" else level.plane


def _die_ports(preset: Preset, level: NetLevel, device_id: int, peers: tuple) -> tuple:
    """The ports of each die of ``device_id`` at ``level``: (die, [ports]) for the dies
    with ports there (the mesh ports towards ``peers`` at the 1DMESH level)."""
    if level.topo_type == "1DMESH":
        ports = [p for b in peers if b != device_id
                 for p in (mesh_port(preset, device_id, b),) if p is not None]
    else:
        ports = list(level.ports)
    out = []
    for die in range(preset.dies_per_device):
        mine = [p for p in ports if p.split("/", 1)[0] == str(die)]
        if mine:
            out.append((die, mine))
    return tuple(out)


def _addresses(preset: Preset, level: NetLevel, dev: Device, peers: tuple,
               cache: dict) -> list:
    """The rank_addr_list of ``dev`` at ``level``. ``cache`` holds the port lists per
    (layer, device id, peers): the same list objects serve every server with those
    devices (65,536 ranks share a few dozen lists; the document is read-only)."""
    if level.address == "device_ip":
        ip = dev.device_ip
        if ip is None or not level.ports:
            return []
        key = (level.net_layer, "ip")
        ports = cache.get(key)
        if ports is None:
            ports = cache[key] = list(level.ports)
        return [{"addr_type": _ip_type(ip), "addr": str(ip), "ports": ports,
                 "plane_id": _plane_of(level, dev, 0)}]
    if dev.eids is None and dev.port_eids is None and dev.port_ips is None:
        return []
    key = (level.net_layer, dev.device_id, peers)
    per_die = cache.get(key)
    if per_die is None:
        per_die = cache[key] = _die_ports(preset, level, dev.device_id, peers)
    if dev.port_ips is not None or dev.port_eids is not None:
        got = _per_port_addresses(level, dev, per_die)
        if got is not None:
            return got
    eids = dev.eids
    if eids is None:
        return []
    return [{"addr_type": "EID", "addr": eids[die], "ports": mine,
             "plane_id": _plane_of(level, dev, die)} for die, mine in per_die if die < len(eids)]


def _ip_type(ip) -> str:
    return "IPV6" if isinstance(ip, IPv6Address) else "IPV4"


def _plane_of(level: NetLevel, dev: Device, die: int) -> str:
    """The plane_id of ``die`` of ``dev`` at ``level``: its ``plane`` line, else the
    preset's (:func:`_plane`)."""
    names = dev.planes.get(level.net_layer) if dev.planes else None
    if names:
        return names[die] if len(names) > 1 else names[0]
    return _plane(level, die)


def _per_port_addresses(level: NetLevel, dev: Device, per_die: tuple) -> list | None:
    """The ``level_ip`` addresses (one per die, with its ports) or ``port_eid`` EIDs (one
    entry per port) of ``dev`` at ``level``; None when the device has neither there."""
    layer = level.net_layer
    ips = {die: ip for lay, die, ip in dev.port_ips or () if lay == layer}
    if ips:
        return [{"addr_type": _ip_type(ips[die]), "addr": str(ips[die]), "ports": mine,
                 "plane_id": _plane_of(level, dev, die)} for die, mine in per_die if die in ips]
    eids = {port: eid for lay, port, eid in dev.port_eids or () if lay == layer}
    if not eids:
        return None
    return [{"addr_type": "EID", "addr": eids[p], "ports": [p],
             "plane_id": _plane_of(level, dev, die)}
            for die, mine in per_die for p in mine if p in eids]


def build_rank_table_v2(topo: Topology, job: Job | None = None) -> dict:
    """The 2.0 rank table of ``job`` (every device when None) in canonical key order."""
    preset = topo.preset
    defaults = default_instances(topo)
    ranks = []
    cache: dict = {}
    for server, devices in topo.rank_table_members(job):
        peers = tuple(d.device_id for d in server.devices)
        levels = [(lv, net_instance(server, lv, defaults)) for lv in preset.levels]
        for d in devices:
            level_list = [{"net_layer": lv.net_layer, "net_instance_id": inst,
                           "net_type": lv.net_type, "net_attr": "",
                           "rank_addr_list": _addresses(preset, lv, d, peers, cache)}
                          for lv, inst in levels if inst is not None]
            if server.backup is not None and server.backup[0] == d.device_id:
                ranks.append({"rank_id": len(ranks), "local_id": BACKUP_LOCAL_ID,
                              "device_id": d.device_id, "replaced_local_id": server.backup[1],
                              "level_list": level_list})
                continue
            ranks.append({"rank_id": len(ranks), "local_id": d.device_id,
                          "device_id": d.device_id, "level_list": level_list})
    return {"status": "completed", "version": "2.0", "rank_count": len(ranks),
            "rank_list": ranks}


def build_topo_file(topo: Topology, server: Server) -> dict:
    """The topology file of ``server`` (``schemas/topo-v2.0.schema.json``)."""
    preset = topo.preset
    ids = sorted(d.device_id for d in server.devices)
    edges = []
    for lv in preset.levels:
        if lv.scope == "super_pod" and server.super_pod_id is None:
            continue
        if lv.topo_type == "1DMESH":
            for x, a in enumerate(ids):
                for b in ids[x + 1:]:
                    pa, pb = mesh_port(preset, a, b), mesh_port(preset, b, a)
                    if pa is None or pb is None:
                        continue
                    edges.append({"net_layer": lv.net_layer, "link_type": "PEER2PEER",
                                  "protocols": list(lv.protocols), "local_a": a,
                                  "local_a_ports": [pa], "local_b": b, "local_b_ports": [pb],
                                  "topo_instance_id": 0, "topo_type": "1DMESH",
                                  "position": "DEVICE"})
            continue
        for a in ids:
            edges.append({"net_layer": lv.net_layer, "link_type": "PEER2NET",
                          "protocols": list(lv.protocols), "local_a": a,
                          "local_a_ports": list(lv.ports), "topo_instance_id": 0,
                          "topo_type": lv.topo_type, "position": "DEVICE"})
    return {"version": "2.0", "peer_count": len(ids),
            "peer_list": [{"local_id": a} for a in ids],
            "edge_count": len(edges), "edge_list": edges}


def topo_file_name(server: Server) -> str:
    """``topo-<server>.json``: the file ``rtc compile`` writes beside the rank table; mount
    it as the server's ``/usr/local/Ascend/driver/topo/`` file only after comparing it
    with the factory one (the preset's ``topo_file``)."""
    return f"topo-{server.name}.json"


def topology_files(topo: Topology, job: Job | None = None
                   ) -> tuple[list[tuple[str, str]], list[Diagnostic]]:
    """The topology file of each server in ``job``'s rank table (every server when None):
    ([(file name, text)], diagnostics), each validated against
    ``schemas/topo-v2.0.schema.json``. Empty for hardware without topology files; a
    diagnostic (RTC003) means the build is wrong and nothing must be written."""
    if not topo.preset.is_a5:
        return [], []
    from rtc.emit.jsontext import render
    from rtc.schema import validate_document

    out = []
    texts: dict = {}  # the file depends only on the device ids and the super pod level
    for server, _devs in topo.rank_table_members(job):
        name = topo_file_name(server)
        key = (tuple(d.device_id for d in server.devices), server.super_pod_id is None)
        text = texts.get(key)
        if text is None:
            doc = build_topo_file(topo, server)
            bad = [p for p in validate_document(doc, "topo-v2.0", filename=name)
                   if p.severity is Severity.ERROR]
            if bad:
                return [], [error(SCHEMA_SELF, f"internal error: the topology file {name} "
                                  f"rtc built fails schema topo-v2.0: {bad[0].message}", None,
                                  hint="please report this with your .rtc file; nothing "
                                  "was written")]
            text = texts[key] = render(doc)
        out.append((name, text))
    return out, []


def render_v2(doc: dict) -> str:
    """The JSON text of a 2.0 table, byte-identical to :func:`rtc.emit.jsontext.render`
    (``json.dumps(doc, indent=2, ensure_ascii=False)`` plus a newline), built one rank at a
    time: the pieces of one rank are joined before the next is written, so a 65,536-rank
    table never holds millions of small strings at once (it held 0.8 GB of them)."""
    from rtc.emit.jsontext import emitter, quote_json

    pieces: list[str] = []
    emit = emitter(pieces.append, 2)
    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value:
            chunks = []
            for item in value:
                emit(item, 2)
                chunks.append("".join(pieces))
                pieces.clear()
            text = "[\n    " + ",\n    ".join(chunks) + "\n  ]"
            del chunks
        else:
            emit(value, 1)
            text = "".join(pieces)
            pieces.clear()
        parts.append("\n  " + quote_json(key) + ": " + text)
    return "{" + ",".join(parts) + "\n}\n" if parts else "{}\n"
