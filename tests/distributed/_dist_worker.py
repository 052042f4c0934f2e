"""One rank of a multi-process distributed test (started by dist_helpers.run_ranks).

    python _dist_worker.py SCENARIO

RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT come from the environment. Every rank builds all
ranks' inputs from one seed, so it can compute each collective's expected result with NumPy
by itself. A scenario prints one JSON line per check, {"check": name, "ok": bool, "error": text}.
"""
import datetime
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: the one comparison
from comparison import assert_same  # noqa: E402

FRAMEWORK = os.environ.get("PCT_DIST_FRAMEWORK", "pyctorch")
if FRAMEWORK == "torch":  # the same checks on real torch: the oracle
    import torch  # noqa: E402
    import torch.distributed as dist  # noqa: E402
else:
    import pyctorch as torch  # noqa: E402
    import pyctorch.distributed as dist  # noqa: E402

RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
TIMEOUT = datetime.timedelta(seconds=float(os.environ.get("PCT_DIST_TIMEOUT", "20")))


def report(name, fn):
    try:
        fn()
        print(json.dumps({"check": name, "ok": True, "error": ""}), flush=True)
    except Exception:  # every check reports; the parent test names the failure
        print(json.dumps({"check": name, "ok": False, "error": traceback.format_exc()}), flush=True)


def tensor_of(a, dtype):
    if dtype in (torch.float16, torch.bfloat16):
        return torch.tensor(a.astype(np.float32)).to(dtype)
    return torch.from_numpy(np.array(a, copy=True)).to(dtype)  # never shares the expected data


def inputs(seed, shape, np_dtype, low=-8, high=8):
    """One array per rank (the same on every rank, from one seed)."""
    rng = np.random.default_rng(seed)
    if np_dtype == np.bool_:
        return [rng.integers(0, 2, size=shape).astype(np.bool_) for _ in range(WORLD)]
    return [rng.integers(low, high, size=shape).astype(np_dtype) for _ in range(WORLD)]


def check_equal(got, want, rtol=0.0):
    """got (a tensor) against a numpy result: exactly, or within rtol; dtypes may differ (a float64 reference)."""
    assert_same(got, np.asarray(want), rtol=rtol, atol=0.0, exact=not rtol, check_dtype=False)


NP_REDUCE = {
    "SUM": lambda xs: np.sum(xs, axis=0), "PRODUCT": lambda xs: np.prod(xs, axis=0),
    "MIN": lambda xs: np.min(xs, axis=0), "MAX": lambda xs: np.max(xs, axis=0),
    "BAND": lambda xs: np.bitwise_and.reduce(xs, axis=0), "BOR": lambda xs: np.bitwise_or.reduce(xs, axis=0),
    "BXOR": lambda xs: np.bitwise_xor.reduce(xs, axis=0),
}

DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64, "int8": np.int8,
          "uint8": np.uint8, "float16": np.float32, "bfloat16": np.float32, "bool": np.bool_}


def all_reduce_case(op_name, dtype_name, seed):
    def run():
        dtype = getattr(torch, dtype_name)
        low = 0 if dtype_name in ("uint8", "bool") else -4
        xs = inputs(seed, (3, 5), DTYPES[dtype_name], low, 5)
        t = tensor_of(xs[RANK], dtype)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op_name))
        if dtype_name == "bool":
            want = {"SUM": np.any, "MAX": np.any, "BOR": np.any, "PRODUCT": np.all, "MIN": np.all, "BAND": np.all,
                    "BXOR": lambda a, axis: np.bitwise_xor.reduce(a, axis=axis)}[op_name](np.stack(xs), axis=0)
        else:
            want = NP_REDUCE[op_name](np.stack(xs).astype(DTYPES[dtype_name]))
        check_equal(t, want, rtol=1e-2 if dtype_name in ("float16", "bfloat16") else 0.0)
    return run


def collectives():
    dist.init_process_group("gloo", timeout=TIMEOUT)
    assert dist.get_rank() == RANK and dist.get_world_size() == WORLD
    seed = 0
    for op in ("SUM", "PRODUCT", "MIN", "MAX"):
        for dt in ("float32", "float64", "int32", "int64", "int8", "uint8", "float16", "bfloat16", "bool"):
            seed += 1
            report(f"all_reduce_{op}_{dt}", all_reduce_case(op, dt, seed))
    for op in ("BAND", "BOR", "BXOR"):
        for dt in ("int32", "int64", "uint8", "bool"):
            seed += 1
            report(f"all_reduce_{op}_{dt}", all_reduce_case(op, dt, seed))

    def avg():
        xs = inputs(100, (4,), np.float32)
        t = tensor_of(xs[RANK], torch.float32)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        check_equal(t, np.mean(np.stack(xs), axis=0), rtol=1e-6)
    report("all_reduce_AVG_float32", avg)

    def noncontig():
        xs = inputs(101, (4, 3), np.float32)
        base = tensor_of(xs[RANK], torch.float32)
        t = base.t()  # a transposed view: staged and copied back
        dist.all_reduce(t)
        check_equal(base, np.sum(np.stack(xs), axis=0))
        assert not t.is_contiguous()
    report("all_reduce_noncontiguous", noncontig)

    def async_work():
        xs = inputs(102, (5,), np.float64)
        t = tensor_of(xs[RANK], torch.float64)
        w = dist.all_reduce(t, async_op=True)
        assert w.wait() is True and w.is_completed()
        check_equal(t, np.sum(np.stack(xs), axis=0))
        assert w.result()[0] is t
        fut = w.get_future()
        assert fut.done() and fut.wait()[0] is t
        doubled = fut.then(lambda f: f.value()[0] * 2)
        check_equal(doubled.wait(), np.sum(np.stack(xs), axis=0) * 2)
    report("all_reduce_async", async_work)

    def async_in_flight():
        # several collectives in flight at once, a synchronous one queued behind them, then the waits
        xs = [inputs(103 + i, (50_000,), np.float32) for i in range(3)]
        ts = [tensor_of(x[RANK], torch.float32) for x in xs]
        works = [dist.all_reduce(t, async_op=True) for t in ts]
        b = torch.tensor([float(RANK)])
        dist.broadcast(b, src=0)  # runs after the three above, on every rank
        check_equal(b, np.array([0.0], dtype=np.float32))
        works.append(dist.all_reduce(b, op=dist.ReduceOp.MAX, async_op=True))
        for w, t, x in zip(works, ts, xs):
            assert w.wait() is True and w.is_completed() and w.is_success() and w.exception() is None
            check_equal(t, np.sum(np.stack(x), axis=0), rtol=1e-6)
        works[-1].wait()
        fut = dist.all_reduce(torch.ones(3), async_op=True).get_future()
        chained = fut.then(lambda f: f.value()[0] + 1)
        check_equal(chained.wait(), np.full(3, WORLD + 1.0, dtype=np.float32))
        assert fut.done() and chained.done()
    report("async_in_flight", async_in_flight)

    def broadcast():
        for src in range(WORLD):
            xs = inputs(200 + src, (2, 3), np.int64)
            t = tensor_of(xs[RANK], torch.int64)
            dist.broadcast(t, src=src)
            check_equal(t, xs[src])
        if FRAMEWORK == "torch":
            return  # torch's Gloo writes a strided view as if it were contiguous; pyctorch copies in and out
        xs = inputs(210, (3, 4), np.float32)
        base = tensor_of(xs[RANK], torch.float32)
        dist.broadcast(base[:, 1], src=WORLD - 1)  # a strided column
        want = xs[RANK].copy()
        want[:, 1] = xs[WORLD - 1][:, 1]
        check_equal(base, want)
    report("broadcast", broadcast)

    def reduce():
        for dst in range(WORLD):
            xs = inputs(300 + dst, (6,), np.float32)
            t = tensor_of(xs[RANK], torch.float32)
            dist.reduce(t, dst=dst, op=dist.ReduceOp.MAX)
            if RANK == dst:
                check_equal(t, np.max(np.stack(xs), axis=0))
    report("reduce", reduce)

    def all_gather():
        xs = inputs(400, (2, 2), np.int32)
        out = [torch.zeros(2, 2, dtype=torch.int32) for _ in range(WORLD)]
        dist.all_gather(out, tensor_of(xs[RANK], torch.int32))
        for i in range(WORLD):
            check_equal(out[i], xs[i])
    report("all_gather", all_gather)

    def all_gather_into_tensor():
        xs = inputs(401, (3,), np.float64)
        out = torch.zeros(WORLD * 3, dtype=torch.float64)
        dist.all_gather_into_tensor(out, tensor_of(xs[RANK], torch.float64))
        check_equal(out, np.concatenate(xs))
        out2 = torch.zeros(WORLD * 2, 3)
        dist.all_gather_into_tensor(out2, tensor_of(np.stack([xs[RANK], xs[RANK] + 1]), torch.float32))
        check_equal(out2, np.concatenate([np.stack([x, x + 1]) for x in xs]).astype(np.float32))
        try:  # torch's Gloo takes the output as world_size chunks along dim 0, each shaped as the input
            dist.all_gather_into_tensor(torch.zeros(WORLD, 3, dtype=torch.float64), tensor_of(xs[RANK], torch.float64))
        except RuntimeError as e:
            assert str(e) == "ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected (3), got (1, 3))", e
        else:
            raise AssertionError("a stacked output was accepted")
    report("all_gather_into_tensor", all_gather_into_tensor)

    def gather():
        xs = inputs(500, (4,), np.float32)
        dst = WORLD - 1
        lst = [torch.zeros(4) for _ in range(WORLD)] if RANK == dst else None
        dist.gather(tensor_of(xs[RANK], torch.float32), lst, dst=dst)
        if RANK == dst:
            for i in range(WORLD):
                check_equal(lst[i], xs[i])
    report("gather", gather)

    def scatter():
        xs = inputs(600, (3,), np.int64)
        out = torch.zeros(3, dtype=torch.int64)
        lst = [tensor_of(x, torch.int64) for x in xs] if RANK == 0 else None
        dist.scatter(out, lst, src=0)
        check_equal(out, xs[RANK])
    report("scatter", scatter)

    def reduce_scatter():
        per_rank = [inputs(700 + r, (2,), np.float32) for r in range(WORLD)]  # per_rank[r][i]: rank r's chunk i
        out = torch.zeros(2)
        dist.reduce_scatter(out, [tensor_of(per_rank[RANK][i], torch.float32) for i in range(WORLD)])
        check_equal(out, np.sum([per_rank[r][RANK] for r in range(WORLD)], axis=0))
    report("reduce_scatter", reduce_scatter)

    def reduce_scatter_tensor():
        xs = inputs(800, (WORLD * 3,), np.int64)
        inp = tensor_of(xs[RANK], torch.int64)
        out = torch.zeros(3, dtype=torch.int64)
        dist.reduce_scatter_tensor(out, inp, op=dist.ReduceOp.MIN)
        check_equal(out, np.min(np.stack(xs), axis=0)[RANK * 3:(RANK + 1) * 3])
        check_equal(inp, xs[RANK])  # the input is left as it was
    report("reduce_scatter_tensor", reduce_scatter_tensor)

    def all_to_all_single():
        xs = inputs(900, (WORLD * 2, 3), np.float32)
        out = torch.zeros(WORLD * 2, 3)
        dist.all_to_all_single(out, tensor_of(xs[RANK], torch.float32))
        check_equal(out, np.concatenate([xs[r][RANK * 2:(RANK + 1) * 2] for r in range(WORLD)]))
        # uneven splits: rank r sends (i + r + 1) rows to rank i
        sends = [[i + r + 1 for i in range(WORLD)] for r in range(WORLD)]
        data = [np.arange(sum(sends[r]), dtype=np.float32) + 100 * r for r in range(WORLD)]
        recv_sizes = [sends[r][RANK] for r in range(WORLD)]
        out = torch.zeros(sum(recv_sizes))
        dist.all_to_all_single(out, tensor_of(data[RANK], torch.float32), recv_sizes, sends[RANK])
        want = [data[r][sum(sends[r][:RANK]):sum(sends[r][:RANK + 1])] for r in range(WORLD)]
        check_equal(out, np.concatenate(want))
    report("all_to_all_single", all_to_all_single)

    def all_to_all():
        xs = [inputs(1000 + i, (2,), np.int64) for i in range(WORLD)]  # xs[i][r]: what rank r sends to i
        outs = [torch.zeros(2, dtype=torch.int64) for _ in range(WORLD)]
        dist.all_to_all(outs, [tensor_of(xs[i][RANK], torch.int64) for i in range(WORLD)])
        for r in range(WORLD):
            check_equal(outs[r], xs[RANK][r])
    report("all_to_all", all_to_all)

    def send_recv():
        peer = (RANK + 1) % WORLD
        prev = (RANK - 1) % WORLD
        xs = inputs(1100, (5,), np.float32)
        got = torch.zeros(5)
        if RANK % 2 == 0:
            dist.send(tensor_of(xs[RANK], torch.float32), dst=peer)
            src = dist.recv(got, src=prev)
        else:
            src = dist.recv(got, src=prev)
            dist.send(tensor_of(xs[RANK], torch.float32), dst=peer)
        assert src == prev, src
        check_equal(got, xs[prev])
        # isend/irecv posted in the same order on both ranks cannot deadlock; any-source receive
        got2 = torch.zeros(5)
        ws = [dist.isend(tensor_of(xs[RANK] * 2, torch.float32), dst=peer, tag=7), dist.irecv(got2, tag=7)]
        try:
            ws[1].get_future()
        except RuntimeError as e:
            assert str(e) == "Work::getFuture not implemented.", e  # torch's Gloo sends and receives have none
        else:
            raise AssertionError("a receive gave a future")
        for w in ws:
            w.wait()
        assert ws[1].is_completed()
        check_equal(got2, xs[prev] * 2)
        try:
            dist.irecv(torch.zeros(3, 2).t(), src=prev)
        except RuntimeError as e:
            assert str(e) == "input tensor has to be contiguous", e
        else:
            raise AssertionError("a non-contiguous receive buffer was accepted")
        got3 = torch.zeros(2, 3)
        ops = [dist.P2POp(dist.isend, tensor_of(np.arange(6.0, dtype=np.float32).reshape(2, 3) + RANK, torch.float32),
                          peer), dist.P2POp(dist.irecv, got3, prev)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        check_equal(got3, np.arange(6.0, dtype=np.float32).reshape(2, 3) + prev)
    report("send_recv", send_recv)

    def barrier():
        t0 = time.time()
        if RANK == 0:
            time.sleep(0.3)
        dist.barrier()
        if RANK != 0:
            assert time.time() - t0 > 0.2, "barrier returned before rank 0 arrived"
    report("barrier", barrier)

    def objects():
        objs = [{"rank": RANK, "payload": list(range(RANK + 3))}, "text" * (RANK + 1)]
        got = [None] * WORLD
        dist.all_gather_object(got, objs)
        assert got == [[{"rank": r, "payload": list(range(r + 3))}, "text" * (r + 1)] for r in range(WORLD)], got
        lst = [{"a": 1}, [1, 2, 3], "s"] if RANK == 0 else [None, None, None]
        dist.broadcast_object_list(lst, src=0)
        assert lst == [{"a": 1}, [1, 2, 3], "s"], lst
        gl = [None] * WORLD if RANK == 0 else None
        dist.gather_object(("r", RANK), gl, dst=0)
        if RANK == 0:
            assert gl == [("r", r) for r in range(WORLD)], gl
        out = [None]
        dist.scatter_object_list(out, [f"to{r}" for r in range(WORLD)] if RANK == 0 else None, src=0)
        assert out == [f"to{RANK}"], out
        tens = [None] * WORLD
        dist.all_gather_object(tens, torch.tensor([RANK, 10 * RANK]))
        for r in range(WORLD):
            check_equal(tens[r], np.array([r, 10 * r]))
    report("object_collectives", objects)

    def subgroups():
        g = dist.new_group([WORLD - 1])
        if RANK == WORLD - 1:
            assert dist.get_rank(g) == 0 and dist.get_world_size(g) == 1
            t = torch.ones(2)
            dist.all_reduce(t, group=g)
            check_equal(t, np.ones(2, dtype=np.float32))
            assert dist.get_process_group_ranks(g) == [WORLD - 1]
        else:
            assert g is dist.GroupMember.NON_GROUP_MEMBER
            assert dist.get_rank(g) == -1 and dist.get_world_size(g) == -1
            import warnings
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                assert dist.all_reduce(torch.ones(2), group=g) is None
        everyone = dist.new_group(list(range(WORLD)))
        t = torch.tensor([float(RANK)])
        dist.all_reduce(t, group=everyone)
        check_equal(t, np.array([sum(range(WORLD))], dtype=np.float32))
        dist.broadcast(t, src=WORLD - 1, group=everyone)
        assert dist.get_global_rank(everyone, WORLD - 1) == WORLD - 1
        assert dist.get_group_rank(everyone, 0) == 0
    report("new_group", subgroups)

    def subgroups_by_size():
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=10))
        cur, groups = dist.new_subgroups(group_size=1)
        assert len(groups) == WORLD and dist.get_world_size(cur) == 1 and dist.get_rank(cur) == 0
        t = torch.tensor([float(RANK)])
        dist.all_reduce(t, group=cur)
        check_equal(t, np.array([RANK], dtype=np.float32))
    report("new_subgroups", subgroups_by_size)

    def detail():
        # a group made under TORCH_DISTRIBUTED_DEBUG=DETAIL checks every collective's fingerprint
        dist.set_debug_level(dist.DebugLevel.DETAIL)
        g = dist.new_group(list(range(WORLD)))
        dist.set_debug_level(dist.DebugLevel.OFF)
        t = torch.ones(2)
        dist.all_reduce(t, group=g)
        check_equal(t, np.full(2, WORLD, dtype=np.float32))
        other = 1 - RANK
        opts = ("TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false "
                "(default), pinned_memory=false (default), memory_format=(nullopt))")

        def fp(seq, op, shape, dtype):
            return (f"CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, TensorShape=[{', '.join(map(str, shape))}], "
                    f"TensorDtypes={dtype}, TensorDeviceTypes={opts})")

        def expect(fn, seq, mine, theirs, aspects):
            try:
                fn()
            except RuntimeError as e:
                want = (f"Detected mismatch between collectives on ranks. Rank {RANK} is running collective: "
                        f"{fp(seq, *mine)}, but Rank {other} is running collective: {fp(seq, *theirs)}."
                        f"Collectives differ in the following aspects: {aspects}")
                assert str(e) == want, (str(e), want)
            else:
                raise AssertionError("a mismatched collective ran")
        rows = [4, 5]  # a refused collective takes no sequence number: each mismatch below is number 1
        expect(lambda: dist.all_reduce(torch.ones(rows[RANK], 2), group=g), 1,
               ("ALLREDUCE", [rows[RANK], 2], "Float"), ("ALLREDUCE", [rows[other], 2], "Float"),
               f"  Tensor Tensor shapes: {rows[RANK]} 2vs {rows[other]} 2")
        ops = ["ALLREDUCE", "BROADCAST"]
        expect(lambda: dist.all_reduce(torch.ones(3), group=g) if RANK == 0 else dist.broadcast(torch.ones(3), 0, group=g),
               1, (ops[RANK], [3], "Float"), (ops[other], [3], "Float"), f"  Op type: {ops[RANK]}vs {ops[other]}")
        dts = [(torch.float32, "Float"), (torch.float64, "Double")]
        expect(lambda: dist.all_reduce(torch.ones(3, dtype=dts[RANK][0]), group=g), 1,
               ("ALLREDUCE", [3], dts[RANK][1]), ("ALLREDUCE", [3], dts[other][1]),
               f"  Tensor Tensor dtypes: {dts[RANK][1]}vs {dts[other][1]}")
        t = torch.ones(2)
        dist.all_reduce(t, group=g)  # the group still works
        check_equal(t, np.full(2, WORLD, dtype=np.float32))
    if WORLD == 2:
        report("detail_mismatch", detail)

    def monitored():
        # last: under torch a monitored barrier that times out leaves the group unusable
        t0 = time.time()
        if RANK == 0:
            for wait_all in (False, True):
                try:
                    dist.monitored_barrier(timeout=datetime.timedelta(milliseconds=300), wait_all_ranks=wait_all)
                except RuntimeError as e:
                    who = ("Ranks " + ", ".join(str(r) for r in range(1, WORLD))) if wait_all else "Rank 1"
                    assert f"[Rank 0]: {who} failed to pass monitoredBarrier in 300 ms" in str(e), e
                else:
                    raise AssertionError("monitored_barrier passed although ranks stayed away")
                if FRAMEWORK == "torch":
                    break
            assert time.time() - t0 < 5

    def empty_and_0d():
        t = torch.tensor(2.0 + RANK)
        dist.all_reduce(t)
        check_equal(t, np.array(sum(2.0 + r for r in range(WORLD)), dtype=np.float32))
        e = torch.zeros(0, 3)
        dist.all_reduce(e)
        dist.broadcast(e, src=0)
        dist.reduce(e, dst=0)
        dist.all_gather([torch.zeros(0, 3) for _ in range(WORLD)], e)
        dist.gather(e, [torch.zeros(0, 3) for _ in range(WORLD)] if RANK == 0 else None, dst=0)
        dist.scatter(e, [torch.zeros(0, 3) for _ in range(WORLD)] if RANK == 0 else None, src=0)
        dist.reduce_scatter_tensor(torch.zeros(0), torch.zeros(0))
        dist.all_to_all_single(torch.zeros(0), torch.zeros(0))
        assert tuple(e.shape) == (0, 3)
        # all_to_all_single where only rank 1 sends, and only to rank 0
        out = torch.zeros(2 if RANK == 0 else 0)
        inp = torch.zeros(2 if RANK == 1 else 0) + 5
        dist.all_to_all_single(out, inp, [0, 2] if RANK == 0 else [0, 0], [0, 0] if RANK == 0 else [2, 0])
        check_equal(out, np.full(2 if RANK == 0 else 0, 5.0, dtype=np.float32))
    if WORLD == 2:
        report("empty_and_0d", empty_and_0d)

    def state():
        assert dist.is_initialized() and dist.get_backend() == "gloo"
        assert dist.group.WORLD is not None and dist.get_rank(dist.group.WORLD) == RANK
    report("state", state)
    report("monitored_barrier", monitored)
    dist.destroy_process_group()

    def destroyed():
        assert not dist.is_initialized() and dist.group.WORLD is None
    report("destroyed", destroyed)


def init_methods():
    """init_process_group through tcp:// then file://, each followed by one all_reduce."""
    if os.environ.get("PCT_DIST_EXPECT_ALIAS"):
        def alias():
            import pyctorch
            assert torch is pyctorch and dist is pyctorch.distributed, (torch, dist)
        report("alias", alias)
    port = os.environ["MASTER_PORT"]
    folder = os.environ["PCT_DIST_DIR"]
    for name, kwargs in (
            ("init_tcp", dict(init_method=f"tcp://127.0.0.1:{port}", rank=RANK, world_size=WORLD)),
            ("init_file", dict(init_method=f"file://{folder}/filestore?rank={RANK}&world_size={WORLD}")),
            ("init_store", dict(store=dist.FileStore(f"{folder}/explicit", WORLD), rank=RANK, world_size=WORLD))):
        def run():
            dist.init_process_group("gloo", timeout=TIMEOUT, **kwargs)
            t = torch.tensor([RANK + 1.0])
            dist.all_reduce(t)
            check_equal(t, np.array([WORLD * (WORLD + 1) / 2], dtype=np.float32))
            assert dist.get_rank() == RANK
            dist.destroy_process_group()
        report(name, run)


def peer_dies():
    """The last rank exits instead of joining an all_reduce: the others raise, never hang."""
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=5))
    dist.barrier()
    if RANK == WORLD - 1:
        os._exit(0)

    def run():
        t0 = time.time()
        try:
            dist.all_reduce(torch.ones(1000))
        except RuntimeError as e:
            assert isinstance(e, dist.DistBackendError), type(e)
            assert time.time() - t0 < 8, time.time() - t0
            return
        raise AssertionError("all_reduce returned although a peer was gone")
    report("peer_dies", run)
    os._exit(0)  # the group cannot be torn down cleanly without its peer


if __name__ == "__main__":
    {"collectives": collectives, "init_methods": init_methods, "peer_dies": peer_dies}[sys.argv[1]]()
