"""Functions run by the spawned children of test_mp_spawn.py (importable by name from a spawned child)."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def record_pid(i, outdir):
    with open(os.path.join(outdir, f"rank{i}"), "w") as f:
        f.write(f"{os.getpid()} {os.getppid()}")


def _await_ranks(outdir, n):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(os.listdir(outdir)) < n:
        time.sleep(0.02)


def fail_on_rank1(i, outdir, nprocs=1):
    record_pid(i, outdir)
    _await_ranks(outdir, nprocs)  # every rank is running (and has its pid written) first
    if i == 1:
        raise ValueError("rank 1 is broken")
    time.sleep(60)  # the parent must end us


def kill_self_on_rank0(i, outdir):
    record_pid(i, outdir)
    _await_ranks(outdir, 2)
    if i == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)


def exit_code_3(i):
    sys.exit(3)


def sleep_then_write(i, outdir, seconds):
    time.sleep(seconds)
    record_pid(i, outdir)


def gloo_all_reduce(rank, world, init_method, outdir, framework="pyctorch"):
    if framework == "torch":
        import torch
        import torch.distributed as dist
    else:
        import pyctorch as torch
        import pyctorch.distributed as dist
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world)
    try:
        t = torch.arange(4, dtype=torch.float32) * (rank + 1)
        dist.all_reduce(t)
        m = torch.tensor([float(rank)])
        dist.all_reduce(m, op=dist.ReduceOp.MAX)
        with open(os.path.join(outdir, f"rank{rank}"), "w") as f:
            f.write(repr((t.tolist(), m.tolist(), dist.get_rank(), dist.get_world_size())))
    finally:
        dist.destroy_process_group()
