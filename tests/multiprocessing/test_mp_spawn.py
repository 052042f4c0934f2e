"""pyctorch.multiprocessing.spawn / start_processes / ProcessContext: fault tests (a failing child,
a killed child, no orphans, join=False) and a spawned 2-rank Gloo all_reduce; torch where cheap."""
import os
import signal
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from conftest import requires_torch  # noqa: E402

import mp_spawn_workers as W  # noqa: E402
import pyctorch.multiprocessing as mp  # noqa: E402


def _pids(outdir, n):
    pids = []
    for i in range(n):
        with open(os.path.join(outdir, f"rank{i}")) as f:
            pids.append(int(f.read().split()[0]))
    return pids


def _wait_files(outdir, n, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(os.path.exists(os.path.join(outdir, f"rank{i}")) for i in range(n)):
            return
        time.sleep(0.05)
    pytest.fail("children did not start in time")


def _gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie of ours would still answer; ours are all joined, so alive means running
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] == "Z"


def test_exports_match_torch_names():
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException",
                 "SpawnContext", "ENV_VAR_PARALLEL_START"):
        assert hasattr(mp, name), name
    sp = sys.modules["pyctorch.multiprocessing.spawn"]
    assert issubclass(mp.ProcessRaisedException, sp.ProcessException)
    assert issubclass(mp.ProcessExitedException, sp.ProcessException)
    e = mp.ProcessExitedException("m", 1, 2, -9, "SIGKILL")
    assert (e.error_index, e.error_pid, e.exit_code, e.signal_name, str(e)) == (1, 2, -9, "SIGKILL", "m")
    import pickle
    e2 = pickle.loads(pickle.dumps(e))
    assert (type(e2), e2.exit_code, e2.signal_name) == (mp.ProcessExitedException, -9, "SIGKILL")


def test_failing_child_reraises_with_traceback_and_ends_the_others(tmp_path):
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(W.fail_on_rank1, args=(str(tmp_path), 3), nprocs=3)
    e = info.value
    assert e.error_index == 1
    msg = str(e)
    assert msg.startswith("\n\n-- Process 1 terminated with the following error:\nTraceback (most recent call last):")
    assert "ValueError: rank 1 is broken" in msg and "fail_on_rank1" in msg
    pids = _pids(tmp_path, 3)
    assert e.error_pid == pids[1]
    assert all(_gone(p) for p in pids)  # the sleeping ranks were ended, nothing orphaned
    import tempfile
    tmp = tempfile.gettempdir()
    assert not [f for f in os.listdir(tmp) if f.startswith("pyctorch-errorfile-")
                and os.stat(os.path.join(tmp, f)).st_mtime > time.time() - 30]  # error files are removed


def test_killed_child_names_the_signal(tmp_path):
    t0 = time.monotonic()
    with pytest.raises(mp.ProcessExitedException, match="^process 0 terminated with signal SIGKILL$") as info:
        mp.spawn(W.kill_self_on_rank0, args=(str(tmp_path),), nprocs=2)
    e = info.value
    assert (e.error_index, e.exit_code, e.signal_name) == (0, -signal.SIGKILL, "SIGKILL")
    pids = _pids(tmp_path, 2)
    assert e.error_pid == pids[0] and all(_gone(p) for p in pids)
    assert time.monotonic() - t0 < 30  # rank 1 was terminated, not waited for


def test_exit_code(tmp_path):
    with pytest.raises(mp.ProcessExitedException, match="^process 0 terminated with exit code 3$") as info:
        mp.start_processes(W.exit_code_3, nprocs=1, start_method="fork")
    assert (info.value.exit_code, info.value.signal_name) == (3, None)


def test_join_false_returns_the_context(tmp_path):
    ctx = mp.spawn(W.sleep_then_write, args=(str(tmp_path), 0.5), nprocs=2, join=False)
    assert isinstance(ctx, mp.ProcessContext)
    assert len(ctx.processes) == 2 and ctx.pids() == [p.pid for p in ctx.processes]
    assert ctx.join(timeout=0.01) is False
    deadline = time.monotonic() + 30
    while not ctx.join(timeout=1):
        assert time.monotonic() < deadline
    assert ctx.join() is True
    assert sorted(_pids(tmp_path, 2)) == sorted(ctx.pids())
    assert all(p.exitcode == 0 for p in ctx.processes)


def test_killed_parent_orphans_nothing(tmp_path):
    # a parent spawns a sleeper and is SIGKILLed: PR_SET_PDEATHSIG ends its children
    import subprocess
    code = ("import sys; sys.path[:0] = %r\n"
            "import pyctorch.multiprocessing as mp, mp_spawn_workers as W\n"
            "if __name__ == '__main__':\n"
            "    mp.spawn(W.fail_on_rank1, args=(%r,), nprocs=1)\n") % ([HERE, os.path.dirname(os.path.dirname(HERE))], str(tmp_path))
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        _wait_files(tmp_path, 1)
    finally:
        parent.kill()
        parent.wait()
    child = _pids(tmp_path, 1)[0]
    deadline = time.monotonic() + 10
    while not _gone(child):
        assert time.monotonic() < deadline, "the child outlived its killed parent"
        time.sleep(0.05)


def test_spawn_warns_on_other_start_method(tmp_path):
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(W.sleep_then_write, args=(str(tmp_path), 0), nprocs=1, start_method="fork")


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("init", ["tcp", "file"])
def test_spawned_gloo_all_reduce(tmp_path, init):
    import pyctorch.distributed as dist
    if not dist.is_gloo_available():
        pytest.skip("pyctorch was built without Gloo")
    init_method = (f"tcp://127.0.0.1:{_free_port()}" if init == "tcp"
                   else "file://" + str(tmp_path / "store"))
    mp.spawn(W.gloo_all_reduce, args=(2, init_method, str(tmp_path)), nprocs=2)
    for rank in range(2):
        with open(tmp_path / f"rank{rank}") as f:
            assert eval(f.read()) == ([0.0, 3.0, 6.0, 9.0], [1.0], rank, 2)


@requires_torch
def test_exceptions_match_torch():
    import torch.multiprocessing as tmp
    for name in ("ProcessRaisedException", "ProcessExitedException"):
        ours, theirs = getattr(mp, name), getattr(tmp, name)
        assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]
    a = mp.ProcessExitedException("x", 0, 1, 2)
    b = tmp.ProcessExitedException("x", 0, 1, 2)
    assert (a.msg, a.error_index, a.error_pid, a.exit_code, a.signal_name) == \
        (b.msg, b.error_index, b.error_pid, b.exit_code, b.signal_name)


@requires_torch
def test_exit_code_message_matches_torch():
    import torch.multiprocessing as tmp
    msgs = []
    for m in (mp, tmp):
        with pytest.raises(m.ProcessExitedException) as info:
            m.start_processes(W.exit_code_3, nprocs=1, start_method="fork")
        e = info.value
        msgs.append((str(e), e.error_index, e.exit_code, e.signal_name))
    assert msgs[0] == msgs[1]


def test_spawned_ddp_step_equals_one_process_on_the_whole_batch(tmp_path):
    import numpy as np
    import pyctorch
    import pyctorch.distributed as dist
    if not dist.is_gloo_available():
        pytest.skip("pyctorch was built without Gloo")
    mp.spawn(W.ddp_step, args=(2, f"tcp://127.0.0.1:{_free_port()}", str(tmp_path)), nprocs=2)
    ranks = [np.load(tmp_path / f"ddp{r}.npy") for r in range(2)]
    np.testing.assert_array_equal(ranks[0], ranks[1])  # every rank holds the same parameters after the step
    pyctorch.manual_seed(7)  # rank 0's initial weights, which DDP broadcast
    model = pyctorch.nn.Sequential(pyctorch.nn.Linear(4, 8), pyctorch.nn.Tanh(), pyctorch.nn.Linear(8, 2))
    opt = pyctorch.optim.SGD(model.parameters(), lr=0.1)
    x, y = W.ddp_batch()
    pyctorch.nn.functional.mse_loss(model(pyctorch.tensor(x)), pyctorch.tensor(y)).backward()
    opt.step()
    whole = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
    np.testing.assert_allclose(ranks[0], whole, rtol=1e-6, atol=1e-7)  # to float32 rounding of the averaging
