"""The launcher (python -m pyctorch.distributed.run, torchrun's options): the workers' environment
as torchrun sets it, a Gloo job through it under the torch alias with rank-prefixed output, the
failure summary, restarts, and signals that reach every worker."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dist_helpers import ROOT, requires_gloo  # noqa: E402

try:
    import torch.distributed.run  # noqa: F401
    HAVE_TORCHRUN = True
except ImportError:
    HAVE_TORCHRUN = False

ENV_KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK", "ROLE_WORLD_SIZE",
            "GROUP_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
            "OMP_NUM_THREADS"]


def launch(tmp_path, script, *launcher_args, module="pyctorch.distributed.run", alias=False, timeout=60, env=None):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    runner = [sys.executable, "-m", "pyctorch.as_torch", "-m", module] if alias else [sys.executable, "-m", module]
    e = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    e.pop("OMP_NUM_THREADS", None)
    return subprocess.run([*runner, *launcher_args, str(path)], capture_output=True, text=True, timeout=timeout,
                          env=e, cwd=str(tmp_path))


ENV_SCRIPT = f"""
    import json, os, sys
    sys.stdout.write(json.dumps({{k: os.environ.get(k) for k in {ENV_KEYS!r}}}) + chr(10))  # one write: workers share stdout
"""


def worker_envs(out):
    return sorted((json.loads(line) for line in out.splitlines() if line.startswith("{")), key=lambda d: d["RANK"])


def test_worker_environment(tmp_path):
    r = launch(tmp_path, ENV_SCRIPT, "--standalone", "--nproc-per-node", "2", "--max-restarts", "2")
    assert r.returncode == 0, r.stderr
    envs = worker_envs(r.stdout)
    assert [(e["RANK"], e["LOCAL_RANK"], e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"]) for e in envs] == \
        [("0", "0", "2", "2"), ("1", "1", "2", "2")]
    assert all(e["MASTER_ADDR"] == "localhost" and e["OMP_NUM_THREADS"] == "1" and e["ROLE_NAME"] == "default"
               and e["TORCHELASTIC_RESTART_COUNT"] == "0" and e["TORCHELASTIC_MAX_RESTARTS"] == "2" for e in envs)
    if HAVE_TORCHRUN:
        t = launch(tmp_path, ENV_SCRIPT, "--standalone", "--nproc-per-node", "2", "--max-restarts", "2",
                   module="torch.distributed.run")
        assert t.returncode == 0, t.stderr
        assert worker_envs(t.stdout) == envs


def test_static_multi_node_ranks(tmp_path):
    r = launch(tmp_path, ENV_SCRIPT, "--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2",
               "--master-addr", "127.0.0.1", "--master-port", "29999")
    assert r.returncode == 0, r.stderr
    envs = worker_envs(r.stdout)
    assert [(e["RANK"], e["LOCAL_RANK"], e["GROUP_RANK"], e["WORLD_SIZE"], e["GROUP_WORLD_SIZE"]) for e in envs] == \
        [("2", "0", "1", "4", "2"), ("3", "1", "1", "4", "2")]


@requires_gloo
def test_gloo_job_under_the_alias_with_rank_prefixes(tmp_path):
    script = """
        import torch, torch.distributed as dist
        dist.init_process_group("gloo")
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        import pyctorch
        print(f"rank {dist.get_rank()} sum {t.item()} pyctorch {torch is pyctorch}", flush=True)  # noqa
        dist.destroy_process_group()
    """
    r = launch(tmp_path, script, "--standalone", "--nproc-per-node", "2", "--tee", "3", module="torch.distributed.run",
               alias=True)
    assert r.returncode == 0, r.stderr
    lines = sorted(line for line in r.stdout.splitlines() if "sum" in line)
    assert lines == ["[default0]:rank 0 sum 3.0 pyctorch True", "[default1]:rank 1 sum 3.0 pyctorch True"]


FAIL_SCRIPT = """
    import os, sys
    if os.environ["RANK"] == "1" and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
        raise ValueError("boom")
    sys.stdout.write(f"finished {os.environ['RANK']} {os.environ['TORCHELASTIC_RESTART_COUNT']}" + chr(10))
"""


def test_failure_summary(tmp_path):
    r = launch(tmp_path, FAIL_SCRIPT, "--standalone", "--nproc-per-node", "2")
    assert r.returncode == 1
    assert "ValueError: boom" in r.stderr and "script.py FAILED" in r.stderr
    root = r.stderr.split("Root Cause (first observed failure):")[1]
    assert "rank      : 1 (local_rank: 1)" in root and "exitcode  : 1 (pid: " in root
    assert "error_file: <N/A>" in root


def test_restart_after_a_failure(tmp_path):
    r = launch(tmp_path, FAIL_SCRIPT, "--standalone", "--nproc-per-node", "2", "--max-restarts", "1")
    assert r.returncode == 0, r.stderr
    finished = [line for line in r.stdout.splitlines() if line.startswith("finished")]
    assert "finished 0 1" in finished and "finished 1 1" in finished  # both ran again, as restart 1
    assert "will restart worker group" in r.stderr


def test_signal_reaches_every_worker(tmp_path):
    script = """
        import os, time
        open(os.path.join(os.getcwd(), f"pid{os.environ['RANK']}"), "w").write(str(os.getpid()))
        time.sleep(60)
    """
    (tmp_path / "script.py").write_text(textwrap.dedent(script))
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.Popen([sys.executable, "-m", "pyctorch.distributed.run", "--standalone", "--nproc-per-node", "2",
                          str(tmp_path / "script.py")], cwd=str(tmp_path), env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"pid{r}").exists() for r in range(2)) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)
        pids = [int((tmp_path / f"pid{r}").read_text()) for r in range(2)]
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode != 0 and "death signal, shutting down workers" in err
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # reaped by the launcher: gone


def test_argument_errors(tmp_path):
    r = launch(tmp_path, ENV_SCRIPT, "--nnodes", "1:2", "--nproc-per-node", "1")
    assert r.returncode != 0 and "fixed node count" in r.stderr
