"""rtc preflight: a torch.distributed all_reduce sweep over this server's GPUs (or NPUs),
for hosts without nccl-tests / HCCL Test. Written by rtc's preflight script; run as
``python3 allreduce_sweep.py N cuda|npu OUT.jsonl``.

One process per device (torch.multiprocessing.spawn, rendezvous on 127.0.0.1), sizes 8 B to
1 GiB doubling, float32 sum, 5 warm-up and 20 timed in-place all_reduce calls per size (the
defaults of nccl-tests). Times are device events averaged over the ranks; algbw = bytes /
time and busbw = algbw * 2(n-1)/n, as nccl-tests defines them for AllReduce
(NVIDIA/nccl-tests doc/PERFORMANCE.md). Output: JSON lines, read by rtc
(rtc/inventory/allreduce_sweep.py): a header object, one object per size, an end object.

On Ascend (``npu``) ``import torch_npu`` registers ``torch.npu`` and the ``hccl`` process
group backend; devices are ``npu:N``, timed with ``torch.npu.Event(enable_timing=True)``
(Ascend/pytorch: test/cpp_extensions/test/dispatch_allreduce.py,
torch_npu/npu/streams.py). The header then also names the ``torch_npu`` version.
"""
import json
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WARMUP, ITERS, LARGEST = 5, 20, 1 << 30


def timed(dev, buf):
    """Average µs of one in-place all_reduce of ``buf`` on this rank."""
    for _ in range(WARMUP):
        dist.all_reduce(buf)
    start, end = dev.Event(enable_timing=True), dev.Event(enable_timing=True)
    start.record()
    for _ in range(ITERS):
        dist.all_reduce(buf)
    end.record()
    dev.synchronize()
    return start.elapsed_time(end) * 1000.0 / ITERS


def worker(rank, n, kind, port, out):
    if kind == "npu":
        import torch_npu  # noqa: F401  (registers torch.npu and the hccl backend)
    dev = getattr(torch, kind)
    dev.set_device(rank)
    dist.init_process_group("nccl" if kind == "cuda" else "hccl", world_size=n, rank=rank,
                            init_method=f"tcp://127.0.0.1:{port}")
    rows, size = [], 8
    while size <= LARGEST:
        count = size // 4
        buf = torch.ones(count, dtype=torch.float32, device=f"{kind}:{rank}")
        t = torch.tensor([timed(dev, buf)], dtype=torch.float32, device=f"{kind}:{rank}")
        dist.all_reduce(t)
        buf.fill_(rank + 1)
        dist.all_reduce(buf)
        wrong = int((buf != n * (n + 1) / 2).sum().item())
        rows.append((size, count, t.item() / n, wrong))
        del buf
        size *= 2
    if rank == 0:
        write(out, n, kind, dev, rows)
    dist.destroy_process_group()


def write(out, n, kind, dev, rows):
    head = {"format": "rtc-allreduce-sweep", "version": 1, "tool": "torch.distributed",
            "torch": torch.__version__, "backend": "nccl" if kind == "cuda" else "hccl",
            "nccl": ".".join(map(str, torch.cuda.nccl.version())) if kind == "cuda" else None,
            "ranks": n, "devices": [dev.get_device_name(i) for i in range(n)],
            "dtype": "float32", "op": "sum", "warmup": WARMUP, "iters": ITERS}
    if kind == "npu":
        head["torch_npu"] = getattr(sys.modules.get("torch_npu"), "__version__", None)
    lines = [head]
    for size, count, us, wrong in rows:
        algbw = size / us / 1e3   # GB/s: bytes / (us * 1e-6) / 1e9
        lines.append({"size": size, "count": count, "time_us": round(us, 2),
                      "algbw": round(algbw, 2), "busbw": round(algbw * 2 * (n - 1) / n, 2),
                      "wrong": wrong})
    lines.append({"end": True, "sizes": len(rows)})
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(x) + "\n" for x in lines)


def main():
    n, kind, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    mp.spawn(worker, args=(n, kind, port, out), nprocs=n, join=True)


if __name__ == "__main__":
    main()
