"""DistributedDataParallel across 2 local processes (Gloo): every check in _ddp_worker.py compares
the ranks' gradients and parameters with a float64 NumPy model trained on the concatenated batch;
the same worker on torch's own DDP passes the same checks and gives the same numbers."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyctorch  # noqa: E402
import pyctorch.distributed as dist  # noqa: E402
from dist_helpers import ROOT, requires_gloo, run_ranks  # noqa: E402

try:
    import torch
    import torch.distributed as tdist
    HAVE_TORCH = tdist.is_available() and tdist.is_gloo_available()
except ImportError:
    HAVE_TORCH = False

CHECKS = ["construction", "train_default", "train_buckets", "no_sync", "find_unused", "static_graph", "allreduce_hook",
          "fp16_hook", "bf16_hook", "custom_hook", "future_hook", "overlap", "hook_errors", "join_even", "join_uneven",
          "unused_without_find_unused"]


def records(outputs):
    """{name: values} from each rank's record lines; every rank must record the same values."""
    per_rank = []
    for code, out, err in outputs:
        assert code == 0, f"a rank exited with {code}:\n{err[-3000:]}"
        per_rank.append({r["record"]: r["values"] for r in map(json.loads, (x for x in out.splitlines()
                                                                              if x.startswith('{"record"')))})
    for r in per_rank[1:]:
        assert r == per_rank[0], "the ranks hold different parameters"
    return per_rank[0]


@pytest.fixture(scope="module")
def ddp_run():
    results, outputs = run_ranks("ddp", world_size=2, timeout=60, script="_ddp_worker.py")
    return results, records(outputs)


@requires_gloo
@pytest.mark.parametrize("check", CHECKS)
def test_ddp(ddp_run, check):
    results, _ = ddp_run
    assert check in results, f"{check} did not run"
    assert results[check] == "", results[check]


@requires_gloo
def test_ddp_four_processes():
    """The same checks with 4 ranks (every NumPy expectation is written for any world size)."""
    results, outputs = run_ranks("ddp", world_size=4, timeout=90, script="_ddp_worker.py")
    records(outputs)
    assert set(results) == set(CHECKS), set(CHECKS) ^ set(results)
    failed = {k: v for k, v in results.items() if v}
    assert not failed, failed


@requires_gloo
@pytest.mark.skipif(not HAVE_TORCH, reason="torch with Gloo is not installed (oracle comparison skips)")
def test_torch_ddp_gives_the_same_numbers(ddp_run):
    """The oracle: torch's DDP passes every check of the worker, and its parameters at every step
    (and the hooks' gradients) are pyctorch's to float32 rounding."""
    results, outputs = run_ranks("ddp", world_size=2, timeout=90, script="_ddp_worker.py",
                                 env={"PCT_DIST_FRAMEWORK": "torch"})
    failed = {k: v for k, v in results.items() if v}
    assert not failed, failed
    assert set(results) == set(CHECKS)
    theirs = records(outputs)
    ours = ddp_run[1]
    assert set(theirs) == set(ours) == {"default", "small_buckets", "find_unused", "static_graph", "fp16_hook",
                                         "bf16_hook"}
    for name in ours:
        a, b = np.array(ours[name]), np.array(theirs[name])
        tol = 2e-3 if name.endswith("hook") else 1e-6  # a half-precision rounding may fall differently
        assert a.shape == b.shape and np.allclose(a, b, rtol=0, atol=tol), (name, np.abs(a - b).max())


@requires_gloo
def test_ddp_under_the_alias():
    """torch code reaches pyctorch's DDP and default hooks through `import torch`."""
    code = ("import torch, torch.nn.parallel, torch.distributed as dist\n"
            "from torch.nn.parallel import DistributedDataParallel as D\n"
            "from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as h\n"
            "from torch.distributed.algorithms import Join\n"
            "assert D is torch.nn.parallel.DistributedDataParallel, D\n"
            "assert D.__module__ == 'pyctorch.nn.parallel.distributed', D.__module__\n"
            "assert h.allreduce_hook.__module__.startswith('pyctorch.'), h.allreduce_hook.__module__\n"
            "store = dist.HashStore()\n"
            "dist.init_process_group('gloo', store=store, rank=0, world_size=1)\n"
            "m = torch.nn.Linear(2, 2)\n"
            "d = D(m)\n"
            "d(torch.ones(3, 2)).sum().backward()\n"
            "assert torch.equal(m.weight.grad, torch.full((2, 2), 3.0)), m.weight.grad\n"
            "dist.destroy_process_group()\n"
            "print('ok')\n")
    p = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", "-c", code], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1"))
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-3000:]


def test_bucket_assignment():
    """dist._compute_bucket_assignment_by_size: buckets close once they reach the current limit (the
    first limit for the first bucket of each dtype), sorted by smallest index unless the indices
    give the order."""
    ts = [pyctorch.zeros(300000), pyctorch.zeros(10), pyctorch.zeros(300000), pyctorch.zeros(5, dtype=pyctorch.float64),
          pyctorch.zeros(7000000)]
    limits = [1 << 20, 25 << 20]
    # 1.2 MB closes the 1 MiB first bucket; the float64 tensor has its own; the rest share the 25 MiB one
    assert dist._compute_bucket_assignment_by_size(ts, limits) == ([[0], [1, 2, 4], [3]], [1 << 20, 25 << 20, 1 << 20])
    assert dist._compute_bucket_assignment_by_size(ts, limits, [], [4, 3, 2, 1, 0]) == \
        ([[4], [3, 2, 0], [1]], [1 << 20, 25 << 20, 1 << 20])
    assert dist._compute_bucket_assignment_by_size(ts, [100]) == ([[0], [1, 2], [3], [4]], [100] * 4)
    assert dist._DEFAULT_FIRST_BUCKET_BYTES == 1 << 20
    if HAVE_TORCH:
        tts = [torch.zeros(t.shape, dtype=getattr(torch, str(t.dtype).split(".")[1])) for t in ts]
        for args in ((limits,), (limits, [], [4, 3, 2, 1, 0]), ([100],)):
            assert tuple(dist._compute_bucket_assignment_by_size(ts, *args)) == \
                tuple(tdist._compute_bucket_assignment_by_size(tts, *args))


def test_queue_callback():
    """Variable._execution_engine.queue_callback: the callback runs once backward has accumulated
    every gradient, before backward() returns; callbacks may queue callbacks; outside a backward
    it is torch's error."""
    engine = pyctorch.autograd.Variable._execution_engine
    x = pyctorch.ones(3, requires_grad=True)
    y = pyctorch.ones(2, requires_grad=True)
    log = []

    def second():
        log.append(("second", y.grad.tolist()))

    def first():
        log.append(("first", x.grad.tolist(), y.grad.tolist()))
        engine.queue_callback(second)

    def hook(p):
        log.append("hook")
        if len(log) == 1:
            engine.queue_callback(first)

    x.register_post_accumulate_grad_hook(hook)
    ((x * 2).sum() + (y * 3).sum()).backward()
    assert log == ["hook", ("first", [2.0, 2.0, 2.0], [3.0, 3.0]), ("second", [3.0, 3.0])], log
    log.clear()
    z = x * 1  # (a hook on a non-leaf: pyctorch's grad() skips the hooks of the leaves it captures)
    z.register_hook(lambda g: engine.queue_callback(lambda: log.append(("after grad", g.tolist()))))
    pyctorch.autograd.grad((z * 5).sum(), x)  # grad() runs the callbacks too
    assert log == [("after grad", [5.0, 5.0, 5.0])], log
    with pytest.raises(RuntimeError, match="^Final callbacks can only be installed during backward pass.$"):
        engine.queue_callback(lambda: None)


@pytest.mark.parametrize("mod", ["pyctorch"] + (["torch"] if HAVE_TORCH else []))
def test_futures(mod):
    """torch.futures.Future: then() chains, set_result once, exceptions carried to wait(); the
    Future of a collective is one too."""
    m = pyctorch if mod == "pyctorch" else torch
    f = m.futures.Future()
    g = f.then(lambda fut: fut.value() * 2)
    h = g.then(lambda fut: 1 / 0)
    assert not f.done() and not g.done()
    f.set_result(21)
    assert f.done() and g.wait() == 42 and g.value() == 42
    with pytest.raises(RuntimeError, match="^Got the following error when running the callback: ZeroDivisionError: "
                                           "division by zero"):
        h.wait()
    with pytest.raises(RuntimeError, match="^Attempting to mark a completed Future as complete again. Note that a "
                                           "Future can only be marked completed once.$"):
        f.set_result(1)
    with pytest.raises(AssertionError, match="^3 is of type <class 'int'>, not an Exception.$"):
        m.futures.Future().set_exception(3)
    e = m.futures.Future()
    e.set_exception(ValueError("x"))
    with pytest.raises(ValueError, match="^x$"):
        e.wait()
    done = m.futures.collect_all([f, g])
    assert [x.value() for x in done.wait()] == [21, 42]
    assert m.futures.wait_all([f, g]) == [21, 42]
    if mod == "pyctorch":
        assert issubclass(dist.distributed_c10d.Future, pyctorch.futures.Future)
