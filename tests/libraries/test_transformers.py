"""Hugging Face transformers runs unchanged under the torch alias and prints torch's numbers.

Each script in scripts/hf_*.py is plain torch + transformers code (tiny configs): GPT-2 trained 5 AdamW
steps then greedy `generate`, BERT sequence classification forward + backward, Llama causal LM
forward + backward, and the Trainer for 4 steps, save_pretrained / from_pretrained (safetensors, tied
weights), a model built on the meta device and low_cpu_mem_usage loading. The real torch runs them all in one
subprocess; pyctorch runs each under `python -m pyctorch.as_torch` in its own subprocess, one thread each, and
the printed numbers must agree.
"""
import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import pyctorch_output, torch_outputs

pytest.importorskip("transformers", reason="transformers is not installed")

SCRIPTS = ["hf_gpt2.py", "hf_bert.py", "hf_llama.py", "hf_trainer_save.py"]
_TORCH = {}


def torch_output(script):
    if not _TORCH:
        _TORCH.update(torch_outputs(SCRIPTS))
    return _TORCH[script]


@requires_torch
@pytest.mark.parametrize("script", SCRIPTS)
def test_matches_torch(script):
    assert_same_text(pyctorch_output(script), torch_output(script), rtol=1e-5, atol=3e-6, exact_prefixes=("tokens",))
