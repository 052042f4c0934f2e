"""Faults of a launched job. Covered elsewhere: a rank that never joins (init_process_group times out
with torch's message: test_dist_collectives.py::test_rank_that_never_joins_times_out), a peer that
leaves before a collective (::test_peer_dies_raises_within_timeout), mismatched collectives in a
group made under DebugLevel.DETAIL (::test_collective[detail_mismatch]), a store port in use
(test_dist_store.py::test_tcp_port_in_use), SIGTERM to the launcher
(test_dist_run.py::test_signal_reaches_every_worker). Here, through the launcher: a rank killed in
the middle of an all_reduce, TORCH_DISTRIBUTED_DEBUG=DETAIL from the environment, the master port
taken by another program, and Ctrl-C (SIGINT to the launcher's whole process group)."""
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dist_helpers import ROOT, free_port, requires_gloo  # noqa: E402
from test_dist_run import launch  # noqa: E402

pytestmark = requires_gloo


def test_rank_killed_mid_all_reduce(tmp_path):
    # rank 1 kills itself (SIGKILL: no cleanup, sockets reset by the kernel) while rank 0 waits in a
    # 64 MB all_reduce: rank 0 raises within its 5 s timeout and the launcher names rank 1 as the cause
    script = """
        import datetime, os, signal, sys, time
        import pyctorch as torch, pyctorch.distributed as dist
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=5))
        dist.barrier()
        if dist.get_rank() == 1:
            time.sleep(0.3)  # rank 0 is inside the all_reduce by now
            os.kill(os.getpid(), signal.SIGKILL)
        t0 = time.monotonic()
        try:
            for _ in range(1000):
                dist.all_reduce(torch.ones(16 << 20))
        except RuntimeError as e:
            sys.stdout.write(f"rank 0 raised {type(e).__name__} after {time.monotonic() - t0:.1f}s" + chr(10))
            sys.stdout.flush()
            os._exit(2)
    """
    t0 = time.monotonic()
    r = launch(tmp_path, script, "--standalone", "--nproc-per-node", "2", timeout=60)
    assert time.monotonic() - t0 < 30
    assert r.returncode == 1
    raised = [line for line in r.stdout.splitlines() if line.startswith("rank 0 raised")]
    if raised:  # rank 0 may also be stopped by the launcher first: either way it did not hang
        assert "DistBackendError" in raised[0] and float(raised[0].split()[-1][:-1]) < 8
    root = r.stderr.split("Root Cause (first observed failure):")[1]
    assert "rank      : 1 (local_rank: 1)" in root and "Signal 9 (SIGKILL) received by PID" in root


def test_mismatch_under_debug_detail_names_the_ranks(tmp_path):
    script = """
        import sys
        import pyctorch as torch, pyctorch.distributed as dist
        dist.init_process_group("gloo")
        rank = dist.get_rank()
        try:
            dist.all_reduce(torch.ones(3 + rank))
        except RuntimeError as e:
            sys.stdout.write(f"rank {rank}: {e}" + chr(10))
            sys.stdout.flush()
        dist.destroy_process_group()
    """
    r = launch(tmp_path, script, "--standalone", "--nproc-per-node", "2", env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"})
    assert r.returncode == 0, r.stderr[-3000:]
    lines = sorted(line for line in r.stdout.splitlines() if line.startswith("rank"))
    assert len(lines) == 2
    for me, other, line in ((0, 1, lines[0]), (1, 0, lines[1])):
        assert f"Detected mismatch between collectives on ranks. Rank {me} is running collective" in line
        assert f"but Rank {other} is running collective" in line and "Tensor Tensor shapes" in line


def test_master_port_in_use_is_a_clear_error(tmp_path):
    # another program listens on MASTER_PORT: rank 0 cannot serve the store there
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        script = """
            import datetime
            import pyctorch.distributed as dist
            dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
        """
        r = launch(tmp_path, script, "--nnodes", "1", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
                   "--master-port", str(port), timeout=60)
    assert r.returncode == 1
    assert (f"The server socket has failed to listen on any local network address. port: {port}, useIpv6: false, "
            "code: -98, name: EADDRINUSE, message: address already in use") in r.stderr
    assert "DistNetworkError" in r.stderr and "FAILED" in r.stderr


def test_ctrl_c_leaves_no_worker(tmp_path):
    # a terminal's Ctrl-C sends SIGINT to the whole foreground process group: launcher and workers
    script = textwrap.dedent("""
        import os, time
        import pyctorch as torch, pyctorch.distributed as dist
        dist.init_process_group("gloo")
        open(os.path.join(os.getcwd(), f"pid{dist.get_rank()}"), "w").write(str(os.getpid()))
        while True:
            dist.all_reduce(torch.ones(1000))
            time.sleep(0.01)
    """)
    (tmp_path / "script.py").write_text(script)
    p = subprocess.Popen([sys.executable, "-m", "pyctorch.distributed.run", "--standalone", "--nproc-per-node", "2",
                          str(tmp_path / "script.py")], cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT),
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"pid{r}").exists() for r in range(2)) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        pids = [int((tmp_path / f"pid{r}").read_text()) for r in range(2)]
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=40)
    finally:
        p.kill()
    assert p.returncode != 0 and "SIGINT death signal, shutting down workers" in err
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
