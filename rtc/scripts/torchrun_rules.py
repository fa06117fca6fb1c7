"""Rules of torchrun / msrun launches across the nodes of one job (RTC730, RTC731): the
facts only the launch lines carry. The job's sizes and devices are judged by the
compiler's own rules (RTC210, RTC723 node ranks ...).

* RTC730: nodes that give one job's identity (``--nnodes``, ``--nproc_per_node``,
  ``--master_port``, the script) but another ``--master_addr`` than node rank 0 are one
  job (:func:`rtc.scripts.lift.group_launches` joins them) whose nodes never meet: the
  error is at the differing value, with node rank 0's value as the related location.
* RTC731: a launch that starts more processes per node than the node exposes devices
  (``ASCEND_RT_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES``, else the ``docker run
  --device /dev/davinciN`` it is given), as RTC794 does for a pod's device request.

torchrun's flags: pytorch ``torch/distributed/run.py`` ``get_args_parser`` (2.x):
``--master-addr`` default ``127.0.0.1``, ``--node-rank`` default 0, each also spelt with
``_``; every local rank k uses device k of the ones the process sees.
"""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.network.env import parse_visible_devices
from rtc.rules import rule
from rtc.scripts.lift import Group, int_value, master_flag, node_rank
from rtc.scripts.values import NODE_DEVICES_MAX, NODE_PROC_FLAGS

MASTER_DIFFERS = rule("RTC730", "torchrun-master-addr-differs", "error",
                      "A node of a torchrun / msrun job names another --master_addr than node rank 0's.", """
    What: the scripts of one torchrun (or msrun) job, i.e. the same `--nnodes`,
    `--nproc_per_node`, `--master_port` and training script, where a node gives a
    `--master_addr` other than node rank 0's (or leaves it out: torchrun's default is
    127.0.0.1, the node itself).
    Why: node rank 0 serves the rendezvous store at its `--master_addr:--master_port`;
    a node that dials another address never joins it, and every node waits until the
    rendezvous timeout ("Timed out ... waiting for workers" / connection refused).
    Example: node 0 runs `torchrun --nnodes 2 --node_rank 0 --master_addr 10.20.0.1` and
    node 1 `--node_rank 1 --master_addr 10.20.0.3`, a host no node has.
    Fix: give every node `--master_addr` of node rank 0 (the same text on all nodes).""")
PROCS_OVER_DEVICES = rule("RTC731", "launch-procs-exceed-devices", "error",
                          "A torchrun / msrun launch starts more processes per node than the node exposes devices.", """
    What: `torchrun --nproc_per_node N` (msrun `--local_worker_num N`) where the launch
    sees fewer than N devices: `ASCEND_RT_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` list
    fewer ids, or the container is given fewer `/dev/davinciN` devices.
    Why: local rank k uses the k-th visible device; the ranks beyond the visible ones have
    no device and fail at start-up, and the other ranks wait for them in the first
    collective until the timeout.
    Example: `ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7` with `--nproc_per_node 16`.
    Fix: make --nproc_per_node the number of devices the node exposes, or expose more.""")


def check(groups: list[Group], jobs: list, nodes: list) -> list:
    """RTC730 and RTC731 for the torchrun / msrun jobs of ``groups`` (``jobs``: the
    lifted jobs in the same order, one per group; ``nodes``: every node given)."""
    hosts = {str(n.host_ip) for n in nodes if n.host_ip is not None}
    out = []
    for g, job in zip(groups, jobs):
        out += _other_masters(g, job.name, hosts)
        for m in g.members:
            out += _procs_over_devices(m, job.name)
    return out


def _other_masters(g: Group, name: str, hosts: set) -> list:
    head = next((m for m in g.members if node_rank(m.main) == 0), None)
    hflag = master_flag(head.main) if head is not None else None
    if head is None or hflag is None or not g.masters:
        return []
    out = []
    for m, flag in g.masters:
        la = m.main
        value = flag.value if flag is not None else "127.0.0.1"
        said = "--master_addr" if flag is not None else "no --master_addr (torchrun's default)"
        where = "its own host" if value == str(m.node.host_ip) else \
            "the host of no node given" if value not in hosts else \
            "another node's host, where no rendezvous is served"
        port = la.value("--master_port") or la.value("--master-port") or "29500"
        out.append(error(
            MASTER_DIFFERS,
            f"job {name}: {m.node.name} gives {said} {value}, but node rank 0 "
            f"({head.node.name}) gives --master_addr {hflag.value}: {m.node.name} dials the "
            f"rendezvous at {value}:{port}, {where}, and every node of the job waits until "
            "the rendezvous timeout",
            (flag.value_span or flag.span) if flag is not None else la.span,
            subject=f"job {name}, server {m.node.name}",
            related=[Related(hflag.value_span or hflag.span,
                             f"{head.node.name} (node rank 0): --master_addr {hflag.value}")],
            hint=f"give {m.node.name} --master_addr {hflag.value} (node rank 0's address)"))
    return out


def _procs_over_devices(m, name: str) -> list:
    out = []
    for la in m.launches:
        if la.kind not in ("torchrun", "msrun"):
            continue
        flag = next((la.flags[f] for f in NODE_PROC_FLAGS if f in la.flags), None)
        per = int_value(flag.value) if flag is not None else None
        seen = _exposed(la)
        if per is None or per > NODE_DEVICES_MAX or seen is None or per <= len(seen[0]):
            continue
        ids, what, span = seen
        shown = ",".join(map(str, ids))
        out.append(error(
            PROCS_OVER_DEVICES,
            f"job {name}: {m.node.name} starts {per} processes per node ({flag.name} "
            f"{flag.value}) but the node exposes {len(ids)} devices ({what} {shown}): local "
            f"ranks {len(ids)}..{per - 1} have no device",
            flag.value_span or flag.span, subject=f"job {name}, server {m.node.name}",
            related=[Related(span, f"{what} {shown}")] if span is not None else (),
            hint=f"give {flag.name} {len(ids)}, or expose {per} devices to the node"))
    return out


def _exposed(la) -> tuple | None:
    """(device ids, what gives them, where) the launch sees, or None when not known."""
    for var in ("ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        s = la.env.get(var)
        if s is not None:
            if s.unresolved:
                return None
            got = parse_visible_devices(s.value)
            return (got.ids, var, s.span) if got.problem is None and got.ids else None
    davinci = [w for w in la.devices or () if w.text.startswith("/dev/davinci")
               and w.text[12:].isdigit()]
    if davinci:
        return (tuple(int(w.text[12:]) for w in davinci), "docker run --device /dev/davinciN",
                davinci[0].span)
    return None


RULES = (MASTER_DIFFERS, PROCS_OVER_DEVICES)
