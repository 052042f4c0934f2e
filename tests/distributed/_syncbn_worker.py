"""One rank of the SyncBatchNorm tests (started by dist_helpers.run_ranks with script=_syncbn_worker.py).

Every rank builds the whole batch from one seed, runs its own shard through SyncBatchNorm, and
checks the outputs, gradients and running statistics against plain BatchNorm run by itself on the
whole batch. Prints {"check": name, "ok": bool, "error": text} lines as _dist_worker.py does.
"""
import datetime
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: the one comparison
from comparison import assert_same  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyctorch as torch  # noqa: E402
import pyctorch.distributed as dist  # noqa: E402
from pyctorch import nn  # noqa: E402

from _dist_worker import report  # noqa: E402

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


def close(a, b, what, tol=1e-5):
    """Two tensors (SyncBatchNorm against BatchNorm on the whole batch) within tol, compared in float64."""
    assert_same(a.detach().double(), b.detach().double(), rtol=tol, atol=tol, what=what)


def summed(t):
    t = t.clone()
    dist.all_reduce(t)
    return t


def shard_bounds(sizes):
    start = sum(sizes[:RANK])
    return start, start + sizes[RANK]


def check_against_one_process(shape, sizes, momentum, affine=True, steps=2):
    """sizes[r]: rank r's share of the batch (they sum to shape[0]). Loss sum(y * g) per shard:
    the shards' losses add up to the whole batch's, so gradients add up too."""
    rng = np.random.default_rng(7)
    channels = shape[1]
    sync = nn.SyncBatchNorm(channels, momentum=momentum, affine=affine)
    ref = nn.BatchNorm2d(channels, momentum=momentum, affine=affine) if len(shape) == 4 else \
        nn.BatchNorm1d(channels, momentum=momentum, affine=affine)
    if affine:
        w, b = rng.standard_normal(channels).astype(np.float32), rng.standard_normal(channels).astype(np.float32)
        for m in (sync, ref):
            with torch.no_grad():
                m.weight.copy_(torch.tensor(w))
                m.bias.copy_(torch.tensor(b))
    lo, hi = shard_bounds(sizes)
    for step in range(steps):
        x_all = torch.tensor((rng.standard_normal(shape) * 3 + 1).astype(np.float32), requires_grad=True)
        g_all = torch.tensor(rng.standard_normal(shape).astype(np.float32))
        x = x_all.detach()[lo:hi].clone().requires_grad_()
        y = sync(x)
        (y * g_all[lo:hi]).sum().backward()
        y_ref = ref(x_all)
        (y_ref * g_all).sum().backward()
        close(y, y_ref[lo:hi], f"step {step} output")
        close(x.grad, x_all.grad[lo:hi], f"step {step} input grad", 1e-4)
        if affine:
            close(summed(sync.weight.grad), ref.weight.grad, f"step {step} weight grad (summed over ranks)", 1e-4)
            close(summed(sync.bias.grad), ref.bias.grad, f"step {step} bias grad (summed over ranks)", 1e-4)
            for m in (sync, ref):
                m.weight.grad = m.bias.grad = None
        close(sync.running_mean, ref.running_mean, f"step {step} running_mean")
        close(sync.running_var, ref.running_var, f"step {step} running_var")
    assert int(sync.num_batches_tracked) == int(ref.num_batches_tracked) == steps
    sync.eval()  # eval: the running statistics, no collective (the ranks' inputs differ in size)
    ref.eval()
    x = torch.randn(*((sizes[RANK] + 1,) + tuple(shape[1:])))
    close(sync(x), ref(x), "eval output")


def small_net(bn):
    torch.manual_seed(3)
    return nn.Sequential(nn.Conv2d(3, 4, 3), bn(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))


def check_ddp_training():
    """convert_sync_batchnorm + DDP on half the batch each == BatchNorm on the whole batch."""
    from pyctorch.nn.parallel import DistributedDataParallel as DDP
    rng = np.random.default_rng(11)
    ref = small_net(nn.BatchNorm2d)
    model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(small_net(nn.BatchNorm2d)))
    assert isinstance(model.module[1], nn.SyncBatchNorm)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref)]
    half = 4
    for step in range(3):
        x = torch.tensor(rng.standard_normal((2 * half, 3, 6, 6)).astype(np.float32))
        target = torch.tensor(rng.integers(0, 2, 2 * half))
        for opt in opts:
            opt.zero_grad()
        nn.functional.cross_entropy(model(x[RANK * half:(RANK + 1) * half]), target[RANK * half:(RANK + 1) * half]) \
            .backward()
        nn.functional.cross_entropy(ref(x), target).backward()
        for opt in opts:
            opt.step()
        for (name, p), q in zip(model.module.named_parameters(), ref.parameters()):
            close(p, q, f"step {step} {name}", 1e-4)
        for (name, b), c in zip(model.module.named_buffers(), ref.buffers()):
            close(b.float(), c.float(), f"step {step} buffer {name}")


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    report("even_shards_2d", lambda: check_against_one_process((8, 3, 5, 5), [4, 4], 0.1))
    report("uneven_shards_3d", lambda: check_against_one_process((8, 2, 7), [5, 3], 0.3))
    report("empty_shard_2d_input", lambda: check_against_one_process((6, 4), [6, 0], 0.1))
    report("cumulative_average_no_affine", lambda: check_against_one_process((6, 3, 4, 4), [2, 4], None, False))
    report("ddp_training", check_ddp_training)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
