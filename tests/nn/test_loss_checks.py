"""nn.functional losses raise where torch raises (target dtypes and shapes, value ranges, label_smoothing,
one_hot's num_classes) and honour the legacy size_average/reduce flags with torch's warning."""
import warnings

import numpy as np
import pytest

import pyctorch as pt
from conftest import assert_same


def _run(lib, fn):
    """fn(lib)'s result or exception, and the warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            out = e
    return out, [str(x.message) for x in w]


def _compare(torch, fn, atol=1e-6):
    """fn(lib) under torch and pyctorch: same exception type and message, or the same values; same warnings."""
    exp, exp_w = _run(torch, fn)
    got, got_w = _run(pt, fn)
    assert_same(got, exp, 1e-5, atol, message=True)
    assert got_w == exp_w


def _x(lib, *shape, seed=0):
    return lib.tensor(np.random.RandomState(seed).randn(*shape).astype(np.float32))


def _p(lib, *shape, seed=1):
    return lib.tensor(np.random.RandomState(seed).rand(*shape).astype(np.float32))


_TARGETS = {
    "float_1": lambda lib: lib.tensor([1.0]),
    "float_5": lambda lib: lib.tensor([1.0, 0.0, 2.0, 3.0, 4.0]),
    "bool_5": lambda lib: lib.tensor([True, False, True, True, False]),
    "int32_5": lambda lib: lib.tensor([1, 0, 2, 3, 4], dtype=lib.int32),
    "uint8_5": lambda lib: lib.tensor([1, 0, 2, 3, 4], dtype=lib.uint8),
    "long_5": lambda lib: lib.tensor([1, 0, 2, 3, 4]),
    "long_1": lambda lib: lib.tensor([1]),
    "long_55": lambda lib: lib.zeros(5, 5, dtype=lib.long),
    "prob_55": lambda lib: _p(lib, 5, 5),
    "prob_54": lambda lib: _p(lib, 5, 4),
    "prob_55_double": lambda lib: _p(lib, 5, 5).double(),
}


@pytest.mark.parametrize("target", sorted(_TARGETS))
@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
def test_class_targets(fn, target):
    torch = pytest.importorskip("torch")
    _compare(torch, lambda lib: getattr(lib.nn.functional, fn)(_x(lib, 5, 5), _TARGETS[target](lib)))


@pytest.mark.parametrize("kwargs", [dict(label_smoothing=1.5), dict(label_smoothing=1.0), dict(label_smoothing=-0.1),
                                    dict(label_smoothing=0.3), dict(ignore_index=2), dict(ignore_index=-1)])
@pytest.mark.parametrize("target", ["long_5", "prob_55"])
def test_cross_entropy_options(target, kwargs):
    torch = pytest.importorskip("torch")
    _compare(torch, lambda lib: lib.nn.functional.cross_entropy(_x(lib, 5, 5), _TARGETS[target](lib), **kwargs))


def test_cross_entropy_weight_shape_with_probabilities():
    torch = pytest.importorskip("torch")
    _compare(torch, lambda lib: lib.nn.functional.cross_entropy(_x(lib, 5, 5), _p(lib, 5, 5),
                                                                weight=lib.ones(3)))
    _compare(torch, lambda lib: lib.nn.functional.cross_entropy(_x(lib, 5, 5), _p(lib, 5, 5),
                                                                weight=lib.arange(5.0)))


def test_cross_entropy_1d_probabilities():
    torch = pytest.importorskip("torch")
    _compare(torch, lambda lib: lib.nn.functional.cross_entropy(_x(lib, 5), _p(lib, 5)))
    _compare(torch, lambda lib: lib.nn.functional.cross_entropy(_x(lib, 5), _p(lib, 4)))


@pytest.mark.parametrize("case", ["input_high", "input_low", "target_high", "target_low", "ok", "shape", "nan"])
def test_binary_cross_entropy_ranges(case):
    torch = pytest.importorskip("torch")
    inp = {"input_high": [0.5, 1.5], "input_low": [-0.1, 0.5], "nan": [float("nan"), 0.5]}.get(case, [0.2, 0.7])
    tgt = {"target_high": [1.5, 0.0], "target_low": [0.0, -1.0], "shape": [1.0]}.get(case, [1.0, 0.0])
    _compare(torch, lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor(inp), lib.tensor(tgt)))


def test_binary_cross_entropy_range_always_checked():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        pt.nn.functional.binary_cross_entropy(pt.tensor([1.5]), pt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        pt.nn.functional.binary_cross_entropy(pt.tensor([0.5]), pt.tensor([2.0]))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        pt.nn.functional.cross_entropy(pt.zeros(2, 3), pt.tensor([0, 1]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        pt.nn.functional.nll_loss(pt.zeros(5, 5), pt.zeros(5))


@pytest.mark.parametrize("num_classes", [-2, -1, 0, 2, 3, 5])
def test_one_hot_num_classes(num_classes):
    torch = pytest.importorskip("torch")
    _compare(torch, lambda lib: lib.nn.functional.one_hot(lib.tensor([1, 2]), num_classes))


def test_one_hot_negative_num_classes_raises():
    with pytest.raises(RuntimeError):
        pt.nn.functional.one_hot(pt.tensor([1, 2]), -2)


# every functional loss with the legacy flags, (name, args builder)
_LOSSES = {
    "mse_loss": lambda lib: (_x(lib, 3, 4), _x(lib, 3, 4, seed=2)),
    "l1_loss": lambda lib: (_x(lib, 3, 4), _x(lib, 3, 4, seed=2)),
    "smooth_l1_loss": lambda lib: (_x(lib, 3, 4), _x(lib, 3, 4, seed=2)),
    "nll_loss": lambda lib: (_x(lib, 3, 4), lib.tensor([0, 3, 1])),
    "cross_entropy": lambda lib: (_x(lib, 3, 4), lib.tensor([0, 3, 1])),
    "binary_cross_entropy": lambda lib: (_p(lib, 3, 4), _p(lib, 3, 4, seed=3)),
    "binary_cross_entropy_with_logits": lambda lib: (_x(lib, 3, 4), _p(lib, 3, 4, seed=3)),
    "kl_div": lambda lib: (_x(lib, 3, 4), _p(lib, 3, 4, seed=3)),
    "cosine_embedding_loss": lambda lib: (_x(lib, 3, 4), _x(lib, 3, 4, seed=2), lib.tensor([1, -1, 1])),
    "margin_ranking_loss": lambda lib: (_x(lib, 3), _x(lib, 3, seed=2), lib.tensor([1.0, -1.0, 1.0])),
    "hinge_embedding_loss": lambda lib: (_x(lib, 3, 4), lib.tensor([1.0, -1.0, 1.0, 1.0])),
    "soft_margin_loss": lambda lib: (_x(lib, 3, 4), lib.ones(3, 4)),
    "multilabel_soft_margin_loss": lambda lib: (_x(lib, 3, 4), lib.ones(3, 4)),
    "multi_margin_loss": lambda lib: (_x(lib, 3, 4), lib.tensor([0, 3, 1])),
    "triplet_margin_loss": lambda lib: (_x(lib, 3, 4), _x(lib, 3, 4, seed=2), _x(lib, 3, 4, seed=3)),
    "poisson_nll_loss": lambda lib: (_x(lib, 3, 4), _p(lib, 3, 4, seed=3)),
}
_FLAGS = [dict(size_average=True), dict(size_average=False), dict(reduce=False), dict(reduce=True),
          dict(size_average=False, reduce=True), dict(size_average=True, reduce=False),
          dict(reduction="none", size_average=True), dict(reduction="sum", reduce=True)]


@pytest.mark.parametrize("flags", _FLAGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
@pytest.mark.parametrize("name", sorted(_LOSSES))
def test_legacy_reduction_flags(name, flags):
    torch = pytest.importorskip("torch")
    _compare(torch, lambda lib: getattr(lib.nn.functional, name)(*_LOSSES[name](lib), **flags), atol=1e-5)


def test_legacy_flags_change_the_result():
    a, b = pt.ones(2, 3), pt.zeros(2, 3)
    with pytest.warns(UserWarning, match=r"size_average and reduce args will be deprecated, please use "
                                         r"reduction='mean' instead."):
        assert pt.nn.functional.mse_loss(a, b, reduction="none", size_average=True).shape == ()
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert pt.nn.functional.l1_loss(a, b, size_average=False).item() == 6.0
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert pt.nn.MSELoss(reduce=False)(a, b).shape == (2, 3)


_MODULES = {"MSELoss": "mse_loss", "L1Loss": "l1_loss", "NLLLoss": "nll_loss", "CrossEntropyLoss": "cross_entropy",
            "BCELoss": "binary_cross_entropy", "BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
            "KLDivLoss": "kl_div", "SmoothL1Loss": "smooth_l1_loss", "SoftMarginLoss": "soft_margin_loss",
            "MultiLabelSoftMarginLoss": "multilabel_soft_margin_loss", "MultiMarginLoss": "multi_margin_loss",
            "HingeEmbeddingLoss": "hinge_embedding_loss", "MarginRankingLoss": "margin_ranking_loss",
            "CosineEmbeddingLoss": "cosine_embedding_loss", "TripletMarginLoss": "triplet_margin_loss",
            "PoissonNLLLoss": "poisson_nll_loss"}


@pytest.mark.parametrize("flags", _FLAGS[:6], ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
@pytest.mark.parametrize("name", sorted(_MODULES))
def test_loss_modules_legacy_flags(name, flags):
    torch = pytest.importorskip("torch")

    def run(lib):
        m = getattr(lib.nn, name)(**flags)
        return m(*_LOSSES[_MODULES[name]](lib)), m.reduction
    exp, exp_w = _run(torch, run)
    got, got_w = _run(pt, run)
    assert not isinstance(exp, Exception), exp
    assert_same(got, exp, 1e-5, 1e-5)  # (the loss, m.reduction)
    assert got_w == exp_w


# ---- Python-level functions given a list where a tensor is expected (Note [Python-level tensor arguments]) ----
def _sample(lib, kind):
    rs = np.random.RandomState(0)
    return {"f": lambda: lib.tensor(rs.rand(2, 3, 4, 4).astype(np.float32)),
            "m": lambda: lib.tensor(rs.rand(4, 4).astype(np.float32)),
            "v": lambda: lib.tensor(rs.rand(4).astype(np.float32)),
            "l": lambda: lib.tensor([0, 1, 2, 1]),
            "b": lambda: lib.tensor([True, False, True, True]),
            "c": lambda: lib.tensor(rs.rand(1, 4, 2, 2).astype(np.float32)),
            "s": lambda: lib.tensor(rs.rand(1, 2, 5).astype(np.float32)),
            "w": lambda: lib.tensor(rs.rand(3, 2, 2).astype(np.float32)),
            "k": lambda: lib.tensor(rs.rand(2, 2, 2, 2).astype(np.float32))}[kind]()


# argument patterns tried in order; the first that both libraries accept is the function's valid call
_CANDIDATES = [("m",), ("f",), ("v",), ("l",), ("m", "m"), ("v", "v"), ("f", "f"), ("m", "l"), ("m", "m", "m"),
               ("v", "v", "v"), ("m", 1), ("f", 2), ("m", 2, 2), ("f", 1, 1), ("f", [2, 2]), ("m", (2,)), ("m", 0),
               ("l", 5), ("m", "v"), ("b", "m", "m"), ("f", "f", "f"), ("m", [4]), ("c", 2), ("s", "w"),
               ("m", "v", "v"), ("c", "k"), ("s", (2,)), ("c", (2, 2)), ("m", "m", "v"), ("c", "c", "c"), ("v", 2)]
_SKIP = {"load", "save", "manual_seed", "set_default_dtype", "compile", "use_deterministic_algorithms",
         "set_printoptions", "seed", "initial_seed", "set_rng_state"}


def _build(lib, cand):
    return [_sample(lib, a) if isinstance(a, str) else a for a in cand]


def _exc(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return e
    return None


def _python_functions(ns):
    import inspect
    for name in sorted(dir(ns)):
        obj = getattr(ns, name)
        # (a function written in Python is held behind its __torch_function__ check, Note [Torch function check])
        python_level = inspect.isfunction(obj) or isinstance(obj, pt._C._torch_function_wrapper)
        if not name.startswith("_") and name not in _SKIP and python_level:
            yield name, obj


@pytest.mark.parametrize("ns", ["torch", "nn.functional", "special"])
def test_python_level_functions_reject_lists_like_torch(ns):
    """Each Python-level pyctorch function of the namespace, called with a valid call's tensors replaced one at a
    time by a nested list: the exception type is torch's (torch's own functions are C bindings raising TypeError)."""
    torch = pytest.importorskip("torch")
    import importlib
    pns = pt if ns == "torch" else importlib.import_module("pyctorch." + ns)
    tns = torch if ns == "torch" else importlib.import_module("torch." + ns)
    checked, bad = 0, []
    for name, pf in _python_functions(pns):
        tf = getattr(tns, name, None)
        if tf is None:
            continue
        cand = next((c for c in _CANDIDATES
                     if _exc(tf, _build(torch, c)) is None and _exc(pf, _build(pt, c)) is None), None)
        if cand is None:
            continue
        for i, a in enumerate(cand):
            if not isinstance(a, str):
                continue
            targs, pargs = _build(torch, cand), _build(pt, cand)
            targs[i], pargs[i] = targs[i].tolist(), pargs[i].tolist()
            te, pe = _exc(tf, targs), _exc(pf, pargs)
            checked += 1
            if type(te) is not type(pe):
                bad.append(f"{name} arg {i}: torch {type(te).__name__}({te}) pyctorch {type(pe).__name__}({pe})")
    assert not bad, "\n".join(bad)
    assert checked > {"torch": 60, "nn.functional": 40, "special": 3}[ns]


@pytest.mark.parametrize("call, message", [
    (lambda: pt.nn.functional.linear([[1.0]], pt.ones(1, 1)),
     "linear(): argument 'input' (position 1) must be Tensor, not list"),
    (lambda: pt.nn.functional.linear(pt.ones(1, 1), weight=[[1.0]]),
     "linear(): argument 'weight' must be Tensor, not list"),
    (lambda: pt.nn.functional.relu_([1.0]), "relu_(): argument 'input' (position 1) must be Tensor, not list"),
    (lambda: pt.nn.functional.nll_loss(pt.zeros(2, 2), [0, 1]),
     "nll_loss_nd(): argument 'target' (position 2) must be Tensor, not list"),
    (lambda: pt.conj([1.0]), "conj(): argument 'input' (position 1) must be Tensor, not list"),
    (lambda: pt.cdist(pt.ones(2, 2), (1, 2)), "cdist(): argument 'x2' (position 2) must be Tensor, not tuple"),
    (lambda: pt.meshgrid([1.0, 2.0]), "expected Tensor as element 0 in argument 0, but got float"),
    (lambda: pt.block_diag(pt.ones(1), [1.0]), "expected Tensor as element 1 in argument 0, but got list"),
    (lambda: pt.special.entr([1.0]), "special_entr(): argument 'input' (position 1) must be Tensor, not list"),
])
def test_non_tensor_argument_messages(call, message):
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value) == message


def test_optional_tensor_arguments_accept_none():
    x = pt.ones(2, 3)
    assert pt.nn.functional.linear(x, pt.ones(4, 3), None).shape == (2, 4)
    assert pt.nn.functional.linear(x, pt.ones(4, 3), bias=None).shape == (2, 4)
    assert pt.diff(pt.arange(4.0), prepend=None).tolist() == [1.0, 1.0, 1.0]
    assert pt.nn.functional.cross_entropy(x, pt.tensor([0, 2]), weight=None).shape == ()
    assert pt.nn.functional.batch_norm(x, None, None, training=True).shape == (2, 3)
    with pytest.raises(TypeError, match="argument 'running_mean' \\(position 2\\) must be Tensor, not list"):
        pt.nn.functional.batch_norm(x, [0.0] * 3, None, training=True)
    with pytest.raises(TypeError, match="argument 'bias' \\(position 3\\) must be Tensor, not list"):
        pt.nn.functional.linear(x, pt.ones(4, 3), [1.0, 2.0, 3.0, 4.0])


# Tensor methods written in Python: (method, self shape, shapes of the tensor arguments; None: int indices)
_METHOD_CASES = {
    "cross": ((3, 3), [(3, 3)]), "take_along_dim": ((3, 3), [None]), "addr": ((3, 3), [(3,), (3,)]),
    "addr_": ((3, 3), [(3,), (3,)]), "dist": ((3,), [(3,)]), "slice_scatter": ((3, 3), [(3, 3)]),
    "diagonal_scatter": ((3, 3), [(3,)]), "heaviside": ((3,), [(3,)]), "heaviside_": ((3,), [(3,)]),
    "nextafter": ((3,), [(3,)]), "nextafter_": ((3,), [(3,)]), "ldexp": ((3,), [(3,)]), "ldexp_": ((3,), [(3,)]),
    "logaddexp2": ((3,), [(3,)]), "prelu": ((2, 3), [(1,)]), "addbmm": ((2, 2), [(2, 2, 2), (2, 2, 2)]),
    "addbmm_": ((2, 2), [(2, 2, 2), (2, 2, 2)]),
}


@pytest.mark.parametrize("name", sorted(_METHOD_CASES))
def test_python_level_methods_reject_lists_like_torch(name):
    torch = pytest.importorskip("torch")
    shape, others = _METHOD_CASES[name]

    def make(lib, s):
        return (lib.tensor(np.random.RandomState(0).rand(*s).astype(np.float32)) if s is not None
                else lib.tensor([[0, 1, 2]] * 3))
    for k in range(len(others)):
        res = []
        for lib in (torch, pt):
            args = [make(lib, o) for o in others]
            args[k] = args[k].tolist()
            res.append(_exc(getattr(make(lib, shape), name), args))
        te, pe = res
        assert type(pe) is type(te), (name, k, te, pe)
        if isinstance(te, TypeError) and "must be Tensor" in str(te):
            assert str(pe) == str(te)


@pytest.mark.parametrize("call", [lambda: pt.cross(pt.ones(3, 3), pt.ones(3, 3)),
                                  lambda: pt.ones(3, 3).cross(pt.ones(3, 3)),
                                  lambda: pt.meshgrid(pt.ones(2), pt.ones(2)),
                                  lambda: pt.chain_matmul(pt.ones(2, 2), pt.ones(2, 2)),
                                  lambda: pt.cov(pt.ones(2, 1))])
def test_checked_functions_warn_at_the_callers_line(call):
    """The argument check adds a frame: the functions' warnings still name the caller's file."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call()
    assert w and all(x.filename == __file__ for x in w), [(x.filename, str(x.message)) for x in w]
