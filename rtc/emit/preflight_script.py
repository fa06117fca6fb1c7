"""Preflight scripts: ``preflight-<server>.sh`` checks one server's NPUs and network against
the plan *before* a launch, and records every answer for ``rtc preflight report``.

What the script runs (``hccn_tool`` is taken from ``$HCCN_TOOL``, else from ``PATH``, else
``/usr/local/Ascend/driver/tools/hccn_tool``), one result file per check in the results
folder (first argument; default ``preflight-results/<server>``):

=============================================  =========================  ==================
command                                        result file                judged
=============================================  =========================  ==================
``hccn_tool -i N -link -g``                    ``npuN_link.txt``          ``UP``
``hccn_tool -i N -net_health -g``              ``npuN_net_health.txt``    ``Success``
``hccn_tool -i N -ip -g``                      ``npuN_ip.txt``            the planned
                                                                          ``device_ip``
``hccn_tool -i N -gateway -g``                 ``npuN_gateway.txt``       the planned
                                                                          ``gateway``
``hccn_tool -i N -ping -g address IP``         ``npuN_ping_IP.txt``       every packet back
``sysctl -n net.ipv4.ip_local_reserved_ports`` ``host_reserved_ports.txt``  the HCCL port
                                                                          window inside it
=============================================  =========================  ==================

for every NPU some job uses on the server (every NPU when the file has no job), and on a
server with two NPUs or more in use an AllReduce sweep over them (HCCL Test's
``all_reduce_test.txt``, else rtc's torch_npu sweep ``all_reduce_sweep.jsonl``, else a
``skipped.txt`` line: :mod:`rtc.emit.npu_bandwidth_script`). Each
result file starts with the command as a ``$ hccn_tool -i N ...`` line, so the inventory
parsers (:mod:`rtc.inventory.hccn_tool`) know device and command; ``exit-codes.txt``
holds each file's exit status and ``expect.json`` what the plan expects (devices, IPs,
pings and their targets, port windows), so a results folder is judged on its own.
A failing command does not stop the script; nothing is changed on the machine.

Which NPUs ping which peers is planned by :mod:`rtc.plan.preflight`."""

from __future__ import annotations

import shlex

from rtc.emit import npu_bandwidth_script as bw
from rtc.emit.launch_script import dq  # also used by rtc.emit.gpu_preflight_script
from rtc.emit.sweep_program import skipped_function
from rtc.plan.preflight import ServerPreflight
from rtc.textfmt import ip_text, one_line_encoder, plural

HCCN_TOOL_PATH = "/usr/local/Ascend/driver/tools/hccn_tool"
FORMAT = 1


def ping_file(device_id: int, ip: str) -> str:
    return f"npu{device_id}_ping_{ip.replace(':', '-')}.txt"


def expectations(sp: ServerPreflight, source: str, ip=ip_text, pod: bool = False) -> dict:
    """What ``expect.json`` holds (the plan's side of every check). ``ip`` writes an
    address (:func:`rtc.textfmt.ip_text`, or a bundle's memo of it); ``pod``: the script
    runs in a Kubernetes pod (the sweep's container numbering, :func:`render`)."""
    s = sp.server
    devices = [{"device_id": d.device_id, "ip": ip(d.device_ip), "gateway": ip(d.gateway)}
               for d in sp.devices]
    doc = {"rtc_preflight": FORMAT, "plan": source, "server": s.name,
           "host": ip(s.host_ip),
           "devices": devices,
           "ports": [{"lo": lo, "hi": hi, "job": job or None} for lo, hi, job in sp.ports],
           "pings": sum(len(t) for t in sp.pings.values())}
    if bw.measured(sp):
        doc["bandwidth"] = bw.expectation(sp, pod)
    return doc


def ping_lines(sp: ServerPreflight) -> list[str]:
    """``pings.txt``: ``DEVICE TARGET_IP PEER_SERVER PEER_DEVICE`` per planned ping."""
    return [f"{dev} {ip} {server} {did}" for dev, targets in sorted(sp.pings.items())
            for ip, (server, did) in targets]


#: ``json.dumps`` (ASCII), with one encoder for the ~10 values of each of thousands of
#: scripts.
_dumps = one_line_encoder(ensure_ascii=True)


def render_expect(doc: dict) -> str:
    """Compact, line-per-entry JSON (deterministic)."""
    dumps = _dumps
    lines = ["{"]
    items = list(doc.items())
    for i, (k, v) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(v, list) and v:
            lines.append(f"  {dumps(k)}: [")
            last = len(v) - 1
            lines += [f"    {dumps(x)}{',' if j < last else ''}" for j, x in enumerate(v)]
            lines.append(f"  ]{comma}")
        elif isinstance(v, dict) and v:
            lines.append(f"  {dumps(k)}: {{")
            sub = list(v.items())
            lines += [f"    {dumps(a)}: {dumps(b)}{',' if j < len(sub) - 1 else ''}"
                      for j, (a, b) in enumerate(sub)]
            lines.append(f"  }}{comma}")
        else:
            lines.append(f"  {dumps(k)}: {dumps(v)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(sp: ServerPreflight, source: str, ip=ip_text, pod: bool = False) -> str:
    """``preflight-<server>.sh``: header, setup, the plan's expectations, the checks.
    ``ip`` writes an address (as in :func:`expectations`).

    ``pod``: the script runs in a pod of ``--target k8s``'s preflight Job
    (:mod:`rtc.emit.k8s_preflight`). The AllReduce sweep then uses container numbering
    (``ASCEND_RT_VISIBLE_DEVICES=0..n-1``, as the LeaderWorkerSet's pods do), while
    ``hccn_tool -i`` keeps the planned physical ids: the device plugin's Allocate answer
    sets ``ASCEND_VISIBLE_DEVICES`` to the physical ids of the NPUs it chose, and Ascend
    Docker Runtime mounts them as ``/dev/davinci<id>`` under the host's numbers
    (Ascend/ascend-device-plugin pkg/server plugin_test.go TestAllocateRequestPhysicalDevice;
    MindCluster docs, Ascend Docker Runtime parameters). The plugin, not rtc, chooses
    which NPUs a pod gets, so the script first says when they are not the planned ones
    (the per-NPU checks of NPUs the pod lacks then fail)."""
    devs = " ".join(str(d.device_id) for d in sp.devices)
    npings = sum(len(t) for t in sp.pings.values())
    lines = _header(sp, source, devs, npings)
    lines += _setup(sp.server.name)
    if bw.measured(sp):
        lines[-2:-2] = bw.setup_lines()
    lines += capture_function(sp.server.name)
    if bw.measured(sp):
        lines += skipped_function(sp.server.name)
    lines += _expect_block(sp, source, ip, pod)
    if pod and sp.devices:
        lines += _pod_devices_check(sp)
    if sp.devices:
        lines += _device_checks(sp, devs)
    if npings:
        lines += _ping_checks(sp)
    if bw.measured(sp):
        lines += bw.bandwidth_lines(sp, pod)
    lines += _footer(sp.server.name)
    return "\n".join(lines)


def _header(sp: ServerPreflight, source: str, devs: str, npings: int) -> list[str]:
    """The shebang and the comment saying what the script checks and how to use it."""
    name = sp.server.name
    windows = ", ".join(f"{lo}-{hi}" for lo, hi, _ in sp.ports)
    return ["#!/usr/bin/env bash",
            f"# rtc preflight of server {name}, from {source}: NPUs {devs or 'none'} (link, "
            f"health, IP, gateway), {npings} ping{'s' if npings != 1 else ''} to peer NPUs, "
            f"HCCL ports {windows} reserved"
            + (f", an AllReduce sweep on {plural(len(sp.devices), 'NPU')} (HCCL Test, else torch_npu)."
               if bw.measured(sp) else "."),
            "# Reads only; changes nothing. Every check writes one file into the results "
            "folder;",
            "# then run: rtc preflight report RESULTS_DIR... (the folders of all servers)",
            "# Generated by `rtc compile`; change the .rtc file and compile again instead of "
            "editing.",
            f"# Usage: preflight-{name}.sh [RESULTS_DIR]   (default: preflight-results/{name})",
            "set -euo pipefail", ""]


def _setup(name: str) -> list[str]:
    """The results folder, which ``hccn_tool`` to run, and the failure counter."""
    return [f'results="${{1:-preflight-results/{dq(name)}}}"',
            'hccn_tool="${HCCN_TOOL:-}"',
            'if [ -z "$hccn_tool" ]; then',
            "  if command -v hccn_tool >/dev/null 2>&1; then",
            "    hccn_tool=hccn_tool",
            "  else",
            f"    hccn_tool={HCCN_TOOL_PATH}",
            "  fi",
            "fi",
            'mkdir -p "$results"',
            ': > "$results/exit-codes.txt"',
            "failed=0", ""]


def capture_function(name: str) -> list[str]:
    """The shell function ``capture`` that runs one check into its result file."""
    return ["# capture FILE LABEL COMMAND...: run COMMAND, keep its output in FILE after a "
            "'$ LABEL' line",
            "capture() {",
            '  local file="$1" label="$2" rc=0',
            "  shift 2",
            f"  printf '%s\\n' {shlex.quote(f'rtc preflight {name}:')}\" $label\"",
            "  printf '$ %s\\n' \"$label\" > \"$results/$file\"",
            '  "$@" >> "$results/$file" 2>&1 || rc=$?',
            "  printf '%s %s\\n' \"$file\" \"$rc\" >> \"$results/exit-codes.txt\"",
            '  if [ "$rc" -ne 0 ]; then failed=$((failed + 1)); fi',
            "}", ""]


def _expect_block(sp: ServerPreflight, source: str, ip, pod: bool = False) -> list[str]:
    """A here-document writing ``expect.json``."""
    return ["cat > \"$results/expect.json\" <<'RTC_EXPECT'",
            render_expect(expectations(sp, source, ip, pod)).rstrip("\n"),
            "RTC_EXPECT", ""]


def _pod_devices_check(sp: ServerPreflight) -> list[str]:
    """In a pod: a warning on stderr when the device plugin's ``ASCEND_VISIBLE_DEVICES``
    (physical ids, see :func:`render`; ``Ascend910-N`` names read as N) are not the
    planned NPUs."""
    planned = ",".join(str(d.device_id) for d in sp.devices)
    who = shlex.quote(f"rtc preflight {sp.server.name}:")
    return ['plugin_npus="${ASCEND_VISIBLE_DEVICES:-}"',
            'plugin_npus="${plugin_npus//Ascend910-/}"',
            f'if [ -n "$plugin_npus" ] && [ "$plugin_npus" != {planned} ]; then',
            f"  printf '%s\\n' {who}\" the device plugin gave this pod NPUs "
            f"$plugin_npus, the plan uses {planned}: the checks of planned NPUs the pod "
            "lacks fail; free those NPUs on the node or change the plan's devices\" >&2",
            "fi"]


def _device_checks(sp: ServerPreflight, devs: str) -> list[str]:
    """Link, health, IP (IPv4 and IPv6 apart) and gateway of every NPU."""
    lines = [f"for d in {devs}; do"]
    for flag, fname in (("-link -g", "link"), ("-net_health -g", "net_health")):
        lines.append(f'  capture "npu${{d}}_{fname}.txt" "hccn_tool -i $d {flag}" '
                     f'"$hccn_tool" -i "$d" {flag}')
    lines.append("done")
    v6 = {d.device_id for d in sp.devices
          if d.device_ip is not None and d.device_ip.version == 6}
    v4 = [str(d.device_id) for d in sp.devices if d.device_id not in v6]
    if v4:
        lines.append(f"for d in {' '.join(v4)}; do")
        lines.append('  capture "npu${d}_ip.txt" "hccn_tool -i $d -ip -g" "$hccn_tool" '
                     '-i "$d" -ip -g')
        lines.append("done")
    if v6:
        lines.append(f"for d in {' '.join(str(x) for x in sorted(v6))}; do")
        lines.append('  capture "npu${d}_ip.txt" "hccn_tool -i $d -ip -inet6 -g" '
                     '"$hccn_tool" -i "$d" -ip -inet6 -g')
        lines.append("done")
    lines.append(f"for d in {devs}; do")
    lines.append('  capture "npu${d}_gateway.txt" "hccn_tool -i $d -gateway -g" '
                 '"$hccn_tool" -i "$d" -gateway -g')
    lines.append("done")
    return lines


def _ping_checks(sp: ServerPreflight) -> list[str]:
    """A here-document writing ``pings.txt``, and a loop pinging each planned target."""
    return (["# DEVICE TARGET_IP PEER_SERVER PEER_DEVICE",
             "cat > \"$results/pings.txt\" <<'RTC_PINGS'"]
            + ping_lines(sp)
            + ["RTC_PINGS",
               "while read -r d ip _peer _peer_device <&3; do",
               '  capture "npu${d}_ping_${ip//:/-}.txt" "hccn_tool -i $d -ping -g address $ip" '
               '"$hccn_tool" -i "$d" -ping -g address "$ip"',
               'done 3< "$results/pings.txt"'])


def _footer(name: str) -> list[str]:
    """The reserved-ports check and the closing summary line."""
    return ['capture host_reserved_ports.txt "sysctl -n net.ipv4.ip_local_reserved_ports" '
            "sysctl -n net.ipv4.ip_local_reserved_ports", "",
            f"printf '%s\\n' {shlex.quote(f'rtc preflight {name}:')}\" results in $results "
            "($failed command(s) failed)\"",
            ""]

