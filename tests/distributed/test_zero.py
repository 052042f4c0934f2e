"""ZeroRedundancyOptimizer on 2 processes (Gloo): _fsdp_zero_worker.py checks every step against a
plain AdamW over the same model and gradients, the consolidated state dict against the plain
optimizer's, and training after load_state_dict. (The same worker passes on torch's own
ZeroRedundancyOptimizer with PCT_DIST_FRAMEWORK=torch; it is not run here, to keep the suite short.)"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dist_helpers import requires_gloo, run_ranks  # noqa: E402

CHECKS = ["matches_adamw", "state_dict"]


@pytest.fixture(scope="module")
def zero_run():
    results, outputs = run_ranks("zero", world_size=2, timeout=60, script="_fsdp_zero_worker.py")
    for code, _, err in outputs:
        assert code == 0, err[-3000:]
    return results


@requires_gloo
@pytest.mark.parametrize("check", CHECKS)
def test_zero(zero_run, check):
    assert check in zero_run, f"{check} did not run"
    assert zero_run[check] == "", zero_run[check]
