"""einops runs unchanged under the torch alias (its torch backend and einops.layers.torch) with torch's numbers."""
import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import pyctorch_output, torch_outputs

pytest.importorskip("einops", reason="einops is not installed")


@requires_torch
def test_einops_matches_torch():
    theirs = torch_outputs(["einops_ops.py"])["einops_ops.py"]
    assert_same_text(pyctorch_output("einops_ops.py"), theirs, rtol=1e-6, atol=3e-6, exact_prefixes=("tokens",))
