"""super_pod_list rules of version 1.2 tables: every listed server exists (RTC637), every
server is in exactly one pod (RTC638), pod ids are unique (RTC639), the servers of a pod
are adjacent in server_list (RTC640)."""

from __future__ import annotations

from rtc.diagnostics import Related, error
from rtc.rules import rule

from ..jsonload import format_path
from ._context import Ctx, server_label

POD_UNKNOWN = rule("RTC637", "super-pod-unknown-server", "error",
                   "super_pod_list names a server_id that is not in server_list.", """
    What: a server_id under super_pod_list[].server_list has no entry in the top-level
    server_list.
    Why: HCCL rejects it ("server_id[...] in super_pod_list is not in server_list").
    Example: a pod listing "node_4" in a four-server table of node_0..node_3.
    Fix: list each server of server_list exactly once, by its exact server_id.""")
POD_MEMBERSHIP = rule("RTC638", "super-pod-membership", "error",
                      "A server is in no super pod, or in several.", """
    What: with super_pod_list present, every server of server_list must be listed in
    exactly one super pod.
    Why: HCCL counts the servers across all pods and requires the count to equal the
    number of servers ("serverNum ... inconsistent"); every rank needs a super pod.
    Example: node_2 listed under pods "0" and "1".
    Fix: list every server exactly once (the pod from `npu-smi info -t spod-info`).""")
POD_DUPLICATE = rule("RTC639", "duplicate-super-pod-id", "error",
                     "Two entries of super_pod_list have the same super_pod_id.", """
    What: super_pod_id repeats in super_pod_list.
    Why: HCCL requires super pod ids to be unique; one of the entries would be lost.
    Example: two entries with "super_pod_id": "0".
    Fix: merge the two entries' server lists into one.""")
POD_CONTIGUOUS = rule("RTC640", "super-pod-not-contiguous", "error",
                      "The servers of one super pod are not next to each other in server_list.", """
    What: server_list mixes super pods, e.g. pod 0, pod 1, pod 0.
    Why: the HCCL A3 docs require the servers of one super pod to be adjacent ("mixing
    them is not supported"); HCCL's hierarchical algorithms assume it.
    Example: node_0 (pod 0), node_2 (pod 1), node_1 (pod 0).
    Fix: order server_list pod by pod (and number ranks in that order).""")


def check_super_pods(ctx: Ctx, sl: list) -> None:
    """RTC637-RTC640 for the super_pod_list of a table whose server_list is ``sl``."""
    pods = ctx.doc.get("super_pod_list")
    if not isinstance(pods, list):
        return
    ids: dict[str, int] = {}
    for i, s in enumerate(sl):
        sid = s.get("server_id") if isinstance(s, dict) else None
        if isinstance(sid, str):
            ids.setdefault(sid, i)
    member: dict[str, list] = {}  # server_id -> [(pod index, path)] in listing order
    pod_ids: dict[str, tuple] = {}
    for k, pod in enumerate(pods):
        if not isinstance(pod, dict):
            continue
        _pod_id(ctx, k, pod, pod_ids)
        _pod_members(ctx, k, pod, pods, ids, member)
    for sid, i in ids.items():
        if sid not in member:
            ctx.add(error(POD_MEMBERSHIP, f"server {sid} is in no super pod: with super_pod_list "
                          "every server must be listed in exactly one", ctx.span(("server_list", i, "server_id")),
                          subject=f"server {sid}",
                          hint="add it to its pod's server_list (Super Pod ID from "
                               "`npu-smi info -t spod-info`)"))
    _adjacency(ctx, sl, pods, member)


def _pod_id(ctx: Ctx, k: int, pod: dict, pod_ids: dict[str, tuple]) -> None:
    """RTC639 for the super_pod_id of pod ``k``; ``pod_ids`` maps the ids seen to paths."""
    pid = pod.get("super_pod_id")
    pid_path = ("super_pod_list", k, "super_pod_id")
    if isinstance(pid, str) and pid_path not in ctx.bad:
        first = pod_ids.get(pid)
        if first is not None:
            ctx.add(error(POD_DUPLICATE, f"{format_path(pid_path)}: super_pod_id \"{pid}\" is "
                          "used twice", ctx.span(pid_path),
                          related=[Related(ctx.span(first), "first here")],
                          hint="merge the two entries' server lists"))
        else:
            pod_ids[pid] = pid_path


def _pod_members(ctx: Ctx, k: int, pod: dict, pods: list, ids: dict[str, int],
                 member: dict[str, list]) -> None:
    """RTC637 and RTC638 (listed twice) for the server_list of pod ``k``; records each
    listed server in ``member``."""
    members = pod.get("server_list")
    if not isinstance(members, list):
        return
    pid = pod.get("super_pod_id")
    for m, entry in enumerate(members):
        sid = entry.get("server_id") if isinstance(entry, dict) else None
        path = ("super_pod_list", k, "server_list", m, "server_id")
        if not isinstance(sid, str) or path in ctx.bad:
            continue
        if sid not in ids:
            import difflib

            close = difflib.get_close_matches(sid, list(ids), n=1)
            ctx.add(error(POD_UNKNOWN, f"{format_path(path)}: super pod {pid!r} lists "
                          f"server_id \"{sid}\", which is not in server_list", ctx.span(path),
                          hint=(f"did you mean \"{close[0]}\"? " if close else "")
                          + "list the server_ids of server_list exactly"))
            continue
        seen = member.setdefault(sid, [])
        if seen:
            how = "again in the same super pod" if seen[0][0] == k else \
                f"in super pod {pods[seen[0][0]].get('super_pod_id')!r} too"
            ctx.add(error(POD_MEMBERSHIP, f"{format_path(path)}: server {sid} is listed {how}; "
                          "a server belongs to exactly one super pod", ctx.span(path),
                          subject=f"server {sid}",
                          related=[Related(ctx.span(seen[0][1]), "first listed here")],
                          hint="list every server once"))
        seen.append((k, path))


def _adjacency(ctx: Ctx, sl: list, pods: list, member: dict[str, list]) -> None:
    """RTC640 for the first server that is separated from its pod's earlier servers."""
    last_pos: dict[int, int] = {}
    prev = None
    for i, s in enumerate(sl):
        sid = s.get("server_id") if isinstance(s, dict) else None
        got = member.get(sid) if isinstance(sid, str) else None
        if not got:
            continue
        k = got[0][0]
        if k != prev and k in last_pos:
            between = sl[last_pos[k] + 1] if last_pos[k] + 1 < len(sl) else None
            pid = pods[k].get("super_pod_id")
            ctx.add(error(POD_CONTIGUOUS, f"server {sid} of super pod {pid!r} is separated from the "
                          f"pod's other servers" + (f" by {server_label(between, last_pos[k] + 1)}"
                                                    if between is not None else ""),
                          ctx.span(("server_list", i, "server_id")), subject=f"server {sid}",
                          hint="order server_list pod by pod"))
            break
        last_pos[k] = i
        prev = k


#: The rules this module reports (collected by rtc.tables.semantic.RULES).
RULES = (POD_UNKNOWN, POD_MEMBERSHIP, POD_DUPLICATE, POD_CONTIGUOUS)
