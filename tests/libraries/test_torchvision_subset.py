"""pyctorch's torchvision subset (Note [The torchvision subset], pyctorch/_vision_finder.py).

The script asserts against numpy and Pillow in every run (crops, flips, every padding mode, normalize, grayscale,
PIL resize, the datasets' files, ops); its printed digests (color ops, blur, resizes with and without antialias,
seeded random pipelines, FakeData) must match the real torch running the same subset."""
import subprocess
import sys

import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import REPO, TORCHVISION, env, pyctorch_output, torch_outputs

pytest.importorskip("PIL", reason="the subset's PIL paths and datasets need Pillow")


def test_subset_runs_and_matches_numpy():
    out = pyctorch_output("torchvision_subset.py", TORCHVISION)
    assert out.rstrip().endswith("torchvision 0.28.0"), out


@requires_torch
def test_subset_matches_torch():
    theirs = torch_outputs(["torchvision_subset.py"], torchvision=True)["torchvision_subset.py"]
    # float32 color jitter and normalize sums: 1e-5 (summation order); the float64 and integer digests are exact
    assert_same_text(pyctorch_output("torchvision_subset.py", TORCHVISION), theirs, rtol=1e-5, atol=1e-6)


def test_install_as_torch_serves_the_subset_and_uninstall_removes_it():
    code = ("import sys, pyctorch; pyctorch.install_as_torch(torchvision=True); "
            "import torchvision, torchvision.transforms as T; "
            "assert torchvision.__file__.startswith(pyctorch.__path__[0]), torchvision.__file__; "
            "assert T.ToTensor()(__import__('numpy').zeros((2, 3), 'uint8')).shape == (1, 2, 3); "
            "pyctorch.uninstall_as_torch() if hasattr(pyctorch, 'uninstall_as_torch') else "
            "__import__('pyctorch.as_torch').as_torch.uninstall_as_torch(); "
            "assert 'torchvision' not in sys.modules; "
            "import importlib.util; assert importlib.util.find_spec('torchvision') is None; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(True), cwd=REPO,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_missing_submodule_is_a_module_not_found_error():
    proc = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", *TORCHVISION, "-c", "import torchvision.io"],
                          capture_output=True, text=True, env=env(True), cwd=REPO, timeout=120)
    assert proc.returncode != 0 and "ModuleNotFoundError: No module named 'torchvision.io'" in proc.stderr


def test_the_subset_is_opt_in():
    """Without --torchvision (or PYCTORCH_TORCHVISION=1) no torchvision is findable: libraries that probe for it
    (transformers, torchmetrics) then leave it alone; with the variable set, it is there."""
    probe = "import importlib.util; print(importlib.util.find_spec('torchvision') is not None)"
    for extra, expected in (({}, "False"), ({"PYCTORCH_TORCHVISION": "1"}, "True")):
        proc = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", "-c", probe], capture_output=True,
                              text=True, env={**env(True), **extra}, cwd=REPO, timeout=120)
        assert proc.returncode == 0 and proc.stdout.strip() == expected, (extra, proc.stdout, proc.stderr[-2000:])
