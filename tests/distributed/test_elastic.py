"""The c10d (elastic) rendezvous of the launcher: several launchers on this machine (127.0.0.1)
play the nodes, join the store at --rdzv-endpoint and get node ranks, sizes and one master for
their workers; --nnodes MIN:MAX waits out the last call, a late node gets the job restarted with
it, a failing node restarts every node in a new round, and too few nodes time out."""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

try:
    import torch.distributed.run  # noqa: F401
    HAVE_TORCHRUN = True
except ImportError:
    HAVE_TORCHRUN = False

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dist_helpers import ROOT, free_port, requires_gloo  # noqa: E402

# prints the worker's place in the job, after an all_reduce over all workers of all nodes when
# PCT_TEST_COLLECTIVE is set (so the ranks really form one job)
WORKER = """
    import json, os, sys
    if os.environ.get("PCT_TEST_COLLECTIVE"):
        import pyctorch as torch, pyctorch.distributed as dist
        dist.init_process_group("gloo")
        t = torch.tensor([1.0])
        dist.all_reduce(t)
        total = t.item()
        dist.destroy_process_group()
    else:
        total = None
    keys = ["RANK", "WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RESTART_COUNT",
            "TORCHELASTIC_RUN_ID"]
    sys.stdout.write(json.dumps(dict({k: os.environ[k] for k in keys}, total=total)) + chr(10))
"""


def start_launcher(tmp_path, script, nnodes, port, *extra, env=None, module="pyctorch.distributed.run"):
    path = tmp_path / "script.py"
    if not path.exists():
        path.write_text(textwrap.dedent(script))
    cmd = [sys.executable, "-m", module, "--nnodes", nnodes, "--nproc-per-node", "1",
           "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "job7",
           "--monitor-interval", "0.05", *extra, str(path)]
    e = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    return subprocess.Popen(cmd, env=e, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(procs, timeout=30):
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=timeout))
    finally:
        for p in procs:
            p.kill()
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs)]


def records(results):
    rs = [json.loads(line) for _, out, _ in results for line in out.splitlines() if line.startswith("{")]
    return sorted(rs, key=lambda r: (r["TORCHELASTIC_RESTART_COUNT"], int(r["RANK"])))


def places(rs):
    return [(r["RANK"], r["WORLD_SIZE"], r["GROUP_RANK"], r["GROUP_WORLD_SIZE"]) for r in rs]


@requires_gloo
@pytest.mark.parametrize("nnodes", ["2", "1:2"])
def test_two_launchers_form_one_job(tmp_path, nnodes):
    # 1:2 with a long last call: the second node arrives within it, so the round closes at MAX at once
    port = free_port()
    env = {"PCT_TEST_COLLECTIVE": "1"}
    procs = [start_launcher(tmp_path, WORKER, nnodes, port, "--rdzv-conf", "last_call_timeout=20", env=env)]
    time.sleep(0.5)  # the first launcher hosts the store; the second finds the port taken and joins it
    procs.append(start_launcher(tmp_path, WORKER, nnodes, port, "--rdzv-conf", "last_call_timeout=20", env=env))
    results = finish(procs)
    for code, _, err in results:
        assert code == 0, err[-3000:]
    rs = records(results)
    assert places(rs) == [("0", "2", "0", "2"), ("1", "2", "1", "2")]
    assert all(r["total"] == 2.0 and r["TORCHELASTIC_RUN_ID"] == "job7" for r in rs)


def test_min_nodes_start_after_the_last_call(tmp_path):
    start = time.monotonic()
    (result,) = finish([start_launcher(tmp_path, WORKER, "1:2", free_port(), "--rdzv-conf", "last_call_timeout=1")])
    assert result[0] == 0, result[2][-3000:]
    assert places(records([result])) == [("0", "1", "0", "1")]
    assert time.monotonic() - start >= 1.0  # it waited for more nodes first


def test_a_late_node_restarts_the_job_with_it(tmp_path):
    # the first node runs alone after its last call; its worker waits to be replaced; the second
    # node's arrival makes a new round with both, no restart spent
    script = WORKER.replace('    if os.environ.get("PCT_TEST_COLLECTIVE"):',
                            '    if os.environ["GROUP_WORLD_SIZE"] == "1":\n'
                            '        import time; open("alone", "w").close(); time.sleep(60)\n'
                            '    if os.environ.get("PCT_TEST_COLLECTIVE"):')
    port = free_port()
    procs = [start_launcher(tmp_path, script, "1:2", port, "--rdzv-conf", "last_call_timeout=0.5")]
    deadline = time.monotonic() + 20
    while not (tmp_path / "alone").exists() and time.monotonic() < deadline:  # the one-node round runs
        time.sleep(0.05)
    procs.append(start_launcher(tmp_path, script, "1:2", port, "--rdzv-conf", "last_call_timeout=0.5"))
    results = finish(procs)
    for code, _, err in results:
        assert code == 0, err[-3000:]
    assert places(records(results)) == [("0", "2", "0", "2"), ("1", "2", "1", "2")]
    assert "membership" in results[0][2]


@requires_gloo
def test_a_failure_restarts_every_node_in_a_new_round(tmp_path):
    # node rank 1's worker fails in the first attempt; node 0's worker waits in init_process_group
    # for it, so both launchers must start a new round for the job to finish
    script = WORKER.replace("    if os.environ.get(", '    if os.environ["GROUP_RANK"] == "1" and '
                            'os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":\n        sys.exit(3)\n'
                            "    if os.environ.get(")
    port = free_port()
    env = {"PCT_TEST_COLLECTIVE": "1"}
    procs = [start_launcher(tmp_path, script, "2", port, "--max-restarts", "1", env=env)]
    time.sleep(0.5)
    procs.append(start_launcher(tmp_path, script, "2", port, "--max-restarts", "1", env=env))
    results = finish(procs)
    for code, _, err in results:
        assert code == 0, err[-3000:]
    rs = records(results)
    assert [r["total"] for r in rs] == [2.0, 2.0] and sorted(r["RANK"] for r in rs) == ["0", "1"]
    assert "will restart worker group" in "".join(err for _, _, err in results)


def test_too_few_nodes_time_out(tmp_path):
    (result,) = finish([start_launcher(tmp_path, WORKER, "2", free_port(), "--rdzv-conf", "join_timeout=1")])
    assert result[0] != 0
    assert "RendezvousTimeoutError" in result[2] and "needs 2 to 2 nodes (1 joined)" in result[2]


def test_c10d_needs_an_endpoint(tmp_path):
    (tmp_path / "s.py").write_text("")
    r = subprocess.run([sys.executable, "-m", "pyctorch.distributed.run", "--nnodes", "1:2", "--rdzv-backend", "c10d",
                        str(tmp_path / "s.py")], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "--rdzv-endpoint host:port" in r.stderr


@pytest.mark.skipif(not HAVE_TORCHRUN, reason="torch is not installed (oracle comparisons skip)")
def test_worker_environment_matches_torchruns(tmp_path):
    # the one difference: torchrun's agent serves the workers' store (TORCHELASTIC_USE_AGENT_STORE=True,
    # MASTER_ADDR from socket.getfqdn()), pyctorch's rank 0 serves it at node 0's address towards the endpoint
    script = WORKER.replace('"TORCHELASTIC_RUN_ID"]', '"TORCHELASTIC_RUN_ID", "ROLE_RANK", "ROLE_WORLD_SIZE", '
                            '"LOCAL_WORLD_SIZE", "TORCHELASTIC_MAX_RESTARTS", "ROLE_NAME"]')
    envs = {}
    for module in ("pyctorch.distributed.run", "torch.distributed.run"):
        port = free_port()
        procs = [start_launcher(tmp_path, script, "1:2", port, "--rdzv-conf", "last_call_timeout=20", module=module)]
        time.sleep(1.0 if module.startswith("torch") else 0.5)  # torchrun's agent imports torch first
        procs.append(start_launcher(tmp_path, script, "1:2", port, "--rdzv-conf", "last_call_timeout=20",
                                    module=module))
        results = finish(procs, timeout=60)
        for code, _, err in results:
            assert code == 0, err[-3000:]
        envs[module] = records(results)
    assert envs["pyctorch.distributed.run"] == envs["torch.distributed.run"]
