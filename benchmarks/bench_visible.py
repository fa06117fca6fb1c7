"""Time the in-process `rtc lint` of one script whose CUDA_VISIBLE_DEVICES lists N ids
(fresh user 2, item 2: was quadratic in N; 20k ids took ~9 s of CPU, 200k over a minute).

usage: python benchmarks/bench_visible.py [N ...]   (default 20000 200000)"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    from rtc.api.linting import lint_scripts

    for n in [int(a) for a in (argv or sys.argv[1:])] or [20_000, 200_000]:
        text = ("export CUDA_VISIBLE_DEVICES=" + ",".join(map(str, range(n))) + "\n"
                "vllm serve m --tensor-parallel-size 8\n")
        start = time.process_time()
        rep = lint_scripts([("vis.sh", text)])
        cpu = time.process_time() - start
        print(f"N={n}: {cpu:.2f} s CPU, findings {sorted(d.code for d in rep.diagnostics)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
