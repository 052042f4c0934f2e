"""Starting ranks of a distributed test as local processes (see _dist_worker.py)."""
import json
import os
import socket
import subprocess
import sys

import pytest

import pyctorch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

requires_gloo = pytest.mark.skipif(not dist.is_gloo_available(),
                                   reason="pyctorch was built without Gloo (apt-get install libgloo-dev, then rebuild)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(scenario, world_size=2, timeout=60, env=None, alias=False, script="_dist_worker.py"):
    """Runs _dist_worker.py SCENARIO as world_size processes; returns ({check: error or ''}, outputs).
    Every process is killed at the timeout, so a hang fails the test instead of stalling the suite.
    alias: run it through `python -m pyctorch.as_torch` (with PCT_DIST_FRAMEWORK=torch the worker's
    `import torch` is then pyctorch). script: the worker file in this directory."""
    port = free_port()
    procs = []
    for rank in range(world_size):
        e = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=str(port), PYTHONPATH=ROOT, OMP_NUM_THREADS="1", **(env or {}))
        runner = [sys.executable, "-m", "pyctorch.as_torch"] if alias else [sys.executable]
        procs.append(subprocess.Popen([*runner, os.path.join(HERE, script), scenario], env=e,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            for q in procs:
                q.communicate()
            pytest.fail(f"distributed scenario {scenario!r} did not finish within {timeout}s")
        outputs.append((p.returncode, out, err))
    results = {}
    for rank, (code, out, err) in enumerate(outputs):
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                if "check" not in r:
                    continue  # another kind of line (a worker's record of values)
                if not r["ok"]:
                    results[r["check"]] = results.get(r["check"], "") + f"[rank {rank}]\n{r['error']}"
                else:
                    results.setdefault(r["check"], "")
    return results, outputs
