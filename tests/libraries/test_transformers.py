"""Hugging Face transformers runs unchanged under the torch alias and prints torch's numbers.

Each script in scripts/hf_*.py is plain torch + transformers code (tiny configs): GPT-2 trained 5 AdamW
steps then greedy `generate`, BERT sequence classification forward + backward, Llama causal LM
forward + backward, and the Trainer for 4 steps, save_pretrained / from_pretrained (safetensors, tied
weights), a model built on the meta device and low_cpu_mem_usage loading. The real torch runs them all in one subprocess; pyctorch runs each under
`python -m pyctorch.as_torch` in its own subprocess, one thread each, and the printed numbers must agree.

Three things transformers touches at import need pyctorch's C layer (c_gap_standins.py says which):
while they are missing, `test_matches_torch` skips naming them and `test_matches_torch_with_c_standins`
runs the same scripts with only those names stood in, so every other library path is pyctorch's.
"""
import os
import sys

import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import HERE, pyctorch_output, torch_outputs

pytest.importorskip("transformers", reason="transformers is not installed")

sys.path.insert(0, HERE)
import c_gap_standins  # noqa: E402

SCRIPTS = ["hf_gpt2.py", "hf_bert.py", "hf_llama.py", "hf_trainer_save.py"]
C_GAPS = list(c_gap_standins.MISSING_DTYPES) + ([] if c_gap_standins.HAS_META else ['device("meta")'])
_TORCH = {}


def torch_output(script):
    if not _TORCH:
        _TORCH.update(torch_outputs(SCRIPTS))
    return _TORCH[script]


@requires_torch
@pytest.mark.parametrize("script", SCRIPTS)
def test_matches_torch(script):
    if C_GAPS:
        pytest.skip("transformers needs torch." + ", torch.".join(C_GAPS) + " (pyctorch's C layer lacks them)")
    assert_same_text(pyctorch_output(script), torch_output(script), rtol=1e-5, atol=3e-6, exact_prefixes=("tokens",))


@requires_torch
@pytest.mark.parametrize("script", SCRIPTS)
def test_matches_torch_with_c_standins(script):
    if not C_GAPS:
        pytest.skip("pyctorch has every C piece transformers needs: test_matches_torch covers this")
    runner = [os.path.join(HERE, "c_gap_standins.py")]
    assert_same_text(pyctorch_output(script, runner), torch_output(script), rtol=1e-5, atol=3e-6,
                     exact_prefixes=("tokens",))
