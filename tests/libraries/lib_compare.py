"""Shared by the tests in this folder: run a plain torch script under the real torch (several scripts in one
subprocess, torch's import being slow) and under `python -m pyctorch.as_torch`, and compare what they print."""
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def env(with_repo):
    e = dict(os.environ, OMP_NUM_THREADS="1", TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false",
             HF_HUB_OFFLINE="1")
    e.pop("PYTHONPATH", None)
    if with_repo:
        e["PYTHONPATH"] = REPO
    return e


_TORCH_DRIVER = r"""
import contextlib, io, json, os, runpy, sys
out = {}
for path in sys.argv[1:]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        runpy.run_path(path, run_name="__main__")
    out[os.path.basename(path)] = buf.getvalue()
print(json.dumps(out))
"""


def torch_outputs(scripts):
    """{script: stdout} of the scripts (names under scripts/) run by the real torch in one subprocess."""
    paths = [os.path.join(HERE, "scripts", s) for s in scripts]
    proc = subprocess.run([sys.executable, "-c", _TORCH_DRIVER, *paths], capture_output=True, text=True,
                          env=env(False), timeout=180, cwd=HERE)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def pyctorch_output(script, runner=()):
    """stdout of scripts/<script> under the torch alias (optionally through a runner script first)."""
    proc = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", *runner, os.path.join(HERE, "scripts", script)],
                          capture_output=True, text=True, env=env(True), timeout=120, cwd=HERE)
    assert proc.returncode == 0, f"{script} failed under pyctorch:\n{proc.stdout}\n{proc.stderr[-6000:]}"
    return proc.stdout


def assert_same_output(ours, theirs, rtol=1e-5, atol=3e-6):
    """Same lines, same words; numbers within tolerance; `tokens` lines (greedy decoding) identical."""
    a_lines, b_lines = ours.strip().splitlines(), theirs.strip().splitlines()
    assert len(a_lines) == len(b_lines), f"\npyctorch:\n{ours}\ntorch:\n{theirs}"
    for a, b in zip(a_lines, b_lines):
        if a.startswith("tokens"):
            assert a == b
            continue
        assert NUMBER.sub("#", a) == NUMBER.sub("#", b), f"line differs: {a!r} vs torch {b!r}"
        na, nb = [float(x) for x in NUMBER.findall(a)], [float(x) for x in NUMBER.findall(b)]
        np.testing.assert_allclose(na, nb, rtol=rtol, atol=atol, err_msg=f"{a!r} vs torch {b!r}")
