"""Lazy modules against torch: shapes and initial values after the first forward for a seed, the
class they become, state_dict before and after, loading a state_dict into an uninitialized module,
and the placeholders' behaviour."""
import copy

import numpy as np
import pytest

from conftest import HAVE_TORCH, requires_torch, to_numpy

import pyctorch
from pyctorch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

if HAVE_TORCH:
    import torch

# (lazy class, constructor args, constructor kwargs, first input shape, eager class it becomes)
LAZY_CASES = [
    ("LazyLinear", (4,), {}, (3, 5), "Linear"),
    ("LazyLinear", (2,), {"bias": False}, (2, 3, 6), "Linear"),
    ("LazyConv1d", (4, 3), {"stride": 2}, (2, 3, 9), "Conv1d"),
    ("LazyConv2d", (6, 3), {"groups": 2, "padding": 1}, (1, 4, 5, 5), "Conv2d"),
    ("LazyConv2d", (3, 2), {"bias": False}, (2, 5, 5), "Conv2d"),  # unbatched input
    ("LazyConv3d", (2, 2), {}, (1, 3, 4, 4, 4), "Conv3d"),
    ("LazyConvTranspose1d", (3, 2), {"output_padding": 1, "stride": 2}, (2, 4, 5), "ConvTranspose1d"),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2}, (1, 2, 4, 4), "ConvTranspose2d"),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3), "ConvTranspose3d"),
    ("LazyBatchNorm1d", (), {}, (4, 3), "BatchNorm1d"),
    ("LazyBatchNorm2d", (), {"momentum": 0.3}, (2, 3, 4, 4), "BatchNorm2d"),
    ("LazyBatchNorm3d", (), {"affine": False}, (2, 2, 3, 3, 3), "BatchNorm3d"),
    ("LazyInstanceNorm1d", (), {"affine": True, "track_running_stats": True}, (2, 3, 6), "InstanceNorm1d"),
    ("LazyInstanceNorm2d", (), {"affine": True}, (2, 3, 4, 4), "InstanceNorm2d"),
    ("LazyInstanceNorm3d", (), {"track_running_stats": True}, (1, 2, 3, 3, 3), "InstanceNorm3d"),
]


def _case_id(case):
    return f"{case[0]}{case[1]}{'-' + '-'.join(f'{k}={v}' for k, v in case[2].items()) if case[2] else ''}"


def _input(lib, shape):
    return lib.tensor(np.random.default_rng(2).standard_normal(shape).astype("float32"))


def _run(lib, case, seed=0):
    name, args, kwargs, x_shape, _ = case
    lib.manual_seed(seed)
    m = getattr(lib.nn, name)(*args, **kwargs)
    out = m(_input(lib, x_shape))
    return m, out


@requires_torch
@pytest.mark.parametrize("case", LAZY_CASES, ids=_case_id)
def test_first_forward_matches_torch(case):
    eager = case[4]
    (ours, out_ours), (theirs, out_theirs) = _run(pyctorch, case), _run(torch, case)
    assert type(ours) is getattr(pyctorch.nn, eager) and type(theirs) is getattr(torch.nn, eager)
    np.testing.assert_allclose(to_numpy(out_ours.detach()), to_numpy(out_theirs.detach()), rtol=1e-5, atol=1e-5)
    ours_sd, theirs_sd = ours.state_dict(), theirs.state_dict()
    assert list(ours_sd) == list(theirs_sd)
    for key, value in theirs_sd.items():
        assert tuple(ours_sd[key].shape) == tuple(value.shape), key
        np.testing.assert_allclose(to_numpy(ours_sd[key]), to_numpy(value), rtol=1e-6, atol=1e-7, err_msg=key)
    assert repr(ours) == repr(theirs)
    assert pyctorch.rand(1).item() == torch.rand(1).item()  # the same numbers were drawn


@requires_torch
@pytest.mark.parametrize("case", [c for c in LAZY_CASES[::3] if "Instance" not in c[0]], ids=_case_id)
def test_uninitialized_state_dict_and_loading(case):
    name, args, kwargs, x_shape, eager = case
    keys = []
    for lib in (pyctorch, torch):
        sd = getattr(lib.nn, name)(*args, **kwargs).state_dict()
        keys.append([(k, type(v).__name__) for k, v in sd.items()])
    assert keys[0] == keys[1]
    # a lazy module loads an initialized module's state, then its forward gives the same output
    source, _ = _run(pyctorch, case, seed=5)
    target = getattr(pyctorch.nn, name)(*args, **kwargs)
    target.load_state_dict(source.state_dict())
    assert not target.has_uninitialized_params()
    x = _input(pyctorch, x_shape)
    source.eval(), target.eval()
    np.testing.assert_array_equal(to_numpy(target(x).detach()), to_numpy(source(x).detach()))
    assert type(target).__name__ == eager
    assert repr(target) == repr(_load_into_lazy(torch, case))


def _load_into_lazy(lib, case):
    """torch's repr after loading into a lazy module and one forward (only Linear learns its sizes)."""
    name, args, kwargs, x_shape, _ = case
    source, _ = _run(lib, case, seed=5)
    target = getattr(lib.nn, name)(*args, **kwargs)
    target.load_state_dict(source.state_dict())
    target(_input(lib, x_shape))
    return target


@requires_torch
def test_lazy_instance_norm_loaded_before_forward_raises_as_torch():
    """torch's quirk: loading materializes but leaves num_features 0, which the forward refuses."""
    messages = []
    for lib in (pyctorch, torch):
        m = lib.nn.LazyInstanceNorm1d(affine=True)
        m.load_state_dict(lib.nn.InstanceNorm1d(3, affine=True, track_running_stats=True).state_dict())
        with pytest.raises(ValueError) as info:
            m(_input(lib, (2, 3, 4)))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_placeholders():
    p = UninitializedParameter()
    assert is_lazy(p) and isinstance(p, pyctorch.nn.Parameter) and repr(p) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    assert is_lazy(copy.deepcopy(p))
    p.materialize((2, 3), dtype=pyctorch.float64)
    assert type(p) is pyctorch.nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == pyctorch.float64
    b = UninitializedBuffer()
    assert is_lazy(b) and not b.requires_grad
    b.materialize((4,))
    assert not is_lazy(b) and tuple(b.shape) == (4,)


def test_lazy_modules_pickle_and_deepcopy_before_their_first_forward():
    import pickle
    for clone in (lambda m: pickle.loads(pickle.dumps(m)), copy.deepcopy):
        m = clone(pyctorch.nn.LazyBatchNorm2d())
        assert type(m).__name__ == "LazyBatchNorm2d" and m.has_uninitialized_params()
        m(pyctorch.ones(2, 3, 2, 2))
        assert type(m) is pyctorch.nn.BatchNorm2d and not m._forward_pre_hooks
        assert type(m.running_mean) is pyctorch.Tensor and tuple(m.running_mean.shape) == (3,)


def test_parameters_created_before_the_forward_are_the_ones_trained():
    """An optimizer built on a lazy module holds the placeholders, which become the parameters."""
    m = pyctorch.nn.LazyLinear(2)
    params = list(m.parameters())
    m(pyctorch.ones(1, 3))
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert tuple(params[0].shape) == (2, 3)


def test_not_fully_initialized_and_input_checks():
    class Broken(pyctorch.nn.modules.lazy.LazyModuleMixin, pyctorch.nn.Linear):
        def __init__(self):
            super().__init__(0, 0, False)
            self.weight = UninitializedParameter()

        def reset_parameters(self):
            pass

        def initialize_parameters(self, input):
            pass
    with pytest.raises(RuntimeError, match="module Broken has not been fully initialized"):
        Broken()(pyctorch.ones(1, 2))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        pyctorch.nn.LazyConv2d(2, 3)(pyctorch.ones(2, 2))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        pyctorch.nn.LazyConv2d(4, 3, groups=2)(pyctorch.ones(1, 3, 5, 5))
