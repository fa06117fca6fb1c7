"""Benchmark: the network and port checks on A2 clusters of 512 .. 4,096 servers.

Each cluster is a few lines of rtc source: a family of Atlas 800T A2 servers (8 NPUs each)
with the real A2 plan -- one /31 per NPU with its gateway -- a fabric, and one DP x TP8
expert-parallel job over all servers (its EP group holds every rank, the largest set of
device pairs the reachability model has to judge). A second variant ("broken") declares a
fabric that covers only half of the device subnets, so the error path runs too.

For each size it compiles the source once (parse, lower, all checks), then times the
network part alone on the lowered Topology: the port plan, and each RTC4xx check module.
It prints the times and the growth factor per doubling (about 2.0 means linear).

    python benchmarks/bench_network.py            # 512, 1024, 2048, 4096
    python benchmarks/bench_network.py 256 512    # other sizes

Nothing here touches the network: reachability and ports are modelled.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rtc.api import compile_text  # noqa: E402
from rtc.checks import (device_numbering, host_addressing, inventory_facts,  # noqa: E402
                        net_addresses, peer_reachability, port_conflicts, socket_env)
from rtc.plan.ports import plan_ports  # noqa: E402

NETWORK_CHECKS = {"net_addresses": net_addresses, "reachability": peer_reachability,
                  "inventory_facts": inventory_facts, "device_numbering": device_numbering,
                  "ports": port_conflicts, "host_addressing": host_addressing,
                  "socket_env": socket_env}


def source(n: int, fabric: str = "6.0.0.0/16") -> str:
    """A family of ``n`` A2 servers with per-NPU /31 links (16 addresses per server)."""
    return f"""cluster a2-{n} {{
  hardware atlas-800t-a2
  cann 8.2.RC1
}}
fabric roce {{
  subnets {fabric}
}}
family node[0000..{n - 1:04d}] {{
  host 10.{{i/200}}.0.{{i%200+1}}
  nic eno0
  devices 0..7
  device_ip 6.0.{{i/16}}.{{(i%16)*16 + 2*d + 1}}
  gateway 6.0.{{i/16}}.{{(i%16)*16 + 2*d}}
  prefix 31
}}
job serve {{
  servers node[0000..{n - 1:04d}]
  dp {n}
  tp 8
  expert_parallel on
}}
"""


def best_of(fn, repeat: int = 5) -> float:
    """The best of ``repeat`` runs, with the garbage collector paused while timing (its
    pauses depend on everything allocated before, not on the check being timed)."""
    import gc

    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        finally:
            gc.enable()
    return best


def measure(n: int, fabric: str) -> dict:
    t = time.perf_counter()
    result = compile_text(source(n, fabric), f"a2-{n}.rtc")
    compile_s = time.perf_counter() - t
    topo = result.topology
    topo.placement(topo.jobs[0])          # shared with the RTC3xx checks; cached
    out = {"compile": compile_s, "codes": sorted({d.code for d in result.diagnostics})}
    out["plan"] = best_of(lambda: plan_ports(topo))
    total = out["plan"]
    for name, mod in NETWORK_CHECKS.items():
        secs = best_of(lambda: list(mod.check(topo, result.plan)))
        out[name] = secs
        total += secs
    out["network"] = total
    return out


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [512, 1024, 2048, 4096]
    ms = lambda s: f"{s * 1000:8.1f}ms"  # noqa: E731
    for label, broken in (("clean: every /31 in fabric roce", False),
                          ("broken: the fabric covers the first half of the servers", True)):
        print(f"\n{label}")
        print(f"{'servers':>7} {'NPUs':>6} {'compile':>8} {'port plan':>10} {'addresses':>10} "
              f"{'reach':>10} {'port chk':>10} {'others':>10} {'network':>10} {'x/doubling':>10}"
              "  rule ids reported")
        prev = None
        for n in sizes:
            # servers i < n/2 have their /31s in 6.0.0.0 .. 6.0.(n/32 - 1).255
            fabric = f"6.0.0.0/{25 - (n // 16).bit_length() + 1}" if broken else "6.0.0.0/16"
            m = measure(n, fabric)
            others = sum(m[k] for k in ("inventory_facts", "device_numbering", "host_addressing",
                                        "socket_env"))
            growth = f"{m['network'] / prev:.2f}" if prev else "-"
            prev = m["network"]
            print(f"{n:>7} {n * 8:>6} {m['compile']:>7.2f}s {ms(m['plan']):>10} "
                  f"{ms(m['net_addresses']):>10} {ms(m['reachability']):>10} "
                  f"{ms(m['ports']):>10} {ms(others):>10} {ms(m['network']):>10} {growth:>10}"
                  f"  {', '.join(m['codes']) or '-'}")


if __name__ == "__main__":
    main(sys.argv[1:])
