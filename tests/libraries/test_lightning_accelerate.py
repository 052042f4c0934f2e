"""Lightning and accelerate run unchanged under the torch alias with torch's numbers.

scripts/lightning_fit.py fits a LightningModule for two epochs (validation, checkpointing) and reloads it from its
checkpoint; scripts/accelerate_loop.py runs an Accelerator's prepare / backward / step loop and save_state /
load_state. Each prints its losses, and both libraries' printed output must match real torch's. The files
accelerate saves under pyctorch must load in real torch.
"""
import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import requires_torch
from comparison import assert_same_text
from lib_compare import HERE, env, pyctorch_output, torch_outputs


def _needs(name):
    return pytest.mark.skipif(importlib.util.find_spec(name) is None, reason=f"{name} is not installed")


pytestmark = pytest.mark.xdist_group("lightning_accelerate")  # one worker: the torch run below is shared

_SCRIPTS = [s for s, lib in (("lightning_fit.py", "lightning"), ("accelerate_loop.py", "accelerate"))
            if importlib.util.find_spec(lib) is not None]


@pytest.fixture(scope="module")
def torch_printed():
    """What real torch prints for both scripts: one subprocess (torch's import is the slow part)."""
    return torch_outputs(_SCRIPTS)


@requires_torch
@_needs("lightning")
def test_lightning_fit_and_reload_match_torch(torch_printed):
    theirs = torch_printed["lightning_fit.py"]
    assert_same_text(pyctorch_output("lightning_fit.py"), theirs, rtol=1e-6, atol=1e-7)


@requires_torch
@_needs("accelerate")
def test_accelerate_loop_matches_torch_and_its_files_load_in_torch(tmp_path, torch_printed):
    import torch
    from safetensors.torch import load_file
    theirs = torch_printed["accelerate_loop.py"]
    kept = tmp_path / "state"
    proc = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", os.path.join(HERE, "scripts", "accelerate_loop.py")],
                          capture_output=True, text=True, env=dict(env(True), KEEP_ACCELERATE_STATE=str(kept)),
                          timeout=120, cwd=HERE)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert_same_text(proc.stdout, theirs, rtol=1e-6, atol=1e-7)
    weights = load_file(str(kept / "model.safetensors"))  # real torch reads what pyctorch saved
    assert sorted(weights) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    printed = [float(v) for v in next(line for line in proc.stdout.splitlines()
                                      if line.startswith("weights")).split()[1:]]
    order = ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [round(weights[k].double().sum().item(), 6) for k in order] == pytest.approx(printed, abs=2e-6)
    optimizer = torch.load(str(kept / "optimizer.bin"), weights_only=True)
    assert optimizer["param_groups"][0]["lr"] == pytest.approx(0.0025) and len(optimizer["state"]) == 4
    scheduler = torch.load(str(kept / "scheduler.bin"), weights_only=True)
    assert scheduler["last_epoch"] == 4
    states = torch.load(str(kept / "random_states_0.pkl"), weights_only=False)
    assert isinstance(states["torch_manual_seed"], torch.Tensor)
