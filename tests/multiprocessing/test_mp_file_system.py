"""The file_system sharing strategy: storages shared by name in /dev/shm, and nothing of ours left
there after the processes exit, a receiver or the sender killed included (Note [Storages shared by
name], csrc/aten/storage_shared.c)."""
import gc
import multiprocessing
import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from conftest import requires_torch  # noqa: E402

import mp_fs_workers as W  # noqa: E402
import pyctorch  # noqa: E402
import pyctorch.multiprocessing as mp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture
def file_system():
    mp.set_sharing_strategy("file_system")
    try:
        yield
    finally:
        mp.set_sharing_strategy("file_descriptor")


def _ours(pid=None):
    prefix = "pyctorch_fs_" + (f"{pid}_" if pid is not None else "")
    return sorted(e for e in os.listdir("/dev/shm") if e.startswith(prefix))


def _wait_no_names(pid, timeout=10):
    deadline = time.monotonic() + timeout
    while _ours(pid):
        assert time.monotonic() < deadline, f"left in /dev/shm: {_ours(pid)}"
        time.sleep(0.05)


def test_strategy_api():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError, match="invalid sharing strategy 'bogus', expected one of"):
        mp.set_sharing_strategy("bogus")


@requires_torch
def test_strategies_match_torch():
    import torch.multiprocessing as tmp
    assert mp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == tmp.get_sharing_strategy()
    msgs = []
    for m in (mp, tmp):
        with pytest.raises(AssertionError) as info:
            m.set_sharing_strategy("nope")
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_share_by_name_in_process(file_system):
    t = pyctorch.arange(8.0)
    t.share_memory_()
    s = t.untyped_storage()
    name = s._shared_name()
    assert t.is_shared() and name.startswith(f"/pyctorch_fs_{os.getpid()}_")
    assert os.path.exists("/dev/shm" + name)
    manager, handle, nbytes = s._share_filename_cpu_()
    assert (handle, nbytes) == (name.encode(), 32)
    s2 = pyctorch.UntypedStorage._new_shared_filename_cpu(manager, handle, nbytes)
    u = pyctorch.empty(0).set_(s2, 0, (8,), (1,))
    u[0] = 42.0
    assert t[0].item() == 42.0  # the same pages
    fd, n = s2._share_fd_cpu_()  # the descriptor strategy still works on a named storage
    assert n == 32 and fd >= 0
    del t, s
    gc.collect()
    assert os.path.exists("/dev/shm" + name)  # u still uses it
    del u, s2
    gc.collect()
    assert not os.path.exists("/dev/shm" + name)  # the last use removed the name at once
    e = pyctorch.empty(0)
    e.share_memory_()
    assert e.untyped_storage()._shared_name() is not None


def test_refuses_foreign_names():
    for name in (b"/etc_passwd", b"/pyctorch_fs_../x", b"/other_1"):
        with pytest.raises(RuntimeError):
            pyctorch.UntypedStorage._new_shared_filename_cpu(b"", name, 4)
    with pytest.raises(RuntimeError, match="unable to open shared memory object"):
        pyctorch.UntypedStorage._new_shared_filename_cpu(b"", b"/pyctorch_fs_1_0_0", 4)


def test_already_fd_shared_storage_travels_by_descriptor(file_system):
    mp.set_sharing_strategy("file_descriptor")
    t = pyctorch.ones(3).share_memory_()
    mp.set_sharing_strategy("file_system")
    from multiprocessing.reduction import ForkingPickler
    import pickle
    back = pickle.loads(ForkingPickler.dumps(t))
    back[0] = 5.0
    assert t[0].item() == 5.0 and t.untyped_storage()._shared_name() is None


def test_through_queues_both_ways(file_system):
    ctx = multiprocessing.get_context("spawn")
    q, r = ctx.Queue(), ctx.Queue()
    t = pyctorch.arange(4.0)
    p = ctx.Process(target=W.receive_write_report, args=(q, r))
    p.start()
    try:
        q.put(t)
        name, total = r.get(timeout=30)
        assert name == t.untyped_storage()._shared_name() and total == 4.0
        assert t.tolist() == [0.0, -1.0, 2.0, 3.0]  # the child's write is seen here
        q.put(pyctorch.zeros(2))
        assert r.get(timeout=30) is True
    finally:
        p.join(30)
        if p.is_alive():
            p.kill()
    assert p.exitcode == 0
    # a tensor created by a child, received here; the child exits while we hold it
    q2, r2 = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=W.send_back, args=(q2, r2))
    p.start()
    got = r2.get(timeout=30)
    q2.put("done")
    p.join(30)
    assert got.tolist() == [3.0] * 5  # mapped: valid after its creator exited
    assert got.untyped_storage()._shared_name().startswith(f"/pyctorch_fs_{p.pid}_")
    _wait_no_names(p.pid)  # the creator's watchdog removed the name at its exit
    name = t.untyped_storage()._shared_name()
    del t
    gc.collect()
    assert not os.path.exists("/dev/shm" + name)


@pytest.mark.parametrize("kill_sender", [False, True], ids=["receiver_killed", "sender_killed_too"])
def test_nothing_left_when_processes_are_killed(tmp_path, kill_sender):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, os.path.join(HERE, "mp_fs_workers.py"), str(out), "1" if kill_sender else "0"],
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=60, capture_output=True, text=True)
    assert out.exists(), proc.stderr
    pid, name, child_code, *still_there = out.read_text().split()
    assert int(child_code) == -9 and name.startswith(f"/pyctorch_fs_{pid}_")
    assert proc.returncode == (-9 if kill_sender else 0), proc.stderr
    assert still_there == ([] if kill_sender else ["True"])  # so the watchdog is what removes it
    _wait_no_names(int(pid))


def test_dataloader_workers_under_file_system(file_system):
    from pyctorch.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(pyctorch.arange(12.0).reshape(6, 2))
    got = [b[0] for b in DataLoader(ds, batch_size=3, num_workers=1)]
    assert [g.tolist() for g in got] == [[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]]
