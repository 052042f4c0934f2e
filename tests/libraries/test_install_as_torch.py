"""The library scripts run unchanged after `pyctorch.install_as_torch()` as well as under `python -m pyctorch.as_torch`
(issue: the libraries built on torch): one script per library, the real torch's output shared with their own tests
(tests/session_cache.py), the same tolerances."""
import importlib.util

import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import pyctorch_output_installed, torch_outputs

CASES = [  # script, library, the set of scripts its own test asks torch for, torchvision, rtol, atol
    ("einops_ops.py", "einops", ["einops_ops.py"], False, 1e-6, 3e-6),
    ("hf_bert.py", "transformers", ["hf_gpt2.py", "hf_bert.py", "hf_llama.py", "hf_trainer_save.py"], False, 1e-5, 3e-6),
    ("timm_resnet18.py", "timm", ["timm_resnet18.py", "timm_vit.py"], True, 1e-8, 1e-9),
    ("lightning_fit.py", "lightning", None, False, 1e-6, 1e-7),
]


@requires_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_script_after_install_as_torch_matches_torch(case):
    script, library, group, vision, rtol, atol = case
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed")
    if group is None:  # the Lightning/accelerate test's set: the scripts whose libraries are installed
        group = [s for s, lib in (("lightning_fit.py", "lightning"), ("accelerate_loop.py", "accelerate"))
                 if importlib.util.find_spec(lib) is not None]
    theirs = torch_outputs(group, torchvision=vision)[script]
    assert_same_text(pyctorch_output_installed(script, vision), theirs, rtol=rtol, atol=atol,
                     exact_prefixes=("tokens",))
