"""Test stub of torch.multiprocessing: spawn runs the ranks as threads."""
import threading

from . import distributed


def spawn(fn, args=(), nprocs=1, join=True):
    distributed._start(nprocs)
    errors = []

    def run(rank):
        try:
            fn(rank, *args)
        except BaseException as exc:  # noqa: BLE001 - reported below, as spawn does
            errors.append(exc)
            distributed._group()["barrier"].abort()

    threads = [threading.Thread(target=run, args=(r,)) for r in range(nprocs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
