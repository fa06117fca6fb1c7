"""``rtc preflight report``: judge preflight results folders against the plan they carry
(RTC560-RTC569) and build the server x server reachability matrix of the pings.

Each finding points at the capture that shows it (file, line and column of the value
when the inventory parser located it). Pings are counted per (source server, target
server): ``ok/planned``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from rtc.diagnostics import Diagnostic, Span, error, sorted_diagnostics, warning
from rtc.preflight import npu_bandwidth
from rtc.preflight.results import (ServerResults, keep, parse_reserved_ports, read_capture,
                                   read_text)
from rtc.rules import rule
from rtc.textfmt import compact

LINK_DOWN = rule("RTC560", "preflight-link-down", "error",
                 "Preflight: an NPU's RoCE link is not UP.", """
    What: `hccn_tool -i N -link -g` printed `link status: DOWN` (or another word) for an NPU
    the plan uses.
    Why: HCCL cannot open RoCE connections through it; communicator setup times out after
    HCCL_CONNECT_TIMEOUT.
    Example: npu3_link.txt: `link status: DOWN`.
    Fix: check the cable / optics and the switch port (`hccn_tool -i N -lldp -g` names
    it), then run the preflight again.""")
NET_HEALTH = rule("RTC561", "preflight-net-health", "error",
                  "Preflight: an NPU's network health is not Success.", """
    What: `hccn_tool -i N -net_health -g` printed anything but `Success` (Fault, Socket
    failed, Receive timeout, Unreachable, Detect ip set, Init).
    Why: the NPU cannot reach its detect address (usually the gateway); its RoCE traffic
    will not get through either.
    Example: `net health status: Receive timeout`.
    Fix: check the NPU's IP, gateway and detect IP (`hccn_tool -i N -netdetect -g`) and
    the switch.""")
IP_MISMATCH = rule("RTC562", "preflight-ip-mismatch", "error",
                   "Preflight: an NPU's IP differs from the planned device_ip.", """
    What: `hccn_tool -i N -ip -g` shows another address (or none) than the plan's
    `device_ip` of that NPU.
    Why: the rank table tells every other rank to connect to the planned address; the
    NPU is not there and HCCL times out (or, with a stale /etc/hccn.conf, one NPU is
    unreachable and KV transfer slows down).
    Example: planned 6.0.2.7, npu3_ip.txt: `ipaddr:6.0.2.70`.
    Fix: correct the NPU (`hccn_tool -i N -ip -s address A netmask M`) or the plan.""")
GATEWAY = rule("RTC563", "preflight-gateway-mismatch", "error",
               "Preflight: an NPU's gateway differs from the planned gateway.", """
    What: `hccn_tool -i N -gateway -g` shows another default gateway than the plan's
    `gateway` of that NPU.
    Why: traffic to other subnets leaves through the wrong router (or none): the NPU reaches
    its own /31 peer but not the other servers.
    Example: planned 6.0.2.6, npu3_gateway.txt: `default gateway:6.0.2.4, Iface:eth3`.
    Fix: `hccn_tool -i N -gateway -s address G`, or correct the plan.""")
UNREACHABLE = rule("RTC564", "preflight-unreachable", "error",
                   "Preflight: an NPU does not reach a peer NPU it communicates with.", """
    What: `hccn_tool -i N -ping -g address IP` lost packets (or got no reply) for a peer in
    one of the NPU's communication groups.
    Why: the collective (or KV transfer) between these two ranks cannot be set up; the job
    hangs at initialization until HCCL_CONNECT_TIMEOUT.
    Example: npu0_ping_6.0.2.17.txt: `3 packets transmitted, 0 received, 100.00% packet
    loss`.
    Fix: check both NPUs' link, IP, gateway and the switch routes between their subnets.""")
PORTS = rule("RTC565", "preflight-ports-not-reserved", "error",
             "Preflight: the HCCL port window is not in net.ipv4.ip_local_reserved_ports.", """
    What: `sysctl -n net.ipv4.ip_local_reserved_ports` does not cover the host ports HCCL
    uses (HCCL_IF_BASE_PORT .. + 15 / + 31).
    Why: the kernel may hand those ports to outgoing connections as ephemeral ports; HCCL
    then fails to bind at initialization, now and then.
    Example: reserved `50000-50031`, window 60000-60031.
    Fix: `sysctl -w net.ipv4.ip_local_reserved_ports=60000-60031` (keep it in
    /etc/sysctl.conf).""")
FAILED = rule("RTC566", "preflight-check-failed", "error",
              "Preflight: a check could not be made (the command failed or printed nothing usable).", """
    What: a preflight command exited non-zero or its output holds no answer (e.g.
    hccn_tool missing, the device not found).
    Why: that property of the NPU is unknown, so the launch may still fail on it.
    When hccn_tool itself is missing (the shell's exit 127 / 126 on its calls) this is one
    finding per server naming the checks skipped, and nothing is judged from those
    captures (no IP mismatch, no unreachable peer is made up from an absent answer).
    Example: npu2_link.txt: `hccn_tool: command not found` (exit 127).
    Fix: run the preflight on the server itself, as root, with hccn_tool installed
    (or HCCN_TOOL=/path/to/hccn_tool).""")
MISSING = rule("RTC567", "preflight-missing-result", "warning",
               "Preflight: a result file the plan expects is missing.", """
    What: a capture the preflight script writes (npuN_link.txt, a ping, the sysctl
    output) is not in the results folder.
    Why: the script stopped early or the folder was copied partly; that check is unknown.
    Example: no npu7_ping_6.0.2.31.txt.
    Fix: run the preflight script again and copy the whole folder.""")
BAD_RESULTS = rule("RTC568", "preflight-bad-results", "error",
                   "Preflight: a results folder cannot be read.", """
    What: the folder does not exist or has no (readable) expect.json; or its expect.json
    lacks a key or has one of the wrong shape (`"devices": "x"`), or its pings.txt or
    exit-codes.txt cannot be read, or a line of its skipped.txt is not
    WHAT<TAB>WHY<TAB>FALLBACK.
    Why: rtc cannot tell what the plan expected there. A folder with a malformed
    expect.json is still judged with what can be used (the folder's name for the server,
    the NPUs that have captures), so a link that is down is still reported.
    Example: `rtc preflight report build/` (the compile output, not a results folder).
    Fix: pass the folders the preflight scripts wrote (default preflight-results/SERVER),
    unedited; run the preflight script again when one was damaged.""")
PLAN_MIX = rule("RTC569", "preflight-mixed-plans", "warning",
                "Preflight: the results come from different plans.", """
    What: the folders' expect.json name different .rtc files, or one server twice.
    Why: the matrix would mix checks made for different plans.
    Example: results of a2-2node-dp2-tp8.rtc and a2-2node-pp2-tp8.rtc in one report.
    Fix: report the results of one compile together.""")


@dataclass
class Matrix:
    """Pings per (source server, target server): [ok, planned, not run] (a ping whose
    command could not run, hccn_tool missing, is planned but neither answered nor lost)."""

    servers: list = field(default_factory=list)
    cells: dict = field(default_factory=dict)

    def add(self, a: str, b: str, ok: bool | None) -> None:
        """Count one ping from ``a`` to ``b``: answered, lost, or (None) not run."""
        for s in (a, b):
            if s not in self.servers:
                self.servers.append(s)
        cell = self.cells.setdefault((a, b), [0, 0, 0])
        cell[1] += 1
        if ok:
            cell[0] += 1
        elif ok is None:
            cell[2] += 1

    def failing(self) -> list:
        return [(a, b, c) for (a, b), c in self.cells.items() if c[0] < c[1]]

    def text(self, limit: int = 16) -> str:
        if not self.cells:
            return "reachability: no pings planned (single server, or peers only over HCCS)\n"
        names = self.servers
        if len(names) > limit:
            bad = self.failing()
            ok = sum(c[0] for c in self.cells.values())
            total = sum(c[1] for c in self.cells.values())
            lines = [f"reachability: {ok}/{total} pings answered between {len(names)} servers"]
            lines += [f"  {a} -> {b}: {c[0]}/{c[1]}" for a, b, c in bad[:50]]
            if len(bad) > 50:
                lines.append(f"  ... and {len(bad) - 50} more failing server pairs")
            return "\n".join(lines) + "\n"
        width = max(len(n) for n in names)
        cells = {k: f"{c[0]}/{c[1]}" + ("?" if c[2] else "") for k, c in self.cells.items()}
        cw = max([len(v) for v in cells.values()] + [len(n) for n in names] + [1])
        unknown = any(c[2] for c in self.cells.values())
        lines = ["reachability (pings answered / planned; row = from, column = to"
                 + ("; ? = some pings did not run" if unknown else "") + "):",
                 " " * width + " | " + " ".join(n.rjust(cw) for n in names)]
        for a in names:
            row = [cells.get((a, b), "-" if a != b else ".").rjust(cw) for b in names]
            lines.append(a.ljust(width) + " | " + " ".join(row))
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        return {"servers": list(self.servers),
                "pairs": [{"from": a, "to": b, "ok": c[0], "planned": c[1],
                           **({"not_run": c[2]} if c[2] else {})}
                          for (a, b), c in self.cells.items()]}


def _loc(fact, fallback: Span) -> Span:
    return fact.span if fact is not None else fallback


def analyse(results: list[ServerResults]) -> tuple[list[Diagnostic], Matrix, dict]:
    """(diagnostics, matrix, file texts) for the given results folders."""
    diags: list[Diagnostic] = []
    matrix = Matrix()
    texts: dict = {}
    plans = {r.plan for r in results if r.problem is None and r.plan is not None}
    seen: dict = {}
    for r in results:
        if r.problem is not None:
            diags.append(error(BAD_RESULTS, f"{r.folder} {r.problem}",
                               r.problem_span or Span.whole_file(r.folder),
                               hint="pass the folders the preflight scripts wrote"))
            texts.update(r.texts)
            continue
        for message, span in r.bad:
            diags.append(error(BAD_RESULTS, message, span, subject=f"server {r.server}",
                               hint="run the preflight script again and copy the whole "
                                    "results folder unedited"))
        diags.extend(r.diagnostics)
        if r.server in seen:
            diags.append(warning(PLAN_MIX, f"server {r.server} appears twice ({seen[r.server]} "
                                 f"and {r.folder})", Span.whole_file(r.path("expect.json"))))
        seen[r.server] = r.folder
        if r.server not in matrix.servers:
            matrix.servers.append(r.server)
        _server(r, diags, matrix)
        texts.update(r.texts)
    if len(plans) > 1:
        diags.append(warning(PLAN_MIX, "the results come from different plans: "
                             + ", ".join(sorted(str(p) for p in plans)), None,
                             hint="report the results of one compile together"))
    return sorted_diagnostics(diags), matrix, texts


def _missing(r: ServerResults, name: str, diags: list, what: str) -> None:
    diags.append(warning(MISSING, f"{r.server}: {what}: {name} is missing", Span.whole_file(
        r.path(name)), subject=f"server {r.server}",
        hint="run the preflight script again and copy the whole results folder"))


def _failed(r: ServerResults, name: str, diags: list, what: str, why: str) -> None:
    rc = r.exit_codes.get(name)
    code = f" (exit {rc})" if rc else ""
    diags.append(error(FAILED, f"{r.server}: {what}: {why}{code}", Span.whole_file(r.path(name)),
                       subject=f"server {r.server}",
                       hint="run it on the server as root with hccn_tool available"))


def _is_empty(r: ServerResults, name: str) -> bool:
    """True when a capture holds no output (nothing but the ``$ command`` line)."""
    text = r.texts.get(r.path(name))
    if text is None:
        return False
    return all(not line.strip() or line.lstrip().startswith("$") for line in text.splitlines())


def _empty(r: ServerResults, names: list, diags: list, kind: str, what: str) -> None:
    """One finding for all empty captures of one kind on one server."""
    if not names:
        return
    n = len(names)
    shown = ", ".join(names[:3]) + (f" ... ({n} in all)" if n > 3 else "")
    codes = sorted({r.exit_codes[x] for x in names if r.exit_codes.get(x)})
    rc = f"; exit code{'s' if len(codes) > 1 else ''} {', '.join(map(str, codes))}" \
        if codes else ""
    captures = "capture is" if n == 1 else "captures are"
    diags.append(error(FAILED, f"{n} {kind} {captures} empty on {r.server}: {what}{rc}; "
                       f"see {shown}", Span.whole_file(r.path(names[0])),
                       subject=f"server {r.server}",
                       hint="run the preflight script again on the server, as root with "
                            "hccn_tool available (HCCN_TOOL=/path/to/hccn_tool), and check "
                            "its output for errors"))


#: Exit codes of a shell for a command it could not start (bash(1), EXIT STATUS).
_NOT_RUN = {127: "not found", 126: "found but not executable"}


def _tool_not_run(r: ServerResults) -> list[str]:
    """The hccn_tool captures (``npu*.txt``) whose command the shell could not start
    (exit 127 / 126), in the order the script ran them."""
    return [name for name, rc in r.exit_codes.items()
            if rc in _NOT_RUN and name.startswith("npu") and name.endswith(".txt")]


def _no_tool(r: ServerResults, names: list, diags: list) -> None:
    """RTC566 once per server for hccn_tool missing: what was skipped and how to fix it.
    The captures ``names`` hold only the shell's complaint, so nothing is judged from
    them (no link, IP or ping finding is made up from an absent answer)."""
    rc = r.exit_codes[names[0]]
    pings = sum(1 for n in names if "_ping_" in n)
    npus = sorted({int(m.group(1)) for m in map(_NPU_FILE.match, names) if m})
    what = [f"link, net health, IP and gateway of NPU{'s' if len(npus) > 1 else ''} "
            + compact(npus)] if len(names) > pings else []
    what += [f"{pings} ping{'s' if pings != 1 else ''} to peer NPUs"] if pings else []
    text, _span = read_text(r, names[0])
    line = 2 if text and len(text.splitlines()) >= 2 else 1
    diags.append(error(FAILED, f"hccn_tool {_NOT_RUN[rc]} (exit {rc}) on {r.server}: the "
                       f"{len(names)} checks that need it were skipped ({'; '.join(what)}); "
                       "nothing is known about these NPUs' links, addresses or reachability",
                       Span(r.path(names[0]), line, 1), subject=f"server {r.server}",
                       hint="install the Ascend driver's hccn_tool (usually "
                            "/usr/local/Ascend/driver/tools/hccn_tool) or set "
                            "HCCN_TOOL=/path/to/hccn_tool, then run "
                            f"preflight-{r.server}.sh again on the server, as root"))


_NPU_FILE = re.compile(r"npu([0-9]+)_")


def _server(r: ServerResults, diags: list, matrix: Matrix) -> None:
    """The findings of one results folder (added to ``diags``); its pings count in
    ``matrix``. Captures of an hccn_tool that could not start are one finding."""
    skip = set(_tool_not_run(r))
    if skip:
        _no_tool(r, _tool_not_run(r), diags)
    _npus(r, diags, skip)
    _pings(r, diags, matrix, skip)
    _reserved_ports(r, diags)
    diags.extend(npu_bandwidth.judge(r))


#: The per-NPU captures: (file name part, fact name, what it is in messages).
_NPU_CHECKS = (("link", "link", "link status"), ("net_health", "net_health", "net health"),
               ("ip", "ip", "IP address"), ("gateway", "gateway", "gateway"))


def _npus(r: ServerResults, diags: list, skip: set) -> None:
    """RTC560-RTC563, RTC566, RTC567 for the hccn_tool captures of every planned NPU (the
    empty ones as one finding; those in ``skip`` are not judged)."""
    empty: list = []
    for dev in r.devices:
        d = dev.get("device_id")
        if not isinstance(d, int):
            continue
        for fname, fact_name, what in _NPU_CHECKS:
            if f"npu{d}_{fname}.txt" in skip:
                continue
            _npu_capture(r, dev, d, fname, fact_name, what, diags, empty)
    _empty(r, empty, diags, "hccn_tool", "the preflight did not run or failed")


def _npu_capture(r: ServerResults, dev: dict, d: int, fname: str, fact_name: str, what: str,
                 diags: list, empty: list) -> None:
    """One capture ``npu<d>_<fname>.txt``: missing, empty (added to ``empty``), without an
    answer, or judged against the plan's ``dev``."""
    name = f"npu{d}_{fname}.txt"
    out, pdiags = read_capture(r, name, d)
    if out is None:
        _missing(r, name, diags, f"NPU {d} {what}")
        return
    if _is_empty(r, name):
        empty.append(name)
        return
    diags.extend(keep(pdiags))
    fact = out.get(d, fact_name)
    if fact_name == "ip" and fact is None:
        fact = out.get(d, "ipv6")
    span = Span.whole_file(r.path(name))
    if fact is None or fact.value in (None, ""):
        if fact_name == "gateway" and dev.get("gateway") is None:
            return
        if fact_name == "ip" and dev.get("ip") is not None:
            diags.append(error(IP_MISMATCH, f"{r.server} NPU {d} has no IP address; the "
                               f"plan says {dev.get('ip')}", span,
                               subject=f"server {r.server}, device {d}",
                               hint=f"hccn_tool -i {d} -ip -s address {dev.get('ip')} "
                                    "netmask MASK"))
            return
        _failed(r, name, diags, f"NPU {d} {what}", "no answer in the output")
        return
    _npu_value(r, dev, d, fact_name, fact, span, diags)


def _npu_value(r: ServerResults, dev: dict, d: int, fact_name: str, fact, span: Span,
               diags: list) -> None:
    """RTC560-RTC563: an NPU's link, net health, IP or gateway differs from what the plan
    needs."""
    subject = f"server {r.server}, device {d}"
    value = str(fact.value)
    if fact_name == "link" and value.upper() != "UP":
        diags.append(error(LINK_DOWN, f"{r.server} NPU {d}: link status {value}",
                           _loc(fact, span), subject=subject,
                           hint="check the cable and switch port; "
                                f"hccn_tool -i {d} -lldp -g names the port"))
    elif fact_name == "net_health" and value != "Success":
        diags.append(error(NET_HEALTH, f"{r.server} NPU {d}: net health {value}",
                           _loc(fact, span), subject=subject,
                           hint=f"check IP, gateway and detect IP (hccn_tool -i {d} "
                                "-netdetect -g)"))
    elif fact_name == "ip" and dev.get("ip") is not None and not _same_ip(value, dev["ip"]):
        diags.append(error(IP_MISMATCH, f"{r.server} NPU {d} has IP {value}, the plan "
                           f"says {dev['ip']}", _loc(fact, span), subject=subject,
                           hint="correct the NPU's address or the plan's device_ip"))
    elif fact_name == "gateway" and dev.get("gateway") is not None \
            and not _same_ip(value, dev["gateway"]):
        diags.append(error(GATEWAY, f"{r.server} NPU {d} has gateway {value}, the plan "
                           f"says {dev['gateway']}", _loc(fact, span), subject=subject,
                           hint=f"hccn_tool -i {d} -gateway -s address {dev['gateway']}"))


def _pings(r: ServerResults, diags: list, matrix: Matrix, skip: set) -> None:
    """RTC564 (and RTC566, RTC567) for the planned pings; every ping counts in
    ``matrix`` (those in ``skip`` as not run)."""
    not_run: list = []
    for p in r.pings:
        if p.file in skip:
            matrix.add(r.server, p.peer_server, None)
            continue
        out, pdiags = read_capture(r, p.file, p.device)
        if out is None:
            _missing(r, p.file, diags, f"ping from NPU {p.device} to {p.target}")
            continue
        if _is_empty(r, p.file):
            # no output at all: the ping did not run, which says nothing about reachability
            not_run.append(p.file)
            matrix.add(r.server, p.peer_server, False)
            continue
        diags.extend(keep(pdiags))
        result = next((x for x in out.pings if str(x.target.value) == p.target), None) \
            or (out.pings[0] if out.pings else None)
        ok = result is not None and result.ok
        matrix.add(r.server, p.peer_server, ok)
        if not ok:
            _unreachable(r, p, result, diags)
    _empty(r, not_run, diags, "ping", "the pings did not run (not a reachability result)")


def _unreachable(r: ServerResults, p, result, diags: list) -> None:
    """RTC564: ping ``p`` got no (or not every) answer; ``result`` is its parsed output,
    if any."""
    span = (result.summary_span if result is not None and result.summary_span else
            Span.whole_file(r.path(p.file)))
    lost = (f"{result.received}/{result.transmitted} packets answered"
            if result is not None and result.transmitted is not None else "no reply")
    peer = f"{p.peer_server} NPU {p.peer_device}" if p.peer_device is not None \
        else p.peer_server
    diags.append(error(UNREACHABLE, f"{r.server} NPU {p.device} does not reach {peer} "
                       f"({p.target}): {lost}", span,
                       subject=f"server {r.server}, device {p.device}",
                       hint="check both NPUs' link, IP and gateway, and the routes "
                            "between their subnets"))


def _reserved_ports(r: ServerResults, diags: list) -> None:
    """RTC565 (and RTC566, RTC567): HCCL port windows outside
    net.ipv4.ip_local_reserved_ports."""
    name = "host_reserved_ports.txt"
    text, span = read_text(r, name)
    if text is None:
        _missing(r, name, diags, "reserved ports")
        return
    if r.exit_codes.get(name):
        _failed(r, name, diags, "sysctl -n net.ipv4.ip_local_reserved_ports", "the command failed")
        return
    ranges, line = parse_reserved_ports(text)
    for lo, hi, job in r.ports:
        if not isinstance(lo, int) or not isinstance(hi, int):
            continue
        if not _covered(lo, hi, ranges):
            shown = ",".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges) or "nothing"
            diags.append(error(PORTS, f"{r.server}: HCCL ports {lo}-{hi}"
                               + (f" (job {job})" if job else "") + f" are not all reserved "
                               f"(net.ipv4.ip_local_reserved_ports = {shown})",
                               Span(r.path(name), line or 1, 1), subject=f"server {r.server}",
                               hint=f"sysctl -w net.ipv4.ip_local_reserved_ports={lo}-{hi} "
                                    "(add to what is there; keep it in /etc/sysctl.conf)"))


def _same_ip(a: str, b: str) -> bool:
    try:
        return ipaddress.ip_address(a) == ipaddress.ip_address(b)
    except ValueError:
        return a == b


def _covered(lo: int, hi: int, ranges: list) -> bool:
    need = lo
    for a, b in sorted(ranges):
        if a <= need <= b:
            need = b + 1
            if need > hi:
                return True
    return need > hi

#: The rules this module reports (collected by rtc.catalogue).
RULES = (LINK_DOWN, NET_HEALTH, IP_MISMATCH, GATEWAY, UNREACHABLE, PORTS, FAILED, MISSING,
         BAD_RESULTS, PLAN_MIX)
