"""One rank of the DDP tests (started by dist_helpers.run_ranks(..., script="_ddp_worker.py")).

Every rank builds the whole global batch and the initial weights from one NumPy seed, so it can
compute, in float64 NumPy, what one process training on the concatenated batch gets (the MLP's
backward is written out by hand below). Each check prints {"check", "ok", "error"}; the training
checks also print {"record": name, "values": [...]} lines, which the test compares between
pyctorch and torch's own DDP (PCT_DIST_FRAMEWORK=torch).
"""
import datetime
import json
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: the one comparison
from comparison import assert_same  # noqa: E402

FRAMEWORK = os.environ.get("PCT_DIST_FRAMEWORK", "pyctorch")
if FRAMEWORK == "torch":
    import torch  # noqa: E402
    import torch.distributed as dist  # noqa: E402
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
else:
    import pyctorch as torch  # noqa: E402
    import pyctorch.distributed as dist  # noqa: E402
    from pyctorch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402

DDP = torch.nn.parallel.DistributedDataParallel
RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
IN, HID, OUT, B = 5, 7, 3, 4  # B samples per rank
LR, MOMENTUM = 0.1, 0.9


def report(name, fn):
    try:
        fn()
        print(json.dumps({"check": name, "ok": True, "error": ""}), flush=True)
    except Exception:  # every check reports; the parent test names the failure
        print(json.dumps({"check": name, "ok": False, "error": traceback.format_exc()}), flush=True)


def record(name, values):
    print(json.dumps({"record": name, "values": values}), flush=True)


def close(got, want, atol, what):
    """got (a numpy copy of a tensor) within atol of the numpy reference want, element by element."""
    assert_same(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64), rtol=0.0, atol=atol, what=what)


def np_of(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


# -- the model and its NumPy twin ------------------------------------------------------------------
class MLP(torch.nn.Module):
    def __init__(self, extra=False):
        super().__init__()
        self.fc1 = torch.nn.Linear(IN, HID)
        self.fc2 = torch.nn.Linear(HID, OUT)
        if extra:  # used only when forward is asked to (find_unused_parameters)
            self.extra = torch.nn.Linear(HID, OUT)
            self.never = torch.nn.Linear(HID, OUT)

    def forward(self, x, use_extra=False):
        h = torch.tanh(self.fc1(x))
        y = self.fc2(h)
        if use_extra:
            y = y + self.extra(h)
        return y


def initial_weights(seed):
    rng = np.random.default_rng(seed)
    return {"fc1.weight": rng.normal(0, 0.5, (HID, IN)), "fc1.bias": rng.normal(0, 0.5, HID),
            "fc2.weight": rng.normal(0, 0.5, (OUT, HID)), "fc2.bias": rng.normal(0, 0.5, OUT),
            "extra.weight": rng.normal(0, 0.5, (OUT, HID)), "extra.bias": rng.normal(0, 0.5, OUT),
            "never.weight": rng.normal(0, 0.5, (OUT, HID)), "never.bias": rng.normal(0, 0.5, OUT)}


def make_model(seed, extra=False):
    m = MLP(extra)
    w = initial_weights(seed)
    with torch.no_grad():
        for n, p in m.named_parameters():
            p.copy_(torch.tensor(w[n], dtype=torch.float32))
    return m


def batches(seed, steps):
    """The global batches: (x, t) of WORLD * B samples per step."""
    rng = np.random.default_rng(seed)
    return [(rng.normal(0, 1, (WORLD * B, IN)), rng.normal(0, 1, (WORLD * B, OUT))) for _ in range(steps)]


def local(a):
    return torch.tensor(a[RANK * B:(RANK + 1) * B], dtype=torch.float32)


def np_grads(w, x, t, use_extra=False):
    """Gradients of mean((y - t)^2) for the MLP, by hand."""
    z = x @ w["fc1.weight"].T + w["fc1.bias"]
    h = np.tanh(z)
    y = h @ w["fc2.weight"].T + w["fc2.bias"]
    if use_extra:
        y = y + h @ w["extra.weight"].T + w["extra.bias"]
    dy = 2 * (y - t) / y.size
    dh = dy @ w["fc2.weight"]
    g = {"fc2.weight": dy.T @ h, "fc2.bias": dy.sum(0)}
    if use_extra:
        dh = dh + dy @ w["extra.weight"]
        g.update({"extra.weight": dy.T @ h, "extra.bias": dy.sum(0)})
    dz = dh * (1 - h * h)
    g.update({"fc1.weight": dz.T @ x, "fc1.bias": dz.sum(0)})
    return g


def mse(y, t):
    return ((y - t) ** 2).mean()


# -- checks -------------------------------------------------------------------------------------------
def check_construction():
    m = make_model(100 + RANK)  # each rank starts different: DDP must broadcast rank 0's
    m.register_buffer("counter", torch.full((2,), float(RANK + 5)))
    ddp = DDP(m)
    w0 = initial_weights(100)
    for n, p in ddp.module.named_parameters():
        close(np_of(p), w0[n], 1e-7, f"{n} after construction")
    close(np_of(ddp.module.counter), [5.0, 5.0], 0, "buffer after construction")
    keys = list(ddp.state_dict())
    assert keys == ["module." + k for k in m.state_dict()], keys
    assert ddp.module is m


def train(name, steps=4, **ddp_kwargs):
    model = make_model(7)
    ddp = DDP(model, **ddp_kwargs)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR, momentum=MOMENTUM)
    w = {k: v for k, v in initial_weights(7).items() if not k.startswith(("extra", "never"))}
    vel = {k: np.zeros_like(v) for k, v in w.items()}
    values = []
    ddp(local(batches(11, 1)[0][0]))  # a forward with grad enabled and no backward (an evaluation): no error
    for step, (x, t) in enumerate(batches(11, steps)):
        opt.zero_grad()
        loss = mse(ddp(local(x)), local(t))
        loss.backward()
        g = np_grads(w, x, t)
        for n, p in model.named_parameters():
            close(np_of(p.grad), g[n], 2e-6, f"step {step}: grad of {n}")
        opt.step()
        for n in w:
            vel[n] = MOMENTUM * vel[n] + g[n] if step else g[n]
            w[n] = w[n] - LR * vel[n]
        for n, p in model.named_parameters():
            close(np_of(p), w[n], 1e-5, f"step {step}: {n}")
            values += np_of(p).ravel().tolist()
    record(name, values)
    return ddp


def check_train_default():
    train("default")


def check_train_buckets():
    # each parameter its own bucket after the rebuild; grads are views of the buckets
    ddp = train("small_buckets", bucket_cap_mb=1e-5, gradient_as_bucket_view=True)
    if FRAMEWORK == "pyctorch":
        assert len(ddp._bucket_indices()) == 4, ddp._bucket_indices()
        assert ddp._bucket_indices()[0] == [3], ddp._bucket_indices()  # fc2.bias's grad is ready first


def check_no_sync():
    model = make_model(3)
    ddp = DDP(model)
    (x1, t1), (x2, t2) = batches(5, 2)
    w = initial_weights(3)
    with ddp.no_sync():
        mse(ddp(local(x1)), local(t1)).backward()
    mine = slice(RANK * B, (RANK + 1) * B)
    g_local = np_grads(w, x1[mine], t1[mine])
    for n, p in model.named_parameters():  # not reduced: this rank's own gradient
        close(np_of(p.grad), g_local[n], 2e-6, f"no_sync grad of {n}")
    mse(ddp(local(x2)), local(t2)).backward()
    g1, g2 = np_grads(w, x1, t1), np_grads(w, x2, t2)
    for n, p in model.named_parameters():  # the accumulated gradients, averaged
        close(np_of(p.grad), g1[n] + g2[n], 2e-6, f"synced after no_sync: grad of {n}")


def check_find_unused():
    model = make_model(4, extra=True)
    ddp = DDP(model, find_unused_parameters=True)
    w = initial_weights(4)
    halves = {}
    for it, (x, t) in enumerate(batches(6, 2)):
        use = (RANK == it % WORLD)  # iteration 0: only rank 0 uses `extra`; iteration 1: only rank 1
        ddp.zero_grad()
        mse(ddp(local(x), use_extra=use), local(t)).backward()
        user = it % WORLD
        expect = {}
        for r in range(WORLD):
            s = slice(r * B, (r + 1) * B)
            g = np_grads(w, x[s], t[s], use_extra=(r == user))
            for n, v in g.items():
                expect[n] = expect.get(n, 0) + v / WORLD
        for n, p in model.named_parameters():
            if n.startswith("never"):
                assert p.grad is None, f"{n}, unused on every rank, got a gradient"
            else:
                close(np_of(p.grad), expect[n], 2e-6, f"iteration {it}: grad of {n}")
        halves[it] = np_of(model.extra.bias.grad).tolist()
    record("find_unused", halves[0] + halves[1])


def check_static_graph():
    """static_graph=True: `extra` used only on rank 0, `never` on no rank, the same every iteration."""
    model = make_model(4, extra=True)
    ddp = DDP(model, static_graph=True)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    w = initial_weights(4)
    values = []
    for it, (x, t) in enumerate(batches(16, 3)):
        opt.zero_grad()
        mse(ddp(local(x), use_extra=(RANK == 0)), local(t)).backward()
        g = {}
        for r in range(WORLD):
            s = slice(r * B, (r + 1) * B)
            for n, v in np_grads(w, x[s], t[s], use_extra=(r == 0)).items():
                g[n] = g.get(n, 0) + v / WORLD
        for n, p in model.named_parameters():
            if n.startswith("never"):
                assert p.grad is None, f"iteration {it}: {n}, unused on every rank, got a gradient"
            else:
                close(np_of(p.grad), g[n], 2e-6, f"iteration {it}: grad of {n}")
        opt.step()
        for n in g:
            w[n] = w[n] - LR * g[n]
        values += [v for n, p in model.named_parameters() for v in np_of(p).ravel().tolist()]
    record("static_graph", values)


def check_unused_without_find_unused():
    model = make_model(4, extra=True)
    ddp = DDP(model)
    x, t = batches(6, 1)[0]
    mse(ddp(local(x)), local(t)).backward()  # extra/never get no gradient: the reduction never finishes
    try:
        ddp(local(x))
    except RuntimeError as e:
        assert str(e).startswith("Expected to have finished reduction in the prior iteration before starting a "
                                 "new one."), str(e)
    else:
        raise AssertionError("no error for a reduction left unfinished")


def comm_hook_grads(hook, state=None):
    model = make_model(8)
    ddp = DDP(model)
    ddp.register_comm_hook(state, hook)
    x, t = batches(9, 1)[0]
    mse(ddp(local(x)), local(t)).backward()
    w = initial_weights(8)
    per_rank = [np_grads(w, x[r * B:(r + 1) * B], t[r * B:(r + 1) * B]) for r in range(WORLD)]
    return ddp, model, per_rank


def check_allreduce_hook():
    _, model, per_rank = comm_hook_grads(default_hooks.allreduce_hook)
    for n, p in model.named_parameters():
        close(np_of(p.grad), sum(g[n] for g in per_rank) / WORLD, 2e-6, f"allreduce_hook grad of {n}")


def check_fp16_hook():
    _, model, per_rank = comm_hook_grads(default_hooks.fp16_compress_hook)
    for n, p in model.named_parameters():
        # each rank's float32 gradient cast to float16, divided by the world size there, summed in float16
        parts = [(np.float32(g[n]).astype(np.float16) / np.float16(WORLD)).astype(np.float16) for g in per_rank]
        want = parts[0]
        for q in parts[1:]:
            want = (want + q).astype(np.float16)
        close(np_of(p.grad), want.astype(np.float64), 2e-3 * max(1.0, float(np.abs(want).max())),
              f"fp16_compress_hook grad of {n}")
        close(np_of(p.grad), sum(g[n] for g in per_rank) / WORLD, 5e-3, f"fp16 hook vs exact {n}")
    record("fp16_hook", [v for p in model.parameters() for v in np_of(p.grad).ravel().tolist()])


def check_bf16_hook():
    # DDP refuses the bfloat16 hooks without CUDA+NCCL (torch's rule, this CPU build); the hook
    # itself runs on anything with a buffer()
    try:
        DDP(make_model(8)).register_comm_hook(None, default_hooks.bf16_compress_hook)
    except TypeError as e:
        assert str(e) == "BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ or XPU and XCCL", str(e)
    else:
        raise AssertionError("bf16_compress_hook was accepted without NCCL")

    class Bucket:
        def __init__(self, buf):
            self._buf = buf

        def buffer(self):
            return self._buf

    rng = np.random.default_rng(21)
    parts = [rng.normal(0, 3, 50) for _ in range(WORLD)]
    buf = torch.tensor(parts[RANK], dtype=torch.float32)
    out = default_hooks.bf16_compress_hook(None, Bucket(buf)).wait()
    assert out is buf or out.data_ptr() == buf.data_ptr(), "the result is not written back into the bucket's buffer"
    exact = sum(parts) / WORLD
    close(np_of(out), exact, 0.02 * np.abs(exact).max() + 1e-6, "bf16_compress_hook")
    record("bf16_hook", np_of(out).tolist())


def check_custom_hook():
    seen = []

    def hook(state, bucket):
        state["calls"] += 1
        buf = bucket.buffer()
        flat = torch.cat([g.reshape(-1) for g in bucket.gradients()])
        assert torch.equal(flat, buf), "bucket.gradients() do not lay out bucket.buffer()"
        assert len(bucket.parameters()) == len(bucket.gradients())
        seen.append((bucket.index(), bucket.is_last(), [tuple(p.shape) for p in bucket.parameters()]))
        fut = dist.all_reduce(buf, async_op=True).get_future()  # a sum: no division

        def double(f):
            return f.value()[0] * 2
        return fut.then(double)

    state = {"calls": 0}
    _, model, per_rank = comm_hook_grads(hook, state)
    assert state["calls"] == 1, state
    assert seen == [(0, True, [(HID, IN), (HID,), (OUT, HID), (OUT,)])], seen  # first iteration: one bucket
    for n, p in model.named_parameters():
        close(np_of(p.grad), 2 * sum(g[n] for g in per_rank), 4e-6, f"custom hook grad of {n}")


def check_overlap():
    """Buckets are reduced while backward still runs: after the rebuild (one bucket per parameter
    here), the first bucket's hook runs before fc1.weight -- whose gradient comes last -- has one."""
    model = make_model(2)
    ddp = DDP(model, bucket_cap_mb=1e-5)
    calls = []

    def hook(state, bucket):
        calls.append((bucket.index(), model.fc1.weight.grad is None))
        return default_hooks.allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, hook)
    for x, t in batches(3, 2):
        ddp.zero_grad()
        mse(ddp(local(x)), local(t)).backward()
    assert calls[0] == (0, False), calls  # iteration 1: one bucket, launched by the last gradient
    assert calls[1:] == [(0, True), (1, True), (2, True), (3, False)], calls


def check_future_hook():
    """A hook that reduces synchronously and returns a torch.futures.Future it completed itself,
    with the annotations torch checks."""
    def hook(state, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        buf = bucket.buffer()
        dist.all_reduce(buf)
        fut = torch.futures.Future()
        fut.set_result(buf.div_(WORLD))
        return fut

    _, model, per_rank = comm_hook_grads(hook)
    for n, p in model.named_parameters():
        close(np_of(p.grad), sum(g[n] for g in per_rank) / WORLD, 2e-6, f"future hook grad of {n}")

    def bad(state, bucket: int):
        return None
    try:
        DDP(make_model(1)).register_comm_hook(None, bad)
    except ValueError as e:
        assert str(e) == "Communication hook: bucket annotation should be dist.GradBucket.", str(e)
    else:
        raise AssertionError("a hook annotated with a wrong bucket type was accepted")


def check_hook_errors():
    ddp = DDP(make_model(1))
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    try:
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    except RuntimeError as e:
        assert "register_comm_hook or register_builtin_comm_hook can only be called once." in str(e), str(e)
    else:
        raise AssertionError("a second comm hook was accepted")
    try:
        ddp.register_comm_hook(None, 3)
    except TypeError as e:
        assert str(e) == "Communication hook must be callable.", str(e)
    else:
        raise AssertionError("a non-callable hook was accepted")
    try:
        torch.autograd.Variable._execution_engine.queue_callback(lambda: None)
    except RuntimeError as e:
        assert str(e) == "Final callbacks can only be installed during backward pass.", str(e)
    else:
        raise AssertionError("queue_callback outside backward was accepted")


def check_join(uneven):
    model = make_model(12)
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    data = batches(13, 3)
    mine = data[:2] if (uneven and RANK == 1) else data
    with ddp.join():
        for x, t in mine:
            opt.zero_grad()
            mse(ddp(local(x)), local(t)).backward()
            opt.step()
    # Expected: every rank active averages over the initial world size (joined ranks add zeros)
    w = {k: v for k, v in initial_weights(12).items() if not k.startswith(("extra", "never"))}
    for step, (x, t) in enumerate(data):
        active = [r for r in range(WORLD) if not (uneven and step == 2 and r == 1)]  # rank 1 joined early
        g = {}
        for r in active:
            s = slice(r * B, (r + 1) * B)
            for n, v in np_grads(w, x[s], t[s]).items():
                g[n] = g.get(n, 0) + v / WORLD
        for n in w:
            w[n] = w[n] - LR * g[n]
    for n, p in model.named_parameters():  # after join, every rank holds the last joiner's model
        close(np_of(p), w[n], 1e-5, f"after join ({'uneven' if uneven else 'even'}): {n}")


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    report("construction", check_construction)
    report("train_default", check_train_default)
    report("train_buckets", check_train_buckets)
    report("no_sync", check_no_sync)
    report("find_unused", check_find_unused)
    report("static_graph", check_static_graph)
    report("allreduce_hook", check_allreduce_hook)
    report("fp16_hook", check_fp16_hook)
    report("bf16_hook", check_bf16_hook)
    report("custom_hook", check_custom_hook)
    report("future_hook", check_future_hook)
    report("overlap", check_overlap)
    report("hook_errors", check_hook_errors)
    report("join_even", lambda: check_join(False))
    report("join_uneven", lambda: check_join(True))
    report("unused_without_find_unused", check_unused_without_find_unused)  # last: it leaves a reduction open
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
