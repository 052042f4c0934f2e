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


def ddp_step(rank, world, init_method, outdir):
    """One DDP SGD step of a small MLP on this rank's half of a fixed batch; writes the updated parameters."""
    import numpy as np
    import pyctorch as torch
    import pyctorch.distributed as dist
    from pyctorch.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world)
    try:
        torch.manual_seed(rank + 7)  # different initial weights per rank: DDP must broadcast rank 0's
        model = DDP(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = ddp_batch()
        per = x.shape[0] // world
        sl = slice(rank * per, (rank + 1) * per)
        torch.nn.functional.mse_loss(model(torch.tensor(x[sl])), torch.tensor(y[sl])).backward()
        opt.step()
        np.save(os.path.join(outdir, f"ddp{rank}.npy"),
                np.concatenate([p.detach().numpy().ravel() for p in model.module.parameters()]))
    finally:
        dist.destroy_process_group()


def ddp_batch():
    import numpy as np
    rng = np.random.default_rng(0)
    return rng.normal(size=(8, 4)).astype(np.float32), rng.normal(size=(8, 2)).astype(np.float32)
