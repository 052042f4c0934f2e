"""Legacy spellings old scripts use, compared with torch: the typed tensor classes, Tensor.type with them,
autograd.Variable, the module-level in-place functions, Module backward hooks (legacy, full, full pre)."""
import warnings

import numpy as np
import pytest

import pyctorch as pt
from comparison import assert_same

_LEGACY = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16",
           "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "CharTensor": "int8",
           "ByteTensor": "uint8", "BoolTensor": "bool"}


def _outcome(lib, fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(lib)
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            return ("raise", type(e), str(e)), [str(x.message) for x in w]
    return ("ok", r), [str(x.message) for x in w]


@pytest.mark.parametrize("name", sorted(_LEGACY))
def test_legacy_type_dtype_and_constructors(name):
    cls = getattr(pt, name)
    assert str(cls.dtype) == "torch." + _LEGACY[name]
    assert cls.__name__ == name and cls.__module__ == "pyctorch"
    t = cls([1, 0, 2])
    assert t.dtype == cls.dtype and t.shape == (3,)
    assert cls(2, 3).shape == (2, 3) and cls(2, 3).dtype == cls.dtype
    assert cls().shape == (0,)
    assert cls(pt.Size([4])).shape == (4,)
    assert isinstance(cls([1]), cls)
    assert isinstance(pt.ones(2, dtype=cls.dtype), cls)
    assert not isinstance(pt.ones(2, dtype=pt.float32 if cls.dtype != pt.float32 else pt.float64), cls)
    assert not isinstance([1.0], cls)
    assert pt.ones(2).type(cls).dtype == cls.dtype
    assert pt.ones(2).type("torch." + name).dtype == cls.dtype


_CASES = {
    "data": lambda lib, T: T([[1, 2], [3, 4]]),
    "float_data_to_int": lambda lib, T: T([1.7, -1.7, 0.2]),
    "bool_data": lambda lib, T: T([True, False]),
    "numpy": lambda lib, T: T(np.array([1.5, 2.0])),
    "tuple_is_data": lambda lib, T: T((2, 3)),
    "empty": lambda lib, T: T(),
    "size_obj_empty": lambda lib, T: T(lib.Size([])),
    "same_type_alias": lambda lib, T: T(lib.ones(3, dtype=T.dtype)),
    "other_type": lambda lib, T: T(lib.ones(3, dtype=lib.float64 if T.dtype != lib.float64 else lib.float32)),
    "scalar": lambda lib, T: T(3.5),
    "negative": lambda lib, T: T(-1),
    "cuda": lambda lib, T: T(2, device="cuda"),
    "cpu": lambda lib, T: T([1], device="cpu"),
}
_UNINITIALIZED = {"size_obj_empty"}  # made from a size: the values are whatever the memory held


@pytest.mark.parametrize("case", sorted(_CASES))
@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "BoolTensor", "HalfTensor", "ByteTensor"])
def test_legacy_constructor_matches_torch(name, case):
    torch = pytest.importorskip("torch")
    (exp, _), (got, _) = (_outcome(lib, lambda lib: _CASES[case](lib, getattr(lib, name))) for lib in (torch, pt))
    if exp[0] == "raise":
        assert got[0] == "raise", f"torch raised {exp[1].__name__}: {exp[2]}; pyctorch returned {got[1]!r}"
        assert got[1] is exp[1]
        if case in ("other_type", "scalar", "negative"):
            assert got[2] == exp[2]
        return
    assert got[0] == "ok", got
    assert type(got[1]) is pt.Tensor
    assert_same(got[1], exp[1], exact=True, values=case not in _UNINITIALIZED)


def test_legacy_constructor_sizes_and_alias_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, pt):
        x = lib.ones(3)
        y = lib.FloatTensor(x)
        assert y.data_ptr() == x.data_ptr()
        y[0] = 5
        assert x[0].item() == 5
    for args, kw in (((2, 3), {}), ((), {"size": (4,)}), (([2, 1],), {"size_type": True})):
        if kw.pop("size_type", False):
            got, exp = pt.FloatTensor(pt.Size(args[0])), torch.FloatTensor(torch.Size(args[0]))
        else:
            got, exp = pt.FloatTensor(*args, **kw), torch.FloatTensor(*args, **kw)
        assert type(got) is pt.Tensor
        assert_same(got, exp, exact=True, values=False)


@pytest.mark.parametrize("name", sorted(_LEGACY))
def test_isinstance_matches_torch(name):
    torch = pytest.importorskip("torch")
    for dtype in _LEGACY.values():
        for lib in (torch, pt):
            t = lib.zeros(2, dtype=getattr(lib, dtype))
            res = [isinstance(t, getattr(lib, name)), isinstance(lib.nn.Parameter(t.float()), getattr(lib, name))]
            if lib is torch:
                exp = res
            else:
                assert res == exp, (name, dtype)


@pytest.mark.parametrize("arg", ["cls", "str", "dtype", "Tensor", "bad", "none"])
def test_tensor_type_matches_torch(arg):
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor([1.5, -2.0], dtype=lib.float64)
        a = {"cls": lib.IntTensor, "str": "torch.ShortTensor", "dtype": lib.bfloat16, "Tensor": lib.Tensor,
             "bad": "foo", "none": None}[arg]
        return x.type() if a is None else x.type(a)
    (exp, _), (got, _) = _outcome(torch, run), _outcome(pt, run)
    if exp[0] == "raise":
        assert got[0] == "raise" and got[1] is exp[1] and got[2] == exp[2]
    elif isinstance(exp[1], str):
        assert got[1] == exp[1]
    else:
        assert type(got[1]) is pt.Tensor
        assert_same(got[1], exp[1], exact=True)


# ---- autograd.Variable ----
def test_variable_matches_torch():
    torch = pytest.importorskip("torch")

    def run(lib):
        from importlib import import_module
        Variable = import_module(lib.__name__ + ".autograd").Variable
        x = lib.tensor([1.0, 2.0])
        v = Variable(x, requires_grad=True)
        (v * v).sum().backward()
        w = Variable(x * 2)
        return (v.requires_grad, v is x, v.data_ptr() == x.data_ptr(), v.grad.tolist(), w.requires_grad,
                isinstance(x, Variable), isinstance(1, Variable), tuple(Variable().shape), str(Variable().dtype),
                Variable.__module__.split(".", 1)[1], Variable(x, volatile=True).requires_grad)
    (exp, exp_w), (got, got_w) = _outcome(torch, run), _outcome(pt, run)
    assert got == exp
    assert got_w == exp_w
    for lib in (torch, pt):
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            lib.autograd.Variable([1.0])


def test_variable_detaches_history():
    a = pt.ones(2, requires_grad=True)
    v = pt.autograd.Variable(a * 2, requires_grad=True)
    assert v.grad_fn is None and v.is_leaf and v.requires_grad
    assert isinstance(v, pt.autograd.Variable)


# ---- module-level in-place functions ----
_INPLACE_ARGS = {
    "addmv_": lambda lib: (lib.ones(2), lib.ones(2, 3), lib.ones(3)),
    "clamp_": lambda lib: (lib.linspace(0, 1, 4), 0.2, 0.7), "clip_": lambda lib: (lib.linspace(0, 1, 4), 0.2, 0.7),
    "fill_": lambda lib: (lib.zeros(3), 2.5), "clamp_min_": lambda lib: (lib.linspace(0, 1, 4), 0.4),
    "clamp_max_": lambda lib: (lib.linspace(0, 1, 4), 0.4), "gcd_": lambda lib: (lib.tensor([4, 6]), lib.tensor([6, 4])),
    "lcm_": lambda lib: (lib.tensor([4, 6]), lib.tensor([6, 4])),
    "index_put_": lambda lib: (lib.zeros(3), (lib.tensor([0, 2]),), lib.tensor([1.0, 2.0])),
    "ldexp_": lambda lib: (lib.ones(2), lib.tensor([1, 2])), "xlogy_": lambda lib: (lib.tensor([0.5, 2.0]), 3.0),
    "resize_as_": lambda lib: (lib.zeros(2), lib.zeros(2, 2)), "as_strided_": lambda lib: (lib.zeros(4), (2,), (2,)),
    "threshold_": lambda lib: (lib.linspace(-1, 1, 5), 0.0, 9.0),
    "logit_": lambda lib: (lib.tensor([0.2, 0.7]),), "nan_to_num_": lambda lib: (lib.tensor([float("nan"), 1.0]),),
    "celu_": lambda lib: (lib.linspace(-1, 1, 5),), "selu_": lambda lib: (lib.linspace(-1, 1, 5),),
    "rrelu_": None, "dropout_": None, "alpha_dropout_": None, "feature_alpha_dropout_": None,
    "feature_dropout_": None, "resize_as_sparse_": None, "embedding_renorm_": None,
}


def _torch_inplace_names(torch):
    return sorted(n for n in dir(torch) if n.endswith("_") and not n.startswith("_") and callable(getattr(torch, n)))


def test_module_inplace_functions_exist_for_every_method():
    """Every name of torch's namespace ending in '_' whose in-place Tensor method pyctorch has is a function."""
    torch = pytest.importorskip("torch")
    missing = [n for n in _torch_inplace_names(torch) if n in pt.Tensor.__dict__ and not hasattr(pt, n)]
    assert not missing
    assert len([n for n in _torch_inplace_names(torch) if hasattr(pt, n)]) > 60


def test_module_inplace_functions_match_torch():
    torch = pytest.importorskip("torch")
    checked = 0
    for name in _torch_inplace_names(torch):
        if not hasattr(pt, name) or (name in _INPLACE_ARGS and _INPLACE_ARGS[name] is None):
            continue
        make = _INPLACE_ARGS.get(name, lambda lib: (lib.linspace(0.1, 0.9, 5),))
        (exp, _), (got, _) = (_outcome(lib, lambda lib: (lambda a: (getattr(lib, name)(*a), a[0]))(make(lib)))
                              for lib in (torch, pt))
        assert exp[0] == got[0] == "ok", (name, exp, got)
        assert got[1][0] is got[1][1], name  # in place: the first argument itself comes back
        assert type(got[1][0]) is pt.Tensor
        assert_same(got[1][0], exp[1][0], exact=True, values=False)
        if name == "resize_as_":  # the grown part is uninitialized memory
            continue
        np.testing.assert_allclose(got[1][0].float().numpy(), exp[1][0].float().numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=name)
        checked += 1
    assert checked > 50


def test_module_inplace_function_rejects_non_tensor():
    with pytest.raises(TypeError, match=r"sin_\(\): argument 'input' \(position 1\) must be Tensor, not list"):
        pt.sin_([1.0])
    x = pt.tensor([0.0, 1.0])
    assert pt.exp_(x) is x
    np.testing.assert_allclose(x.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


# ---- module backward hooks ----
def _hook_log(lib, kind):
    log = []
    lst = lambda gs: [None if g is None else np.round(np.asarray(g.tolist()), 5).tolist() for g in gs]  # noqa: E731

    class Two(lib.nn.Module):
        def forward(self, a, b, k=2.0):
            return a * b * k, (a + b).sum()
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([4.0, 5.0, 6.0], requires_grad=(kind == "both_grad"))
    m = Two()
    if kind in ("full", "both_grad", "pre"):
        if kind == "pre":
            m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", lst(go))) or (go[0] * 2, go[1]))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", lst(gi), lst(go))) or
                                      tuple(None if g is None else g + 1 for g in gi))
        x, y = m(a, b, 3.0)
        (x.sum() + y * 3).backward()
        log.append(lst([a.grad, b.grad]))
    elif kind == "nonarg":
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", lst(gi), lst(go))))
        x, y = m(a, 2.0)
        x.sum().backward()
    elif kind == "bad_count":
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
        x, y = m(a, b)
        x.sum().backward()
    elif kind == "no_input_grad":
        lin = lib.nn.Linear(3, 1)
        lin.register_full_backward_hook(lambda mod, gi, go: log.append(("noin", gi, [tuple(g.shape) for g in go])))
        lin(lib.ones(2, 3)).sum().backward()
    elif kind == "legacy":
        s = lib.nn.Sigmoid()
        s.register_backward_hook(lambda mod, gi, go: log.append(("legacy", lst(gi), lst(go))))
        s(a).sum().backward()
        log.append(lst([a.grad]))
    elif kind == "legacy_two_outputs":
        m.register_backward_hook(lambda mod, gi, go: log.append(("legacy", len(gi), lst(go))))
        x, y = m(a, b)
        (x.sum() + y).backward()
    elif kind == "mixed":
        m.register_backward_hook(lambda *args: None)
        m.register_full_backward_hook(lambda *args: None)
    elif kind == "remove":
        h = m.register_full_backward_hook(lambda mod, gi, go: log.append("called"))
        h.remove()
        m(a, b)[0].sum().backward()
        log.append(lst([a.grad]))
    return log


@pytest.mark.parametrize("kind", ["full", "both_grad", "pre", "nonarg", "bad_count", "no_input_grad", "legacy",
                                  "legacy_two_outputs", "mixed", "remove"])
def test_module_backward_hooks_match_torch(kind):
    torch = pytest.importorskip("torch")
    (exp, exp_w), (got, got_w) = _outcome(torch, lambda lib: _hook_log(lib, kind)), \
        _outcome(pt, lambda lib: _hook_log(lib, kind))
    if exp[0] == "raise":
        assert got[0] == "raise" and got[1] is exp[1] and got[2] == exp[2], got
    else:
        assert got == exp
    assert got_w == exp_w


def test_full_backward_hook_values():
    """Hand-computed: d/da (sum(a*b*3) + 3*sum(a+b)) = 3b + 3; the hook adds 1 to grad_input."""
    log = _hook_log(pt, "full")
    assert log[0] == ("full", [[15.0, 18.0, 21.0], [0.0, 0.0, 0.0], None], [[1.0, 1.0, 1.0], 3.0])
    assert log[-1][0] == [16.0, 19.0, 22.0]


# ---- nn.utils.prune ----
def _prune_log(lib):
    import importlib
    prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
    nn, log = lib.nn, []

    def show(m, name="weight"):
        mask = getattr(m, name + "_mask", None)
        return (sorted(n for n, _ in m.named_parameters()), sorted(n for n, _ in m.named_buffers()),
                None if mask is None else mask.tolist())
    lib.manual_seed(0)
    m = nn.Linear(4, 3)
    prune.random_unstructured(m, "weight", amount=0.5)
    log.append(show(m))
    prune.random_structured(m, "weight", amount=1, dim=0)
    log.append(show(m))
    prune.l1_unstructured(m, "bias", amount=1)
    log.append(show(m, "bias"))
    log.append([type(h).__name__ for h in m._forward_pre_hooks.values()])
    log.append([type(h).__name__ for h in next(iter(m._forward_pre_hooks.values()))])
    x = lib.randn(2, 4)
    log.append(m(x).tolist() == (x @ (m.weight_orig * m.weight_mask).t() + m.bias_orig * m.bias_mask).tolist())
    log.append(prune.is_pruned(m))
    prune.remove(m, "weight")
    log.append((show(m), prune.is_pruned(m), type(m.weight).__name__, m.weight.tolist()))
    prune.remove(m, "bias")
    log.append(prune.is_pruned(m))
    c = nn.Conv2d(2, 4, 3)
    prune.ln_structured(c, "weight", amount=0.5, n=2, dim=0)
    log.append([r[0][0][0] for r in show(c)[2]])
    prune.ln_structured(c, "weight", amount=1, n=1, dim=1)
    log.append([[r[i][0][0] for i in range(2)] for r in show(c)[2]])
    prune.random_unstructured(c, "weight", amount=3)
    log.append(show(c)[2])
    p = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 2))
    prune.global_unstructured([(p[0], "weight"), (p[1], "weight")], pruning_method=prune.L1Unstructured,
                              amount=5)
    log.append((p[0].weight_mask.tolist(), p[1].weight_mask.tolist(), prune.is_pruned(p)))
    prune.global_unstructured([(p[0], "weight"), (p[1], "weight")], pruning_method=prune.RandomUnstructured,
                              amount=0.3)
    log.append((p[0].weight_mask.tolist(), p[1].weight_mask.tolist()))
    prune.identity(p[1], "bias")
    log.append(show(p[1], "bias"))
    prune.custom_from_mask(p[1], "weight", lib.tensor([[1.0, 0, 1], [0, 1, 1]]))
    log.append(p[1].weight_mask.tolist())
    scores = {(p[0], "bias"): lib.tensor([3.0, 1.0, 2.0])}
    prune.l1_unstructured(p[0], "bias", amount=1, importance_scores=scores[(p[0], "bias")])
    log.append(p[0].bias_mask.tolist())
    t = lib.arange(6.0).reshape(2, 3)
    log.append(prune.L1Unstructured(amount=2).prune(t).tolist())
    log.append(prune.LnStructured(amount=1, n=1, dim=1).prune(t).tolist())
    log.append(prune.RandomStructured(amount=0.5, dim=0).prune(lib.ones(4, 2)).tolist())
    first = prune.Identity()
    first._tensor_name = "w"
    cont = prune.PruningContainer(first)
    second = prune.L1Unstructured(amount=1)
    second._tensor_name = "w"
    cont.add_pruning_method(second)
    log.append((len(cont), [type(x).__name__ for x in cont], cont.compute_mask(t, lib.ones_like(t)).tolist()))
    return log


def test_prune_matches_torch():
    torch = pytest.importorskip("torch")
    (exp, exp_w), (got, got_w) = _outcome(torch, _prune_log), _outcome(pt, _prune_log)
    assert exp[0] == "ok", exp
    assert got == exp
    assert got_w == exp_w


_PRUNE_ERRORS = {
    "amount_float": lambda p, nn: p.random_unstructured(nn.Linear(2, 2), "weight", amount=1.5),
    "amount_count": lambda p, nn: p.random_unstructured(nn.Linear(2, 2), "weight", amount=5),
    "amount_type": lambda p, nn: p.l1_unstructured(nn.Linear(2, 2), "weight", amount="a"),
    "amount_negative": lambda p, nn: p.l1_unstructured(nn.Linear(2, 2), "weight", amount=-1),
    "structured_1d": lambda p, nn: p.random_structured(nn.Linear(2, 2), "bias", amount=1, dim=0),
    "structured_dim": lambda p, nn: p.ln_structured(nn.Linear(2, 2), "weight", amount=1, n=2, dim=3),
    "remove_unpruned": lambda p, nn: p.remove(nn.Linear(2, 2), "weight"),
    "global_structured": lambda p, nn: p.global_unstructured([(nn.Linear(2, 2), "weight")],
                                                            pruning_method=p.RandomStructured, amount=1),
    "global_not_iterable": lambda p, nn: p.global_unstructured(3, pruning_method=p.L1Unstructured, amount=1),
    "global_scores_type": lambda p, nn: p.global_unstructured([(nn.Linear(2, 2), "weight")],
                                                             pruning_method=p.L1Unstructured, amount=1,
                                                             importance_scores=[1]),
    "container_type": lambda p, nn: p.PruningContainer(p.Identity()).add_pruning_method(3),
    "container_name": lambda p, nn: p.PruningContainer(p.Identity.apply(nn.Linear(2, 2), "weight")
                                                       ).add_pruning_method(p.Identity.apply(nn.Linear(2, 2), "bias")),
}


@pytest.mark.parametrize("case", sorted(_PRUNE_ERRORS))
def test_prune_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    import importlib

    def run(lib):
        return _PRUNE_ERRORS[case](importlib.import_module(lib.__name__ + ".nn.utils.prune"), lib.nn)
    (exp, _), (got, _) = _outcome(torch, run), _outcome(pt, run)
    assert exp[0] == got[0] == "raise", (exp, got)
    assert got[1] is exp[1]
    import re
    norm = lambda msg: re.sub(r" at 0x[0-9a-f]+", "", msg.replace("pyctorch", "torch")).split(" of module")[0]  # noqa: E731
    assert norm(got[2]) == norm(exp[2])


def test_prune_by_hand():
    from pyctorch.nn.utils import prune
    t = pt.tensor([[0.5, -3.0, 0.25], [2.0, -0.125, 1.0]])
    assert prune.L1Unstructured(amount=3).prune(t).tolist() == [[0.0, -3.0, 0.0], [2.0, 0.0, 1.0]]
    assert prune.LnStructured(amount=1, n=1, dim=0).prune(t).tolist() == [[0.5, -3.0, 0.25], [0.0, 0.0, 0.0]]
    m = pt.nn.Linear(3, 2)
    w = m.weight.detach().clone()
    prune.custom_from_mask(m, "weight", pt.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))
    assert isinstance(m.weight_orig, pt.nn.Parameter) and "weight" not in dict(m.named_parameters())
    assert m.weight.tolist() == (w * pt.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])).tolist()
    with pt.no_grad():
        m.weight_orig.fill_(2.0)
    m(pt.ones(1, 3))  # the forward pre hook recomputes the pruned weight
    assert m.weight.tolist() == [[2.0, 0.0, 2.0], [0.0, 2.0, 0.0]]
    prune.remove(m, "weight")
    assert isinstance(m.weight, pt.nn.Parameter) and m.weight.tolist() == [[2.0, 0.0, 2.0], [0.0, 2.0, 0.0]]
    assert not prune.is_pruned(m) and not hasattr(m, "weight_mask")


def test_pruned_model_checkpoint_round_trips_with_torch():
    """A pruned module pickles its pruning method (a forward pre hook) by torch's class path: it loads in torch,
    keeps pruning there, and comes back."""
    torch = pytest.importorskip("torch")
    import io
    from pyctorch.nn.utils import prune
    pt.manual_seed(0)
    m = pt.nn.Linear(3, 2)
    prune.l1_unstructured(m, "weight", amount=2)
    buf = io.BytesIO()
    pt.save(m, buf)
    buf.seek(0)
    tm = torch.load(buf, weights_only=False)
    hooks = list(tm._forward_pre_hooks.values())
    assert [type(h).__module__ + "." + type(h).__name__ for h in hooks] == ["torch.nn.utils.prune.L1Unstructured"]
    assert tm.weight_mask.tolist() == m.weight_mask.tolist()
    assert tm(torch.ones(1, 3)).tolist() == m(pt.ones(1, 3)).tolist()
    buf = io.BytesIO()
    torch.save(tm, buf)
    buf.seek(0)
    back = pt.load(buf, weights_only=False)
    assert isinstance(next(iter(back._forward_pre_hooks.values())), prune.L1Unstructured)
    assert back(pt.ones(1, 3)).tolist() == m(pt.ones(1, 3)).tolist()
    prune.remove(back, "weight")
    assert not prune.is_pruned(back) and isinstance(back.weight, pt.nn.Parameter)


def _inplace_after_hooked_module(lib):
    m = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.ReLU(inplace=True))
    m[0].register_full_backward_hook(lambda mod, gi, go: None)
    m(lib.ones(2, 3, requires_grad=True)).sum().backward()


def _inplace_on_function_view(lib, how):
    class View(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x) if how != "as_is" else x

        @staticmethod
        def backward(ctx, g):
            return g
    a = lib.ones(2, requires_grad=True)
    y = View.apply(a * 1)
    if how == "no_grad":
        with lib.no_grad():
            y.add_(1)
    elif how == "detach":
        y.detach().add_(1)
    else:
        y.add_(1)
    return y.tolist()


@pytest.mark.parametrize("case", ["hooked_module", "view", "as_is", "no_grad", "detach"])
def test_inplace_on_custom_function_view_matches_torch(case):
    """A view a custom Function returns (BackwardHookFunction's included) may not be written in place under
    autograd: torch refuses it, since the rebased history would bypass the Function's backward (and the hooks)."""
    torch = pytest.importorskip("torch")
    run = (lambda lib: _inplace_after_hooked_module(lib)) if case == "hooked_module" else \
        (lambda lib: _inplace_on_function_view(lib, case))
    (exp, _), (got, _) = _outcome(torch, run), _outcome(pt, run)
    if exp[0] == "raise":
        assert got[0] == "raise" and got[1] is exp[1] and got[2] == exp[2], got
    else:
        assert got == exp
