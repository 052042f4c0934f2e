"""The safetensors package's own `safetensors.torch` code (not pyctorch's reader) runs on pyctorch under the alias:
save_file/load_file, bytes, safe_open slices and save_model/load_model with a tied weight, printing what torch
prints."""
import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import pyctorch_output, torch_outputs

pytest.importorskip("safetensors", reason="the safetensors package is not installed")


def test_package_runs_under_the_alias():
    out = pyctorch_output("safetensors_ops.py")
    assert "load_model [] [] True True" in out and "saved keys ['emb.weight']" in out, out


@requires_torch
def test_package_matches_torch():
    theirs = torch_outputs(["safetensors_ops.py"])["safetensors_ops.py"]
    assert_same_text(pyctorch_output("safetensors_ops.py"), theirs, rtol=1e-6, atol=1e-7)
