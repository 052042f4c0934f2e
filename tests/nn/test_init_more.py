"""nn.init against torch: every initializer's values for a seed, the deprecated spellings and their
warnings, the importable private helpers, and torch's argument errors."""

import numpy as np
import pytest

from conftest import HAVE_TORCH, requires_torch, to_numpy

import pyctorch
from pyctorch.nn import init

if HAVE_TORCH:
    import torch

# (initializer name, tensor shape, keyword arguments): one entry per interesting case
INIT_CASES = [
    ("uniform_", (4, 5), {"a": -2.0, "b": 3.0}),
    ("normal_", (3, 7), {"mean": 1.0, "std": 0.5}),
    ("trunc_normal_", (50,), {"std": 2.0, "a": -1.0, "b": 1.0}),
    ("trunc_normal_", (6, 6), {}),
    ("constant_", (2, 3), {"val": 0.25}),
    ("ones_", (2, 2), {}),
    ("zeros_", (3,), {}),
    ("eye_", (3, 5), {}),
    ("dirac_", (4, 2, 3), {}),
    ("dirac_", (6, 3, 3, 3), {"groups": 2}),
    ("dirac_", (2, 2, 3, 1, 2), {}),
    ("xavier_uniform_", (5, 4, 3), {"gain": 2.0}),
    ("xavier_normal_", (8, 3), {}),
    ("kaiming_uniform_", (6, 4, 2, 2), {"a": 0.2, "mode": "fan_out"}),
    ("kaiming_normal_", (5, 9), {"nonlinearity": "relu"}),
    ("orthogonal_", (6, 4), {}),
    ("orthogonal_", (3, 8), {"gain": 1.5}),
    ("orthogonal_", (4, 2, 3), {}),
    ("orthogonal_", (5, 5), {}),
    ("sparse_", (10, 4), {"sparsity": 0.3}),
    ("sparse_", (5, 3), {"sparsity": 0.5, "std": 1.0}),
]

# orthogonal_ factors in float64 where torch runs LAPACK in float32 (Note [orthogonal_ without
# linalg.qr]): equal to float32 rounding; everything else draws torch's exact numbers
ATOL = {"orthogonal_": 2e-6}


def _initialised(lib, name, shape, kwargs, seed=3):
    lib.manual_seed(seed)
    tensor = lib.empty(shape)
    out = getattr(lib.nn.init, name)(tensor, **kwargs)
    assert out is tensor
    return tensor


@requires_torch
@pytest.mark.parametrize("case", INIT_CASES, ids=lambda c: f"{c[0]}{c[1]}")
def test_values_match_torch_for_a_seed(case):
    name, shape, kwargs = case
    ours, theirs = (_initialised(lib, name, shape, kwargs) for lib in (pyctorch, torch))
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=0, atol=ATOL.get(name, 0))
    # the global generator advanced by the same amount
    assert pyctorch.rand(1).item() == torch.rand(1).item()


def test_orthogonal_rows_or_columns_are_orthonormal():
    for shape in [(7, 3), (3, 7)]:
        w = init.orthogonal_(pyctorch.empty(shape), gain=2.0) / 2.0
        gram = w.t().mm(w) if shape[0] > shape[1] else w.mm(w.t())
        np.testing.assert_allclose(to_numpy(gram), np.eye(3), atol=1e-6)


DEPRECATED = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
              "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]
DEPRECATED_ARGS = {"constant": (0.5,), "sparse": (0.5,)}


@pytest.mark.parametrize("old_name", DEPRECATED)
def test_deprecated_spelling_warns_and_initialises(old_name):
    shape = (4, 2, 3) if old_name == "dirac" else (4, 3)
    args = DEPRECATED_ARGS.get(old_name, ())
    pyctorch.manual_seed(1)
    with pytest.warns(FutureWarning, match=rf"`nn.init.{old_name}` is now deprecated in favor of "
                                           rf"`nn.init.{old_name}_`."):
        old = getattr(init, old_name)(pyctorch.empty(shape), *args)
    pyctorch.manual_seed(1)
    new = getattr(init, old_name + "_")(pyctorch.empty(shape), *args)
    np.testing.assert_array_equal(to_numpy(old), to_numpy(new))
    assert getattr(init, old_name).__name__ == old_name
    if HAVE_TORCH:
        assert old_name in torch.nn.init.__all__ and old_name in init.__all__


def test_private_helpers_are_importable_as_in_torch():
    from pyctorch.nn.init import (_calculate_correct_fan, _calculate_fan_in_and_fan_out, _no_grad_fill_,  # noqa: F401
                                  _no_grad_normal_, _no_grad_trunc_normal_, _no_grad_uniform_, _no_grad_zero_)
    w = pyctorch.empty(4, 3, 5)
    assert _calculate_fan_in_and_fan_out(w) == (15, 20)
    assert _calculate_correct_fan(w, "FAN_OUT") == 20
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]"):
        _calculate_correct_fan(w, "fan_avg")
    assert _no_grad_fill_(w, 2.0).sum().item() == 120.0


# (call, error type, torch's message)
ERROR_CASES = [
    (lambda lib: lib.nn.init.dirac_(lib.empty(3, 3)), ValueError, "Only tensors with 3, 4, or 5 dimensions"),
    (lambda lib: lib.nn.init.dirac_(lib.empty(3, 3, 3), groups=2), ValueError, "dim 0 must be divisible by groups"),
    (lambda lib: lib.nn.init.orthogonal_(lib.empty(3)), ValueError, "Only tensors with 2 or more dimensions"),
    (lambda lib: lib.nn.init.sparse_(lib.empty(3, 3, 3), 0.1), ValueError, "Only tensors with 2 dimensions"),
    (lambda lib: lib.nn.init.xavier_normal_(lib.empty(3)), ValueError, "Fan in and fan out can not be computed"),
]


@pytest.mark.parametrize("case", ERROR_CASES)
def test_argument_errors_match_torch(case):
    call, error, message = case
    for lib in (pyctorch, torch) if HAVE_TORCH else (pyctorch,):
        with pytest.raises(error, match=message):
            call(lib)


def test_warnings_as_torch():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(pyctorch.empty(0, 3))
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(pyctorch.empty(3), mean=10.0, std=1.0, a=-2.0, b=2.0)
