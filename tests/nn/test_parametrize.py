"""nn.utils.parametrize, nn.utils.parametrizations, the old weight_norm / spectral_norm hooks,
fusion, skip_init and functional_call against torch: forward values, gradients, state_dict keys
and values, for modules built from the same seed."""
import copy
import warnings

import numpy as np
import pytest

from conftest import HAVE_TORCH, assert_same, requires_torch, to_numpy

import pyctorch
from pyctorch.nn.utils import parametrize

if HAVE_TORCH:
    import torch

LIBS = ["pyctorch", "torch"]


def _lib(name):
    return pyctorch if name == "pyctorch" else torch


def _input(lib, shape, seed=7):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape).astype("float32"))


def _compare_modules(ours, theirs, x_shape, steps=1, atol=2e-6):
    """Same outputs and parameter gradients over `steps` calls, then the same state_dict."""
    for step in range(steps):
        outs = []
        for lib, module in ((pyctorch, ours), (torch, theirs)):
            module.zero_grad()
            out = module(_input(lib, x_shape, seed=step))
            (out * out).sum().backward()
            outs.append(out)
        assert_same(*outs, 1e-5, atol)
    grads = [{n: p.grad for n, p in m.named_parameters()} for m in (ours, theirs)]
    assert_same(grads[0], grads[1], 1e-5, atol * 10)
    assert_same(ours.state_dict(), theirs.state_dict(), 1e-5, atol)


# ---------------------------------------------------------------- user parametrizations

def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _scaled(lib):
    class Scaled(lib.nn.Module):
        """Two originals: a matrix and a scalar gain."""

        def forward(self, X, gain):
            return X * gain

        def right_inverse(self, W):
            return W, lib.ones((), dtype=W.dtype)
    return Scaled()


def _double(lib):
    class Double(lib.nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, W):
            return W / 2
    return Double()


# (label, parametrizations registered in order on the weight of a 4x4 Linear)
USER_CASES = [
    ("symmetric", [_symmetric]),
    ("two-originals", [_scaled]),
    ("chained", [_symmetric, _double]),
]


@requires_torch
@pytest.mark.parametrize("case", USER_CASES, ids=lambda c: c[0])
def test_user_parametrizations_match_torch(case):
    _, makers = case
    modules = []
    for lib in (pyctorch, torch):
        lib.manual_seed(0)
        m = lib.nn.Linear(4, 4)
        for make in makers:
            lib.nn.utils.parametrize.register_parametrization(m, "weight", make(lib))
        assert type(m).__name__ == "ParametrizedLinear"
        assert lib.nn.utils.parametrize.type_before_parametrizations(m) is lib.nn.Linear
        modules.append(m)
    _compare_modules(*modules, (3, 4))
    # assigning runs the right inverses; removing keeps the parametrized value
    for lib, m in zip((pyctorch, torch), modules):
        with lib.no_grad():
            m.weight = _input(lib, (4, 4), seed=11)
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
        assert type(m) is lib.nn.Linear and not lib.nn.utils.parametrize.is_parametrized(m)
    assert_same(modules[0].weight, modules[1].weight, 1e-5, 2e-6)
    assert list(modules[0].state_dict()) == list(modules[1].state_dict())


def test_original_keeps_its_identity_and_optimizer_state():
    m = pyctorch.nn.Linear(3, 3)
    weight = m.weight
    parametrize.register_parametrization(m, "weight", _symmetric(pyctorch))
    assert m.parametrizations.weight.original is weight
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert m.weight is weight


def test_cached_computes_once():
    calls = []

    class Counting(pyctorch.nn.Module):
        def forward(self, X):
            calls.append(1)
            return X

    m = pyctorch.nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", Counting())
    calls.clear()
    with parametrize.cached():
        assert m.weight is m.weight
    assert len(calls) == 1
    m.weight, m.weight
    assert len(calls) == 3


def test_transfer_parametrizations_and_params():
    source = pyctorch.nn.Linear(3, 3)
    parametrize.register_parametrization(source, "weight", _symmetric(pyctorch))
    target = parametrize.transfer_parametrizations_and_params(source, pyctorch.nn.Linear(3, 3))
    assert parametrize.is_parametrized(target, "weight")
    assert target.parametrizations.weight.original is source.parametrizations.weight.original
    assert_same(target.weight, source.weight, 1e-5, 2e-6)


# (what is wrong, call, error type, torch's message start)
PARAMETRIZE_ERRORS = [
    ("no such tensor", lambda lib, m: lib.nn.utils.parametrize.register_parametrization(m, "nope", _double(lib)),
     ValueError, "Module 'Linear"),
    ("shape change", lambda lib, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", lib.nn.Flatten(0)), ValueError, "Registering a parametrization may not change the shape"),
    ("not parametrized", lambda lib, m: lib.nn.utils.parametrize.remove_parametrizations(m, "weight"),
     ValueError, "Module Linear"),
    ("pickling", lambda lib, m: (lib.nn.utils.parametrize.register_parametrization(m, "weight", _double(lib)),
                                 m.__getstate__()), RuntimeError, "Serialization of parametrized modules"),
]


@pytest.mark.parametrize("case", PARAMETRIZE_ERRORS, ids=lambda c: c[0])
def test_parametrize_errors_match_torch(case):
    _, call, error, message = case
    for lib in (pyctorch, torch) if HAVE_TORCH else (pyctorch,):
        with pytest.raises(error, match=message):
            call(lib, lib.nn.Linear(3, 3))


def test_deepcopy_of_a_parametrized_module():
    m = pyctorch.nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", _symmetric(pyctorch))
    clone = copy.deepcopy(m)
    assert type(clone).__name__ == "ParametrizedLinear"
    assert clone.parametrizations.weight.original is not m.parametrizations.weight.original
    assert_same(clone.weight, m.weight, 1e-5, 2e-6)


# ---------------------------------------------------------------- parametrizations.*

def _conv(lib):
    return lib.nn.Conv2d(2, 3, 3)


def _conv_t(lib):
    return lib.nn.ConvTranspose2d(3, 2, 2)


def _linear(lib):
    return lib.nn.Linear(5, 4)


def _wide_linear(lib):
    return lib.nn.Linear(6, 3)


def _tall_linear(lib):
    return lib.nn.Linear(3, 6)


def _square_linear(lib):
    return lib.nn.Linear(4, 4)


def _batched_matrices(lib):
    """A module with a batch of two 5x3 matrices as its weight: forward(x) = x @ weight."""
    class BatchedMatmul(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.randn(2, 5, 3))

        def forward(self, x):
            return x @ self.weight
    return BatchedMatmul()


# (label, module factory, input shape, how to parametrize, forward calls)
PARAMETRIZATION_CASES = [
    ("weight_norm-linear", _linear, (2, 5), lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m), 1),
    ("weight_norm-conv-dim1", _conv, (1, 2, 5, 5),
     lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=1), 1),
    ("weight_norm-dim-none", _linear, (2, 5), lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=None), 1),
    ("spectral_norm-linear", _linear, (2, 5), lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m), 3),
    ("spectral_norm-conv", _conv, (1, 2, 5, 5),
     lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=2), 2),
    ("spectral_norm-conv-transpose", _conv_t, (1, 3, 3, 3),
     lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m), 2),
    ("spectral_norm-bias-1d", _linear, (2, 5),
     lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m, name="bias"), 1),
    ("orthogonal-matrix_exp", _square_linear, (2, 4), lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m), 1),
    ("orthogonal-householder-wide", _wide_linear, (2, 6),
     lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m), 1),
    ("orthogonal-householder-tall", _tall_linear, (2, 3),
     lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m), 1),
    ("orthogonal-matrix_exp-tall", _tall_linear, (2, 3),
     lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="matrix_exp"), 1),
    ("orthogonal-batched-householder", _batched_matrices, (2, 4, 5),
     lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m), 1),
    ("orthogonal-batched-matrix_exp", _batched_matrices, (2, 4, 5),
     lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="matrix_exp"), 1),
    ("orthogonal-householder-no-trivialization", _wide_linear, (2, 6),
     lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m, use_trivialization=False), 1),
    ("orthogonal-batched-householder-no-trivialization", _batched_matrices, (2, 4, 5),
     lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m, use_trivialization=False), 1),
    ("spectral_norm-batched-dim2", _batched_matrices, (2, 4, 5),
     lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m, dim=2), 2),
]


def _parametrized_pair(make, parametrize_fn):
    modules = []
    for lib in (pyctorch, torch):
        lib.manual_seed(0)
        m = make(lib)
        parametrize_fn(lib, m)
        modules.append(m)
    return modules


@requires_torch
@pytest.mark.parametrize("case", PARAMETRIZATION_CASES, ids=lambda c: c[0])
def test_parametrizations_match_torch(case):
    _, make, x_shape, parametrize_fn, steps = case
    ours, theirs = _parametrized_pair(make, parametrize_fn)
    # orthogonal factors in float64 (Note [orthogonal_ without linalg.qr]); the rest matches to rounding
    _compare_modules(ours, theirs, x_shape, steps=steps, atol=2e-5)
    ours.eval(), theirs.eval()
    assert_same(ours(_input(pyctorch, x_shape)), theirs(_input(torch, x_shape)), 1e-5, 2e-5)


@requires_torch
def test_orthogonal_assignment_and_result_is_orthogonal():
    ours, theirs = _parametrized_pair(_tall_linear, lambda lib, m: lib.nn.utils.parametrizations.orthogonal(m))
    for lib, m in ((pyctorch, ours), (torch, theirs)):
        lib.manual_seed(4)
        with lib.no_grad():
            m.weight = lib.nn.init.orthogonal_(lib.empty(6, 3))
    assert_same(ours.weight, theirs.weight, 1e-5, 2e-5)
    np.testing.assert_allclose(to_numpy(ours.weight.mT @ ours.weight), np.eye(3), atol=1e-5)


def test_orthogonal_without_trivialization_refuses_assignment_for_matrix_exp():
    m = pyctorch.nn.utils.parametrizations.orthogonal(pyctorch.nn.Linear(3, 3), use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m.weight = pyctorch.eye(3)


def test_orthogonal_cayley_is_reported_missing():
    m = pyctorch.nn.utils.parametrizations.orthogonal(pyctorch.nn.Linear(3, 3), orthogonal_map="cayley")
    with pytest.raises(NotImplementedError, match="linalg.solve"):
        m.weight


@requires_torch
def test_weight_norm_loads_old_style_state_dict():
    """A state_dict with weight_g / weight_v (old nn.utils.weight_norm) loads into the parametrization."""
    old = []
    for lib in (pyctorch, torch):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            old.append(lib.nn.utils.weight_norm(_linear(lib)).state_dict())
    assert list(old[0]) == list(old[1]) == ["bias", "weight_g", "weight_v"]
    new = []
    for lib, sd in ((pyctorch, old[0]), (torch, old[1])):
        m = lib.nn.utils.parametrizations.weight_norm(_linear(lib))
        m.load_state_dict(dict(sd))
        new.append(m)
    assert_same(new[0].weight, new[1].weight, 1e-5, 2e-6)
    assert_same(new[0].parametrizations.weight.original0, old[0]["weight_g"], 1e-5, 2e-6)


# ---------------------------------------------------------------- the old hooks

# (label, apply, remove, the state_dict keys torch has)
OLD_HOOK_CASES = [
    ("weight_norm", lambda lib, m: lib.nn.utils.weight_norm(m), lambda lib, m: lib.nn.utils.remove_weight_norm(m),
     ["bias", "weight_g", "weight_v"]),
    ("weight_norm-dim-none", lambda lib, m: lib.nn.utils.weight_norm(m, dim=None),
     lambda lib, m: lib.nn.utils.remove_weight_norm(m), ["bias", "weight_g", "weight_v"]),
    ("spectral_norm", lambda lib, m: lib.nn.utils.spectral_norm(m, n_power_iterations=2),
     lambda lib, m: lib.nn.utils.remove_spectral_norm(m), ["bias", "weight_orig", "weight_u", "weight_v"]),
]


@requires_torch
@pytest.mark.parametrize("case", OLD_HOOK_CASES, ids=lambda c: c[0])
def test_old_hooks_match_torch(case):
    _, apply, remove, keys = case
    modules = []
    for lib in (pyctorch, torch):
        lib.manual_seed(0)
        m = _linear(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            apply(lib, m)
        modules.append(m)
        assert [str(w.message) for w in caught if w.category is FutureWarning] == \
            (["`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`."]
             if "weight_g" in keys else [])
    assert list(modules[0].state_dict()) == keys
    _compare_modules(*modules, (2, 5), steps=3)
    for lib, m in zip((pyctorch, torch), modules):
        remove(lib, m)
        assert list(m.state_dict()) == ["bias", "weight"] or list(m.state_dict()) == ["weight", "bias"]
    assert_same(modules[0].weight, modules[1].weight, 1e-5, 2e-6)


def test_old_hooks_refuse_a_second_registration():
    m = pyctorch.nn.utils.spectral_norm(pyctorch.nn.Linear(3, 3))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        pyctorch.nn.utils.spectral_norm(m)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        pyctorch.nn.utils.remove_weight_norm(m)


# ---------------------------------------------------------------- fusion

def _trained_bn(lib, bn):
    """Give a BatchNorm non-trivial running statistics and affine parameters."""
    rng = np.random.default_rng(3)
    with lib.no_grad():
        bn.running_mean.copy_(lib.tensor(rng.standard_normal(bn.num_features).astype("float32")))
        bn.running_var.copy_(lib.tensor(rng.uniform(0.5, 2.0, bn.num_features).astype("float32")))
        if bn.weight is not None:
            bn.weight.copy_(lib.tensor(rng.standard_normal(bn.num_features).astype("float32")))
            bn.bias.copy_(lib.tensor(rng.standard_normal(bn.num_features).astype("float32")))
    return bn.eval()


# (label, layer factory, bn factory, fuse, input shape)
FUSION_CASES = [
    ("conv2d", lambda lib: lib.nn.Conv2d(2, 3, 3), lambda lib: lib.nn.BatchNorm2d(3),
     lambda lib, c, b: lib.nn.utils.fuse_conv_bn_eval(c, b), (1, 2, 5, 5)),
    ("conv1d-no-bias-no-affine", lambda lib: lib.nn.Conv1d(2, 3, 3, bias=False),
     lambda lib: lib.nn.BatchNorm1d(3, affine=False), lambda lib, c, b: lib.nn.utils.fuse_conv_bn_eval(c, b),
     (2, 2, 6)),
    ("conv-transpose", lambda lib: lib.nn.ConvTranspose2d(2, 3, 2), lambda lib: lib.nn.BatchNorm2d(3),
     lambda lib, c, b: lib.nn.utils.fuse_conv_bn_eval(c, b, transpose=True), (1, 2, 3, 3)),
    ("linear", lambda lib: lib.nn.Linear(4, 3), lambda lib: lib.nn.BatchNorm1d(3),
     lambda lib, c, b: lib.nn.utils.fuse_linear_bn_eval(c, b), (5, 4)),
    ("linear-bn1", lambda lib: lib.nn.Linear(4, 3, bias=False), lambda lib: lib.nn.BatchNorm1d(1),
     lambda lib, c, b: lib.nn.utils.fusion.fuse_linear_bn_eval(c, b), (5, 1, 4)),
]


@requires_torch
@pytest.mark.parametrize("case", FUSION_CASES, ids=lambda c: c[0])
def test_fusion_matches_torch_and_the_unfused_pair(case):
    _, make_layer, make_bn, fuse, x_shape = case
    fused = []
    for lib in (pyctorch, torch):
        lib.manual_seed(0)
        layer, bn = make_layer(lib).eval(), _trained_bn(lib, make_bn(lib))
        f = fuse(lib, layer, bn)
        x = _input(lib, x_shape)
        assert_same(f(x), bn(layer(x)), 1e-5, 1e-5)
        fused.append(f)
    assert_same(fused[0].weight, fused[1].weight, 1e-5, 2e-6)
    assert_same(fused[0].bias, fused[1].bias, 1e-5, 2e-6)


def test_fusion_refuses_training_mode():
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        pyctorch.nn.utils.fuse_conv_bn_eval(pyctorch.nn.Conv2d(1, 1, 1), pyctorch.nn.BatchNorm2d(1))


# ---------------------------------------------------------------- skip_init, functional_call

def test_skip_init_leaves_the_generator_alone():
    pyctorch.manual_seed(0)
    m = pyctorch.nn.utils.skip_init(pyctorch.nn.Linear, 4, 3)
    assert type(m) is pyctorch.nn.Linear and tuple(m.weight.shape) == (3, 4)
    after = pyctorch.rand(1).item()
    pyctorch.manual_seed(0)
    assert pyctorch.rand(1).item() == after
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        pyctorch.nn.utils.skip_init(pyctorch.nn.ReLU)


class _Tied:
    """A module whose two Linear layers share one weight, in either library."""

    def __new__(cls, lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Linear(3, 3))
        m[1].weight = m[0].weight
        return m


# (label, replacement names, options)
FUNCTIONAL_CASES = [
    ("one-param", ["0.bias"], {}),
    ("tied-given-once", ["0.weight"], {}),
    ("untied", ["0.weight"], {"tie_weights": False}),
    ("all-strict-untied", ["0.weight", "0.bias", "1.weight", "1.bias"], {"strict": True, "tie_weights": False}),
]


@requires_torch
@pytest.mark.parametrize("case", FUNCTIONAL_CASES, ids=lambda c: c[0])
def test_functional_call_matches_torch(case):
    _, names, options = case
    import pyctorch.func
    import torch.func
    outs = []
    for lib in (pyctorch, torch):
        m = _Tied(lib)
        before = {k: v.clone() for k, v in m.state_dict().items()}
        values = {name: _input(lib, tuple(m.get_parameter(name).shape), seed=i).requires_grad_()
                  for i, name in enumerate(names)}
        out = lib.func.functional_call(m, values, (_input(lib, (2, 3)),), **options)
        out.sum().backward()
        outs.append((out, [values[n].grad for n in names]))
        for k, v in m.state_dict().items():  # the module's own tensors are back
            assert (v == before[k]).all()
    assert_same(outs[0][0], outs[1][0], 1e-5, 2e-6)
    for g0, g1 in zip(outs[0][1], outs[1][1]):
        assert_same(g0, g1, 1e-5, 2e-6)


def test_functional_call_errors_and_deprecated_spelling():
    import pyctorch.func
    m = _Tied(pyctorch)
    x = _input(pyctorch, (2, 3))
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\): 'nope'.\n\tMissing key\(s\)"):
        pyctorch.func.functional_call(m, {"nope": x}, x, strict=True)
    with pytest.raises(ValueError, match="which are tied"):
        pyctorch.func.functional_call(m, {"0.weight": x, "1.weight": x.clone()}, x)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        pyctorch.func.functional_call(m, ({"0.bias": x[0]}, {"0.bias": x[1]}), x)
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        pyctorch.nn.utils.stateless.functional_call(m, {}, x)
