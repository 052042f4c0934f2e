"""DataLoader with worker processes: torch's batches and order, worker seeding, worker_info,
worker_init_fn, IterableDataset sharding, in_order, persistent workers, fork and spawn; and
faults: errors with the worker's traceback, killed workers, timeouts, early exits, with no
orphaned process or leaked shared memory afterwards."""
import gc
import math
import multiprocessing
import time

import pytest

from conftest import requires_torch, torch
from data_helpers import (flat, KillSelfAt, RaiseAt, RaiseTwoArg, RandomAugment, Samples, Sleepy, Squares, child_pids,
                          our_shm_entries, resource_tracker_pid, shared_mappings)

import pyctorch
from pyctorch.utils.data import DataLoader, IterableDataset, TensorDataset, get_worker_info

# the machine may have fewer CPUs than some tests start workers
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")



class Sharded(IterableDataset):
    """range(start, end), split between workers by get_worker_info() of module m."""

    def __init__(self, start, end, m=pyctorch):
        self.start, self.end, self.m = start, end, m

    def __iter__(self):
        info = self.m.utils.data.get_worker_info()
        lo, hi = self.start, self.end
        if info is not None:
            per = int(math.ceil((hi - lo) / info.num_workers))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))


@pytest.fixture(autouse=True)
def no_orphans():
    """Every test leaves no worker process, descriptor or mapping of shared memory behind."""
    gc.collect()
    before_children = set(child_pids())
    before_shm = shared_mappings()
    yield
    gc.collect()
    deadline = time.monotonic() + 10
    allowed = before_children | {resource_tracker_pid()}
    while set(child_pids()) - allowed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(child_pids()) <= allowed, "worker processes left behind"
    assert not multiprocessing.active_children()
    assert shared_mappings() == before_shm, "shared memory left mapped"
    assert our_shm_entries() == []


def test_batches_in_shared_memory_by_hand():
    dl = DataLoader(Samples(pyctorch, 10), batch_size=4, num_workers=2)
    batches = list(dl)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    x, i, d = batches[0]
    assert x.shape == (4, 2, 3) and x.is_shared() and x[3].tolist() == [[3.0] * 3] * 2
    assert d["s"] == ["0", "1", "2", "3"] and d["f"].dtype == pyctorch.float64
    assert len(dl) == 3
    del batches, x, i, d


def test_worker_info_and_init_fn():
    seen = multiprocessing.get_context("fork").Queue()

    class Info(Squares):
        def __getitem__(self, i):
            info = get_worker_info()
            return (i, info.id, info.num_workers, info.seed, info.dataset is not self and info.dataset.n == self.n)

    def init(worker_id):
        seen.put((worker_id, get_worker_info().id))
    pyctorch.manual_seed(5)
    out = list(DataLoader(Info(6), batch_size=None, num_workers=2, worker_init_fn=init))
    assert [o[0] for o in out] == list(range(6))
    assert [o[1] for o in out] == [0, 1, 0, 1, 0, 1]  # tasks go round-robin
    assert all(o[2] == 2 for o in out)
    seeds = {o[1]: o[3] for o in out}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker id
    assert sorted(seen.get(timeout=10) for _ in range(2)) == [(0, 0), (1, 1)]
    assert get_worker_info() is None


def test_random_streams_differ_between_workers_and_repeat():
    def run():
        pyctorch.manual_seed(42)
        return [tuple(r) for r in DataLoader(RandomAugment(pyctorch, 8), batch_size=None, num_workers=2)]
    a, b = run(), run()
    assert a == b  # reproducible
    w0 = [r[1:] for r in a[0::2]]
    w1 = [r[1:] for r in a[1::2]]
    assert all(x != y for x, y in zip(w0, w1))  # every generator differs per worker


def test_iterable_dataset_sharding():
    out = list(DataLoader(Sharded(3, 12), batch_size=2, num_workers=2))
    assert [b.tolist() for b in out] == [[3, 4], [8, 9], [5, 6], [10, 11], [7]]
    out = list(DataLoader(Sharded(0, 5), batch_size=None, num_workers=3))
    assert sorted(out) == list(range(5))


def test_in_order_false_yields_all():
    class Uneven(Squares):
        def __getitem__(self, i):
            if i < 2:
                time.sleep(0.3)  # the first batch is slow
            return i
    out = [b.tolist() for b in DataLoader(Uneven(8), batch_size=2, num_workers=2, in_order=False)]
    assert sorted(sum(out, [])) == list(range(8)) and out[0] != [0, 1]
    out = [b.tolist() for b in DataLoader(Uneven(8), batch_size=2, num_workers=2, in_order=True)]
    assert out == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_persistent_workers_keep_their_processes():
    dl = DataLoader(Squares(7), batch_size=3, num_workers=2, persistent_workers=True, prefetch_factor=1)
    first = [b.tolist() for b in dl]
    pids = [w.pid for w in dl._iterator._workers]
    it = iter(dl)
    next(it)  # break early: the next epoch must not see leftovers
    second = [b.tolist() for b in dl]
    assert first == second == [[0, 1, 4], [9, 16, 25], [36]]
    assert [w.pid for w in dl._iterator._workers] == pids and all(w.is_alive() for w in dl._iterator._workers)
    del dl, it


def test_persistent_workers_with_iterable_dataset():
    dl = DataLoader(Sharded(0, 7), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [[b.tolist() for b in dl] for _ in range(3)]
    assert epochs[0] == epochs[1] == epochs[2] == [[0, 1], [4, 5], [2, 3], [6]]
    del dl


def test_spawn_context_as_string_and_object():
    out1 = [b.tolist() for b in DataLoader(Squares(5), batch_size=2, num_workers=1, multiprocessing_context="spawn")]
    ctx = multiprocessing.get_context("fork")
    out2 = [b.tolist() for b in DataLoader(Squares(5), batch_size=2, num_workers=1, multiprocessing_context=ctx)]
    assert out1 == out2 == [[0, 1], [4, 9], [16]]


def test_spawned_worker_gets_dataset_tensors_through_shared_memory():
    threads = pyctorch.get_num_threads()
    pyctorch.set_num_threads(2)
    a = pyctorch.rand(300, 300)
    (a @ a).sum()  # the main process has used its thread pool before the workers start
    pyctorch.set_num_threads(threads)
    x = pyctorch.rand(12, 50, 60)
    ds = TensorDataset(x, pyctorch.arange(12))
    ref = [(b[0].sum().item(), b[1].tolist()) for b in DataLoader(ds, batch_size=5)]
    for ctx in ("fork", "spawn"):
        got = [(b[0].sum().item(), b[1].tolist()) for b in DataLoader(ds, batch_size=5, num_workers=1,
                                                                       multiprocessing_context=ctx)]
        assert got == ref
    assert x.is_shared()  # sent to the spawned worker once, through shared memory (as torch)


def test_worker_exception_reraised_with_traceback():
    dl = DataLoader(RaiseAt(12, 5), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as e:
        list(dl)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent call "
                          "last):")
    assert "index 5 is broken" in msg and "__getitem__" in msg


def test_key_error_and_odd_exceptions():
    class KeyErr(Squares):
        def __getitem__(self, i):
            raise KeyError("missing")

    class LocalError(Exception):  # cannot be pickled by reference: arrives as RuntimeError, name kept
        pass

    class LocalErr(Squares):
        def __getitem__(self, i):
            raise LocalError("local")
    with pytest.raises(RuntimeError, match="Caught LocalError in DataLoader worker process 0"):
        list(DataLoader(LocalErr(2), num_workers=1))
    with pytest.raises(KeyError) as e:
        list(DataLoader(KeyErr(2), num_workers=1))
    assert str(e.value).startswith("Caught KeyError in DataLoader worker process 0.\n")  # not repr-quoted
    with pytest.raises(RuntimeError, match="Caught TwoArgError in DataLoader worker process 0"):
        list(DataLoader(RaiseTwoArg(), num_workers=1))


def test_init_fn_error_and_unpicklable_batch():
    def bad_init(worker_id):
        raise TypeError("init failed")
    with pytest.raises(TypeError, match="Caught TypeError in DataLoader worker process 0"):
        list(DataLoader(Squares(4), num_workers=1, worker_init_fn=bad_init))

    class Lambdas(Squares):
        def __getitem__(self, i):
            return lambda: i
    with pytest.raises(Exception, match="in DataLoader worker process 0"):
        list(DataLoader(Lambdas(2), batch_size=None, num_workers=1, timeout=20))


def test_killed_worker_raises_quickly():
    dl = DataLoader(KillSelfAt(40, 9), batch_size=2, num_workers=2)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed by signal: Killed\."):
        for _ in dl:
            pass
    assert time.monotonic() - t0 < 5


def test_timeout():
    dl = DataLoader(Sleepy(4, 0.6), batch_size=None, num_workers=1, timeout=0.2, prefetch_factor=1)
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.2 seconds$"):
        next(iter(dl))


def test_break_and_delete_shut_workers_down():
    dl = DataLoader(Squares(100), batch_size=2, num_workers=2)
    for i, b in enumerate(dl):
        if i == 3:
            break
    del b
    it = iter(DataLoader(Squares(100), batch_size=2, num_workers=2, persistent_workers=True))
    next(it)
    del it, dl


def test_stress_epochs_with_one_failure():
    """10 epochs x 4 workers; one index raises in epoch 6 only: that epoch raises, the others complete."""
    fork = multiprocessing.get_context("fork")
    armed, epoch = fork.Value("i", 6), fork.Value("i", 0)
    dl = DataLoader(RaiseAt(48, 29, armed, epoch), batch_size=4, num_workers=4, shuffle=True)
    pyctorch.manual_seed(0)
    results = []
    for e in range(10):
        epoch.value = e
        try:
            got = sorted(sum((b.tolist() for b in dl), []))
            results.append(got == list(range(48)))
        except ValueError as err:
            assert "index 29 is broken" in str(err) and "Caught ValueError in DataLoader worker process" in str(err)
            results.append("raised")
    assert results == [True] * 6 + ["raised"] + [True] * 3


@requires_torch
@pytest.mark.parametrize("kw", [
    dict(batch_size=4, shuffle=True, num_workers=2),
    dict(batch_size=3, shuffle=True, num_workers=3, drop_last=True, prefetch_factor=1),
    dict(batch_size=None, shuffle=True, num_workers=2),
])
def test_multiprocess_batches_match_torch(kw):
    import torch.utils.data as td
    out = []
    for m, loader in ((pyctorch, DataLoader), (torch, td.DataLoader)):
        m.manual_seed(99)
        dl = loader(Samples(m, 17), **kw)
        out.append([flat(b) for b in dl])
    assert out[0] == out[1]


@requires_torch
def test_worker_random_streams_match_torch():
    import torch.utils.data as td
    out = []
    for m, loader in ((pyctorch, DataLoader), (torch, td.DataLoader)):
        m.manual_seed(2024)
        dl = loader(RandomAugment(m, 6), batch_size=2, num_workers=2, shuffle=True)
        out.append([flat(b) for b in dl])
    assert out[0] == out[1]  # same order, same pyctorch/python/numpy draws in each worker


@requires_torch
def test_iterable_sharding_matches_torch():
    import torch.utils.data as td

    class Both(Sharded, td.IterableDataset):
        pass
    p = [flat(b) for b in DataLoader(Both(0, 13, pyctorch), batch_size=3, num_workers=3)]
    t = [flat(b) for b in td.DataLoader(Both(0, 13, torch), batch_size=3, num_workers=3)]
    assert p == t
