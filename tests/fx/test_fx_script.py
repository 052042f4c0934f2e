"""A torch.fx script (scripts/fx_docs_examples.py: tracing, graph printing, editing, ShapeProp, Interpreter,
Transformer, TraceError) prints exactly the same under real torch and under `python -m pyctorch.as_torch`."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "scripts", "fx_docs_examples.py")


def _run(*prefix):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, *prefix, SCRIPT], capture_output=True, text=True, env=env,
                          timeout=120, cwd=HERE)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_docs_examples_print_the_same_as_torch():
    pytest.importorskip("torch")
    ours = _run("-m", "pyctorch.as_torch")
    theirs = _run()
    assert ours.splitlines() == theirs.splitlines()
    assert "TraceError symbolically traced variables cannot be used as inputs to control flow" in ours
