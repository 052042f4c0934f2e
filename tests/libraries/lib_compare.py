"""Shared by the tests in this folder: run a plain torch script under the real torch (several scripts in one
subprocess, torch's import being slow) and under `python -m pyctorch.as_torch`, and compare what they print."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def env(with_repo):
    e = dict(os.environ, OMP_NUM_THREADS="1", TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false",
             HF_HUB_OFFLINE="1")
    e.pop("PYTHONPATH", None)
    if with_repo:
        e["PYTHONPATH"] = REPO
    return e


# argv[1]: pyctorch/_vision_finder.py, or "-": loaded by path (not through pyctorch) so that timm's `import torchvision`
# finds the same torchvision subset under the real torch as under the alias (Note [The torchvision subset])
_TORCH_DRIVER = r"""
import contextlib, importlib.util, io, json, os, runpy, sys
if sys.argv[1] != "-":
    spec = importlib.util.spec_from_file_location("pyctorch_vision_finder", sys.argv[1])
    finder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(finder)
    finder.install()
out = {}
for path in sys.argv[2:]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        runpy.run_path(path, run_name="__main__")
    out[os.path.basename(path)] = buf.getvalue()
print(json.dumps(out))
"""


def torch_outputs(scripts, torchvision=False):
    """{script: stdout} of the scripts (names under scripts/) run by the real torch in one subprocess, once per
    test session (tests/session_cache.py); torchvision: with pyctorch's torchvision subset importable (the
    alias side then runs with runner=TORCHVISION)."""
    from session_cache import computed_once
    paths = [os.path.join(HERE, "scripts", s) for s in scripts]

    def compute():
        finder = os.path.join(REPO, "pyctorch", "_vision_finder.py") if torchvision else "-"
        proc = subprocess.run([sys.executable, "-c", _TORCH_DRIVER, finder, *paths], capture_output=True, text=True,
                              env=env(False), timeout=180, cwd=HERE)
        assert proc.returncode == 0, proc.stderr[-4000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])
    return computed_once("library scripts" + (" with torchvision" if torchvision else ""), paths, compute)


TORCHVISION = ("--torchvision",)  # the runner flag that serves pyctorch's torchvision subset


def pyctorch_output(script, runner=()):
    """stdout of scripts/<script> under the torch alias (optionally through a runner script first)."""
    proc = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", *runner, os.path.join(HERE, "scripts", script)],
                          capture_output=True, text=True, env=env(True), timeout=120, cwd=HERE)
    assert proc.returncode == 0, f"{script} failed under pyctorch:\n{proc.stdout}\n{proc.stderr[-6000:]}"
    return proc.stdout


_INSTALLED_DRIVER = r"""
import runpy, sys
import pyctorch
pyctorch.install_as_torch(torchvision=sys.argv[1] == "1")
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def pyctorch_output_installed(script, torchvision=False):
    """stdout of scripts/<script> run after `pyctorch.install_as_torch()` in a plain interpreter (the other way in)."""
    path = os.path.join(HERE, "scripts", script)
    proc = subprocess.run([sys.executable, "-c", _INSTALLED_DRIVER, "1" if torchvision else "0", path],
                          capture_output=True, text=True, env=env(True), timeout=120, cwd=HERE)
    assert proc.returncode == 0, f"{script} failed after install_as_torch():\n{proc.stdout}\n{proc.stderr[-6000:]}"
    return proc.stdout
