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


def test_failure_summary_shows_the_recorded_traceback(tmp_path):
    script = """
        import os
        from torch.distributed.elastic.multiprocessing.errors import record

        @record
        def main():
            if os.environ["RANK"] == "1":
                raise KeyError("recorded")

        main()
    """
    r = launch(tmp_path, script, "--standalone", "--nproc-per-node", "2", module="torch.distributed.run", alias=True)
    assert r.returncode == 1
    root = r.stderr.split("Root Cause (first observed failure):")[1]
    assert "rank      : 1 (local_rank: 1)" in root and "error.json" in root
    assert "KeyError: 'recorded'" in root and "in main" in root  # the worker's traceback, from its error file


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
    # an elastic node range needs the c10d rendezvous (tests/distributed/test_elastic.py)
    r = launch(tmp_path, ENV_SCRIPT, "--nnodes", "1:2", "--nproc-per-node", "1")
    assert r.returncode != 0 and "--rdzv-backend c10d" in r.stderr


def _console_script_target():
    """pyctorch-run's target: from the installed distribution's metadata when pyctorch is
    installed, else from pyproject.toml (a source checkout)."""
    from importlib import metadata
    try:
        eps = metadata.distribution("pyctorch").entry_points
        return next(ep.value for ep in eps if ep.group == "console_scripts" and ep.name == "pyctorch-run")
    except (metadata.PackageNotFoundError, StopIteration):
        import tomllib
        with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
            return tomllib.load(f)["project"]["scripts"]["pyctorch-run"]


def test_console_script_resolves_to_the_launcher():
    import importlib
    target = _console_script_target()
    module, _, attr = target.partition(":")
    main = getattr(importlib.import_module(module), attr)
    import pyctorch.distributed.run as run
    assert main is run.main
    with pytest.raises(SystemExit) as e:  # argparse's --help exits 0 after printing the usage
        main(["--help"])
    assert e.value.code == 0


def test_python_dash_m_help():
    r = subprocess.run([sys.executable, "-m", "pyctorch.distributed.run", "--help"], capture_output=True, text=True,
                       timeout=30, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0 and "--nproc-per-node" in r.stdout and "--rdzv-endpoint" in r.stdout


def _ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


@pytest.fixture
def two_hosts():
    """Two network namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2): two "nodes"."""
    import shutil
    if shutil.which("ip") is None:
        pytest.skip("the ip tool is missing: no network namespaces")
    name = f"pct{os.getpid() % 100000}"
    hosts = [(f"{name}a", f"{name}va", "10.77.0.1"), (f"{name}b", f"{name}vb", "10.77.0.2")]
    try:
        steps = [("netns", "add", hosts[0][0]), ("netns", "add", hosts[1][0]),
                 ("link", "add", hosts[0][1], "type", "veth", "peer", "name", hosts[1][1])]
        for ns, dev, addr in hosts:
            steps += [("link", "set", dev, "netns", ns), ("-n", ns, "addr", "add", f"{addr}/24", "dev", dev),
                      ("-n", ns, "link", "set", dev, "up"), ("-n", ns, "link", "set", "lo", "up")]
        for step in steps:
            r = _ip(*step)
            if r.returncode != 0:
                pytest.skip(f"network namespaces cannot be made here: ip {' '.join(step)}: {r.stderr.strip()}")
        yield hosts
    finally:
        for ns, _, _ in hosts:
            _ip("netns", "del", ns)


@requires_gloo
def test_two_nodes_over_network_namespaces(tmp_path, two_hosts):
    """--nnodes 2 --nproc-per-node 2: one launcher per namespace, rendezvous and Gloo over the veth."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import os, sys
        import pyctorch as torch, pyctorch.distributed as dist
        dist.init_process_group("gloo")
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        ranks = [torch.zeros(1, dtype=torch.int64) for _ in range(dist.get_world_size())]
        dist.all_gather(ranks, torch.tensor([dist.get_rank()]))
        sys.stdout.write(f"rank {dist.get_rank()} node {os.environ['GROUP_RANK']} sum {t.item()} "
                         f"gathered {[int(r.item()) for r in ranks]}" + chr(10))
        dist.destroy_process_group()
    """))
    env = dict(os.environ, PYTHONPATH=ROOT)
    procs = [subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-m", "pyctorch.distributed.run", "--nnodes", "2",
                               "--node-rank", str(i), "--nproc-per-node", "2", "--master-addr", "10.77.0.1",
                               "--master-port", "29631", str(script)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i, (ns, _, _) in enumerate(two_hosts)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=90))
    finally:
        for p in procs:
            p.kill()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    lines = sorted(line for out, _ in outs for line in out.splitlines() if line.startswith("rank"))
    assert lines == [f"rank {r} node {r // 2} sum 10.0 gathered [0, 1, 2, 3]" for r in range(4)]
