"""Gloo collectives across 2 local processes, checked against NumPy (every rank computes the
expected result from the shared seed), plus argument errors compared with torch in one process."""
import datetime
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyctorch  # noqa: E402
import pyctorch.distributed as dist  # noqa: E402
from dist_helpers import free_port, requires_gloo, run_ranks  # noqa: E402

try:
    import torch
    import torch.distributed as tdist
    HAVE_TORCH = tdist.is_available() and tdist.is_gloo_available()
except ImportError:
    HAVE_TORCH = False

pytestmark = requires_gloo

OPS = ("SUM", "PRODUCT", "MIN", "MAX")
DTYPES = ("float32", "float64", "int32", "int64", "int8", "uint8", "float16", "bfloat16", "bool")
CHECKS = ([f"all_reduce_{o}_{d}" for o in OPS for d in DTYPES]
          + [f"all_reduce_{o}_{d}" for o in ("BAND", "BOR", "BXOR") for d in ("int32", "int64", "uint8", "bool")]
          + ["all_reduce_AVG_float32", "all_reduce_noncontiguous", "all_reduce_async", "async_in_flight", "broadcast", "reduce",
             "all_gather", "all_gather_into_tensor", "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor",
             "all_to_all_single", "all_to_all", "send_recv", "barrier", "object_collectives", "new_group", "new_subgroups", "empty_and_0d", "state", "detail_mismatch", "monitored_barrier",
             "destroyed"])


@pytest.fixture(scope="module")
def collective_results():
    results, outputs = run_ranks("collectives", world_size=2, timeout=90)
    for code, out, err in outputs:
        assert code == 0, f"a rank exited with {code}:\n{err[-3000:]}"
    return results


@pytest.mark.parametrize("check", CHECKS)
def test_collective(collective_results, check):
    assert check in collective_results, f"{check} did not run"
    assert collective_results[check] == "", collective_results[check]


@pytest.mark.skipif(not HAVE_TORCH, reason="torch with Gloo is not installed (oracle comparisons skip)")
def test_the_same_checks_hold_on_torch():
    """The oracle: torch's own Gloo backend passes every check the pyctorch run is held to, so
    the NumPy expectations (bool sums, integer wrap-around, AVG, error texts) are torch's."""
    results, outputs = run_ranks("collectives", world_size=2, timeout=120, env={"PCT_DIST_FRAMEWORK": "torch"})
    failed = {k: v for k, v in results.items() if v}
    assert not failed, failed
    assert set(results) == set(CHECKS)


def test_init_methods(tmp_path):
    # Gloo listens on the loopback interface named by GLOO_SOCKET_IFNAME here (elsewhere on an address)
    results, outputs = run_ranks("init_methods", 2, timeout=60, env={"PCT_DIST_DIR": str(tmp_path),
                                                                     "GLOO_SOCKET_IFNAME": "lo"})
    for code, out, err in outputs:
        assert code == 0, err[-3000:]
    for name in ("init_tcp", "init_file", "init_store"):
        assert results.get(name) == "", results.get(name, f"{name} did not run")


def test_torch_code_runs_under_the_alias(tmp_path):
    """The worker's `import torch.distributed as dist` resolves to pyctorch under as_torch."""
    env = {"PCT_DIST_DIR": str(tmp_path), "PCT_DIST_FRAMEWORK": "torch", "PCT_DIST_EXPECT_ALIAS": "1"}
    results, outputs = run_ranks("init_methods", 2, timeout=60, env=env, alias=True)
    for code, out, err in outputs:
        assert code == 0, err[-3000:]
    for name in ("alias", "init_tcp", "init_file", "init_store"):
        assert results.get(name) == "", results.get(name, f"{name} did not run")


def test_peer_dies_raises_within_timeout():
    results, outputs = run_ranks("peer_dies", 2, timeout=40)
    assert results.get("peer_dies") == "", results.get("peer_dies", f"did not run: {outputs[0][2][-2000:]}")


# ---- one-process groups: argument checks, compared with torch's ----------------------------

def _error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the type and text are what is compared)
        return type(e).__name__, str(e)
    return None


def _single_rank_cases(d, T):
    return {
        "band_on_float": lambda: d.all_reduce(T.ones(2), op=d.ReduceOp.BAND),
        "int16": lambda: d.all_reduce(T.ones(2, dtype=T.int16)),
        "broadcast_bad_root": lambda: d.broadcast(T.ones(2), src=3),
        "unknown_group": lambda: d.all_reduce(T.ones(2), group=5),
        "gather_list_missing": lambda: d.gather(T.ones(2), None, dst=0),
        "allgather_size": lambda: d.all_gather([T.zeros(3)], T.ones(2)),
        "init_twice": lambda: d.init_process_group("gloo", store=d.HashStore(), rank=0, world_size=1),
        "send_to_self": lambda: d.send(T.ones(1), dst=0),
        "avg_of_ints": lambda: d.all_reduce(T.tensor([1, 2]), op=d.ReduceOp.AVG),
        "recv_noncontiguous": lambda: d.irecv(T.zeros(2, 2).t(), src=0),
    }


def _with_single_rank_group(d, T, store):
    d.init_process_group("gloo", store=store, rank=0, world_size=1, timeout=datetime.timedelta(seconds=10))
    try:
        t = T.tensor([1.0, 2.0])
        d.all_reduce(t, op=d.ReduceOp.AVG)
        values = t.tolist()
        return values, {k: _error_of(f) for k, f in _single_rank_cases(d, T).items()}, str(d.get_backend())
    finally:
        d.destroy_process_group()


def test_single_rank_errors_match_torch():
    values, errors, backend = _with_single_rank_group(dist, pyctorch, dist.HashStore())
    assert values == [1.0, 2.0] and backend == "gloo"
    for name, err in errors.items():
        assert err is not None, f"{name}: no error raised"
    assert errors["band_on_float"] == ("RuntimeError", "Cannot use ReduceOp.BAND with non-integral dtype")
    assert errors["int16"] == ("RuntimeError", "Invalid scalar type")
    assert errors["broadcast_bad_root"] == ("RuntimeError", "ProcessGroupGloo::broadcast: invalid root rank: 3")
    if HAVE_TORCH:
        t_values, t_errors, t_backend = _with_single_rank_group(tdist, torch, tdist.HashStore())
        assert t_values == values and t_backend == backend
        for name in errors:
            assert errors[name][0] == t_errors[name][0], (name, errors[name], t_errors[name])
            if name not in ("allgather_size",):
                assert errors[name][1] == t_errors[name][1], (name, errors[name], t_errors[name])


def test_not_initialized_errors():
    msg = "Default process group has not been initialized, please make sure to call init_process_group."
    assert not dist.is_initialized()
    for fn in (dist.get_rank, dist.get_world_size, lambda: dist.all_reduce(pyctorch.ones(1)), dist.barrier):
        with pytest.raises(ValueError) as e:
            fn()
        assert str(e.value) == msg
    if HAVE_TORCH:
        with pytest.raises(ValueError) as e:
            tdist.get_rank()
        assert str(e.value) == msg


def test_env_rendezvous_errors(monkeypatch):
    for var in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError) as e:
        dist.init_process_group("gloo", rank=0, world_size=1)
    want = "Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR expected, but not set"
    assert str(e.value) == want
    if HAVE_TORCH:
        with pytest.raises(ValueError) as te:
            tdist.init_process_group("gloo", rank=0, world_size=1)
        assert str(te.value) == want
    assert not dist.is_initialized()


def test_backend_names():
    assert dist.Backend("GLOO") == "gloo" and dist.is_available() and not dist.is_nccl_available()
    assert repr(dist.ReduceOp.SUM) == "<RedOpType.SUM: 0>" and int(dist.ReduceOp.BXOR) == 7
    with pytest.raises(RuntimeError, match="NCCL built in"):
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    if HAVE_TORCH:
        assert repr(tdist.ReduceOp.SUM) == repr(dist.ReduceOp.SUM)
        assert [int(getattr(tdist.ReduceOp, n)) for n in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")] \
            == [int(getattr(dist.ReduceOp, n)) for n in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")]


def _backend_names(d):
    names = []
    for b in (None, "GLOO", "cpu:gloo"):
        d.init_process_group(b, store=d.HashStore(), rank=0, world_size=1)
        names.append((d.get_backend(), type(d.get_backend()).__name__))
        d.destroy_process_group()
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        d.destroy_process_group()
    with pytest.raises(RuntimeError, match="NCCL built in"):
        d.init_process_group("cpu:gloo,cuda:nccl", store=d.HashStore(), rank=0, world_size=1)
    return names


def test_backend_strings_match_torch():
    names = _backend_names(dist)
    assert names == [("undefined", "str"), ("gloo", "str"), ("cpu:gloo", "str")]
    if HAVE_TORCH:
        assert _backend_names(tdist) == names


def test_tcp_init_single_rank():
    port = free_port()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=10))
    try:
        t = pyctorch.arange(4.0)
        w = dist.broadcast(t, src=0, async_op=True)
        assert w.wait() and w.is_completed()
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    finally:
        dist.destroy_process_group()


def test_rank_that_never_joins_times_out():
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(dist.DistStoreError) as e:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=2,
                                timeout=datetime.timedelta(seconds=1))
    assert time.monotonic() - t0 < 4
    assert str(e.value).endswith("seconds waiting for clients. 1/2 clients joined.")
    assert not dist.is_initialized()
    with pytest.raises(dist.DistNetworkError) as e:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=1, world_size=2,
                                timeout=datetime.timedelta(seconds=1))
    assert str(e.value) == f"The client socket has timed out after 1000ms while trying to connect to (127.0.0.1, {port})."
    assert not dist.is_initialized()


def test_unknown_gloo_interface_is_an_error(monkeypatch):
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "nosuch0")
    for d in (dist, tdist) if HAVE_TORCH else (dist,):
        with pytest.raises(RuntimeError, match="Unable to find address for: nosuch0"):
            d.init_process_group("gloo", store=d.HashStore(), rank=0, world_size=1)
        assert not d.is_initialized()
