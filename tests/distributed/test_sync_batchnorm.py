"""nn.SyncBatchNorm: 2 ranks with shards of one batch give the outputs, input gradients, summed or
DDP-averaged parameter gradients and running statistics of one BatchNorm on the whole batch
(_syncbn_worker.py); without a process group and in eval mode it is torch's plain batch norm."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyctorch  # noqa: E402
from dist_helpers import requires_gloo, run_ranks  # noqa: E402

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
requires_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (oracle comparisons skip)")

CHECKS = ["even_shards_2d", "uneven_shards_3d", "empty_shard_2d_input", "cumulative_average_no_affine", "ddp_training"]


@pytest.fixture(scope="module")
def syncbn_results():
    results, outputs = run_ranks("all", world_size=2, timeout=60, script="_syncbn_worker.py")
    for code, _, err in outputs:
        assert code == 0, err[-3000:]
    return results


@requires_gloo
@pytest.mark.parametrize("check", CHECKS)
def test_two_ranks_match_one_process(syncbn_results, check):
    assert check in syncbn_results, "the check did not run"
    assert syncbn_results[check] == "", syncbn_results[check]


def as_np(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


@requires_torch
@pytest.mark.parametrize("training", [True, False])
def test_without_a_process_group_it_is_torchs_batch_norm(training):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 3, 4, 4)).astype(np.float32)
    g = rng.standard_normal((6, 3, 4, 4)).astype(np.float32)
    results = []
    for mod in (pyctorch, torch):
        m = mod.nn.SyncBatchNorm(3, momentum=0.2)
        with mod.no_grad():
            m.weight.copy_(mod.tensor([1.5, -0.5, 2.0]))
            m.running_var.fill_(2.0)
        m.train(training)
        xt = mod.tensor(x, requires_grad=True)
        y = m(xt)
        (y * mod.tensor(g)).sum().backward()
        results.append([y, xt.grad, m.weight.grad, m.bias.grad, m.running_mean, m.running_var])
    for p, t in zip(*results):
        np.testing.assert_allclose(as_np(p), as_np(t), rtol=1e-5, atol=1e-5)


@requires_torch
def test_convert_sync_batchnorm_matches_torch():
    made = []
    for mod in (pyctorch, torch):
        mod.manual_seed(0)
        net = mod.nn.Sequential(mod.nn.Conv2d(3, 4, 3), mod.nn.BatchNorm2d(4, momentum=None),
                                mod.nn.Sequential(mod.nn.BatchNorm1d(5, affine=False)), mod.nn.BatchNorm3d(2).eval())
        bn = net[1]
        converted = mod.nn.SyncBatchNorm.convert_sync_batchnorm(net, process_group="group")
        assert converted is net and converted[1].weight is bn.weight and converted[1].running_mean is bn.running_mean
        assert converted[2][0].process_group == "group" and not converted[3].training
        made.append(converted)
    assert repr(made[0]) == repr(made[1])
    assert list(made[0].state_dict()) == list(made[1].state_dict())
    lone = pyctorch.nn.SyncBatchNorm.convert_sync_batchnorm(pyctorch.nn.BatchNorm1d(3))
    assert type(lone) is pyctorch.nn.SyncBatchNorm


@requires_torch
def test_input_errors_match_torch():
    for mod in (pyctorch, torch):
        with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
            mod.nn.SyncBatchNorm(3)(mod.ones(3))
        with pytest.raises(ValueError, match="number of input channels should be non-zero"):
            mod.nn.SyncBatchNorm(0)(mod.ones(2, 0))


TORCH_CPU_SYNC = """
    import datetime, socket, torch, torch.distributed as dist
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=20))
    try:
        torch.nn.SyncBatchNorm(2)(torch.ones(4, 2))
        print("synced")
    except ValueError as e:
        print("ValueError:", e)
"""


@requires_torch
def test_torch_comparison_of_the_synced_path():
    """torch's SyncBatchNorm syncs only accelerator tensors: under a Gloo process group on the CPU
    it raises, so the distributed path is checked against one-process BatchNorm instead
    (test_two_ranks_match_one_process) and pyctorch syncs on the CPU (Note [SyncBatchNorm on the CPU])."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(TORCH_CPU_SYNC)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    if "ValueError: SyncBatchNorm expected input tensor to be on GPU" in r.stdout:
        pytest.skip("torch's SyncBatchNorm refuses CPU tensors under a process group (" + r.stdout.strip() + ")")
    pytest.fail("torch now syncs CPU tensors: compare its distributed SyncBatchNorm with pyctorch's here")
