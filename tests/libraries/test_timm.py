"""timm runs unchanged under the torch alias with torch's numbers (resnet18, 3 SGD steps).

`import timm` needs torchvision (timm/layers/create_norm.py imports torchvision.ops.misc.FrozenBatchNorm2d
unconditionally, and timm.models imports timm.data, which imports torchvision.transforms and
torchvision.datasets) and torch.fx.wrap (timm/layers/pos_embed_sincos.py); pyctorch provides neither
torchvision nor, yet, torch.fx, so this skips until both exist.
"""
import importlib.util

import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import pyctorch_output, torch_outputs

if importlib.util.find_spec("timm") is None:
    pytest.skip("timm is not installed", allow_module_level=True)
pytest.importorskip("torchvision", reason="timm imports torchvision unconditionally and it is not installed")


@requires_torch
def test_timm_resnet18_matches_torch():
    theirs = torch_outputs(["timm_resnet18.py"])["timm_resnet18.py"]
    assert_same_text(pyctorch_output("timm_resnet18.py"), theirs, rtol=1e-8, atol=1e-9, exact_prefixes=("tokens",))
