"""Torch-style scripts (tests/dropin/scripts/*.py, plain `import torch` code) run unchanged through
`python -m pyctorch.as_torch` in a subprocess; their printed numbers must match what the same
scripts print under the real torch (one torch subprocess runs them all), and hand/numpy checks
of the runs always apply."""
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from comparison import assert_same_text
from conftest import requires_torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = sorted(f for f in os.listdir(os.path.join(HERE, "scripts")) if f.endswith(".py"))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, env.get("PYTHONPATH")) if p)
    return env


def run_pyctorch(script):
    path = os.path.join(HERE, "scripts", script)
    proc = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", path], capture_output=True, text=True,
                          env=_env(), timeout=120)
    assert proc.returncode == 0, f"{script} failed under pyctorch:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


_TORCH_OUTPUTS = {}

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


def run_torch(script):
    """All scripts under the real torch in one subprocess (torch's import is slow), once per test session. Its
    torch.compile calls run eagerly (TORCH_COMPILE_DISABLE): torch compiles to eager's numbers, which are the
    oracle, and its inductor would spend most of the run compiling."""
    if not _TORCH_OUTPUTS:
        import json
        from session_cache import computed_once
        paths = [os.path.join(HERE, "scripts", s) for s in SCRIPTS]

        def compute():
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)  # the real torch, not the repository
            env["TORCH_COMPILE_DISABLE"] = "1"
            proc = subprocess.run([sys.executable, "-c", _TORCH_DRIVER, *paths], capture_output=True, text=True,
                                  env=env, timeout=300, cwd=HERE)
            assert proc.returncode == 0, proc.stderr
            return json.loads(proc.stdout.strip().splitlines()[-1])
        _TORCH_OUTPUTS.update(computed_once("dropin scripts", paths, compute))
    return _TORCH_OUTPUTS[script]


@requires_torch
@pytest.mark.parametrize("script", SCRIPTS)
def test_script_matches_torch(script):
    # sampled text: identical RNG use gives identical tokens
    assert_same_text(run_pyctorch(script), run_torch(script), rtol=1e-4, atol=1e-6, exact_prefixes=("sample",))


def _losses(text):
    return [float(line.split()[2]) for line in text.splitlines() if line.startswith("loss")]


def test_poly_manual_matches_numpy():
    # the same gradient descent written in numpy (float64): the runner's numbers are the exact ones
    x = np.linspace(-math.pi, math.pi, 500)
    y = np.cos(x)
    a, b, c = 0.5, -0.25, 0.1
    losses = []
    for t in range(300):
        pred = a + b * x + c * x ** 2
        losses.append(((pred - y) ** 2).sum())
        g = 2.0 * (pred - y)
        a, b, c = a - 2e-5 * g.sum(), b - 2e-5 * (g * x).sum(), c - 2e-5 * (g * x ** 2).sum()
    out = run_pyctorch("poly_manual.py")
    np.testing.assert_allclose(_losses(out), [losses[99], losses[199], losses[299]], rtol=1e-10)
    result = [float(v) for v in out.splitlines()[-1].split()[1:]]
    np.testing.assert_allclose(result, [a, b, c], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("script", ["custom_function.py", "custom_module.py", "sequential_optim.py"])
def test_training_scripts_converge(script):
    losses = _losses(run_pyctorch(script))
    assert len(losses) >= 3 and all(math.isfinite(v) for v in losses)
    assert losses[-1] < losses[0]


def test_custom_function_gradcheck_and_tiny_gpt_runs():
    assert "gradcheck True" in run_pyctorch("custom_function.py")
    out = run_pyctorch("tiny_gpt.py")
    losses = [float(m) for m in re.findall(r"loss (\d+\.\d+)", out)]
    assert losses[-1] < losses[0] - 0.5
    sample = re.search(r"sample '(.*)'", out).group(1)
    assert len(sample) == 31 and set(sample) <= set("the quick brown fox jumps over the lazy dog")
    assert "mfu-ish True" in out
