"""timm runs unchanged under the torch alias with torch's numbers: resnet18 (3 SGD steps) and a small ViT (3 SGD
steps fed by a torchvision transform pipeline).

`import timm` needs torchvision (timm.layers imports torchvision.ops.misc.FrozenBatchNorm2d, timm.data imports
torchvision.transforms and torchvision.datasets). No torchvision wheel loads beside torch 2.13's CPU build here, so
both sides import pyctorch's torchvision subset (Note [The torchvision subset], pyctorch/_vision_finder.py): under
the alias through `python -m pyctorch.as_torch --torchvision`, under the real torch through lib_compare's driver.
timm and the scripts are unchanged.
"""
import importlib.util

import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import TORCHVISION, pyctorch_output, torch_outputs

if importlib.util.find_spec("timm") is None:
    pytest.skip("timm is not installed (make test installs it from tests/libraries/requirements-nodeps.txt)",
                allow_module_level=True)

SCRIPTS = ["timm_resnet18.py", "timm_vit.py"]


@requires_torch
def test_timm_resnet18_matches_torch():
    theirs = torch_outputs(SCRIPTS, torchvision=True)["timm_resnet18.py"]
    assert_same_text(pyctorch_output("timm_resnet18.py", TORCHVISION), theirs, rtol=1e-8, atol=1e-9)


@requires_torch
def test_timm_vit_matches_torch():
    # 1e-7, not resnet18's 1e-8: the ViT's trunc_normal_ init goes through float32 erfinv, where torch (MKL's VML)
    # and pyctorch (correctly rounded) differ by one ulp in about 3 of 10,000 values
    theirs = torch_outputs(SCRIPTS, torchvision=True)["timm_vit.py"]
    assert_same_text(pyctorch_output("timm_vit.py", TORCHVISION), theirs, rtol=1e-7, atol=1e-9)


def test_timm_runs_under_the_alias():
    """Without torch to compare against, the runs still finish and train (the loss falls)."""
    out = pyctorch_output("timm_vit.py", TORCHVISION)
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("step")]
    assert len(losses) == 3 and losses[-1] < losses[0], out
