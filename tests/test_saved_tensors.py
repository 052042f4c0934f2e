"""Autograd saved tensors: grad_fn._saved_<name> / _raw_saved_<name> (torch's names), and the hooks on saved
tensors (torch.autograd.graph.saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks), against torch."""
import gc
import importlib
import warnings

import numpy as np
import pytest

import pyctorch as pt


def _outcome(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", fn(lib))
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            return ("raise", type(e), str(e))


def _compare(torch, fn):
    exp, got = _outcome(torch, fn), _outcome(pt, fn)
    assert got == exp


def _graph(lib):
    return importlib.import_module(lib.__name__ + ".autograd.graph")


def _vals(x):
    return None if x is None else np.round(np.asarray(x.detach().tolist(), dtype=np.float64), 4).tolist()


# ---- grad_fn._saved_<name> ----
def test_saved_attributes_match_torch():
    torch = pytest.importorskip("torch")

    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        y = a * b
        e = a.exp()
        s = a.sigmoid()
        d = a / b
        out = [y.grad_fn._saved_self is a, y.grad_fn._saved_other is b, e.grad_fn._saved_result is e,
               _vals(e.grad_fn._saved_result), e.grad_fn._saved_result.grad_fn.name(),
               e.grad_fn._saved_result.grad_fn is e.grad_fn, _vals(s.grad_fn._saved_result), d.grad_fn._saved_other is b,
               type(y.grad_fn._raw_saved_self).__name__ in ("SavedTensor",)]
        try:
            y.grad_fn._saved_nothing
        except AttributeError as ex:
            out.append(str(ex))
        y.sum().backward()
        try:
            y.grad_fn._saved_self
        except RuntimeError as ex:
            out.append(str(ex)[:60])
        return out
    _compare(torch, run)


def test_saved_attribute_version_check_matches_torch():
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = x.clone()
        z = c * c
        c.add_(1)
        return _vals(z.grad_fn._saved_self)
    exp, got = _outcome(torch, run), _outcome(pt, run)
    assert exp[0] == got[0] == "raise" and got[1] is exp[1]
    assert got[2].startswith("one of the variables needed for gradient computation has been modified by an inplace")


def test_saved_sizes_only():
    a = pt.ones(2, 3, requires_grad=True)
    s = (a * 2).sum(0)
    assert s.grad_fn._saved_self_sym_sizes == (2, 3)


def test_saved_attribute_values_by_hand():
    a = pt.tensor([1.0, 2.0], requires_grad=True)
    e = a.exp()
    np.testing.assert_allclose(e.grad_fn._saved_result.detach().numpy(), np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(AttributeError, match="'ExpBackward0' object has no attribute '_saved_other'"):
        e.grad_fn._saved_other


# ---- saved_tensors_hooks ----
def _hooks_run(lib, case):
    graph = _graph(lib)
    log = []

    def pack(x):
        log.append(("pack", _vals(x), lib.is_grad_enabled()))
        return ("P", x.clone())

    def unpack(p):
        log.append(("unpack", _vals(p[1]), lib.is_grad_enabled()))
        return p[1]
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    if case == "exp":
        with graph.saved_tensors_hooks(pack, unpack):
            e = a.exp()
        log.append("forward done")
        e.sum().backward()
        log.append(_vals(a.grad))
    elif case == "mul_counts":
        with graph.saved_tensors_hooks(pack, unpack):
            y = a * b
        log.append("forward done")
        y.sum().backward()
        log = [sorted(map(str, log[:2])), log[2], sorted(map(str, log[3:]))]
        log.append((_vals(a.grad), _vals(b.grad)))
    elif case == "attr":
        with graph.saved_tensors_hooks(pack, unpack):
            y = a.sigmoid()
        r = y.grad_fn._saved_result
        log.append((_vals(r), r.grad_fn is y.grad_fn))
    elif case == "attr_input":
        with graph.saved_tensors_hooks(lambda x: x.clone(), lambda x: x):
            y = a * b
        s = y.grad_fn._saved_self
        log.append((_vals(s), s.requires_grad, s.is_leaf, s is a))
    elif case == "no_version_check":
        c = a.clone()
        with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            z = c * c
        c.add_(1)
        z.sum().backward()
        log.append(_vals(a.grad))
    elif case == "bad_unpack":
        with graph.saved_tensors_hooks(lambda x: x, lambda x: 3):
            z = a * b
        z.sum().backward()
    elif case == "nested":
        with graph.saved_tensors_hooks(lambda x: log.append("outer") or x, lambda x: x):
            with graph.saved_tensors_hooks(lambda x: log.append("inner") or x, lambda x: x):
                a.exp()
            a.exp()
    elif case == "no_grad_needed":
        with graph.saved_tensors_hooks(pack, unpack):
            lib.ones(2) * lib.ones(2)
            with lib.no_grad():
                a * b
    elif case == "double_backward":
        with graph.saved_tensors_hooks(lambda x: x.clone(), lambda x: x):
            z = (a * a * b).sum()
        g, = lib.autograd.grad(z, a, create_graph=True)
        g.sum().backward()
        log.append((_vals(g), _vals(a.grad), _vals(b.grad)))
    elif case == "disable_register":
        with graph.disable_saved_tensors_hooks("no hooks here"):
            with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
    elif case == "disable_save":
        with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            with graph.disable_saved_tensors_hooks("no saving"):
                a * b
    elif case == "disable_without_hooks":
        with graph.disable_saved_tensors_hooks("unused"):
            y = a * b
        with graph.saved_tensors_hooks(lambda x: log.append("after") or x, lambda x: x):
            a.exp()
        y.sum().backward()
        log.append(_vals(a.grad))
    elif case == "save_on_cpu":
        with graph.save_on_cpu(pin_memory=False):
            y = a * b
        s = y.grad_fn._saved_self
        log.append((s is a, _vals(s)))
        y.sum().backward()
        log.append(_vals(a.grad))
    elif case == "function":
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * x
        with graph.saved_tensors_hooks(pack, unpack):
            z = F.apply(a)
        z.sum().backward()
        log.append(_vals(a.grad))
    elif case == "raw_register":
        y = a * b
        r = y.grad_fn._raw_saved_self
        r.register_hooks(lambda x: log.append("rp") or x * 10, lambda x: log.append("ru") or x)
        log.append(_vals(y.grad_fn._saved_self))
        y.sum().backward()
        log.append(_vals(b.grad))
        try:
            r.register_hooks(lambda x: x, lambda x: x)
        except RuntimeError as ex:
            log.append(str(ex)[:40])
    elif case == "raw_twice":
        with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            y = a * b
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
    elif case == "retain_graph":
        with graph.saved_tensors_hooks(pack, unpack):
            e = a.exp()
        e.sum().backward(retain_graph=True)
        e.sum().backward()
        log.append(_vals(a.grad))
    return log


_CASES = ["exp", "mul_counts", "attr", "attr_input", "no_version_check", "bad_unpack", "nested", "no_grad_needed",
          "double_backward", "disable_register", "disable_save", "disable_without_hooks", "save_on_cpu", "function",
          "raw_register", "raw_twice", "retain_graph"]


@pytest.mark.parametrize("case", _CASES)
def test_saved_tensors_hooks_match_torch(case):
    torch = pytest.importorskip("torch")
    _compare(torch, lambda lib: _hooks_run(lib, case))


def test_hooks_by_hand():
    graph = _graph(pt)
    packed = []
    a = pt.tensor([1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda x: packed.append(x) or len(packed) - 1, lambda i: packed[i] * 0 + 5):
        e = a.exp()
    assert len(packed) == 1 and packed[0].tolist() == pytest.approx(np.exp([1.0, 2.0]).tolist())
    e.sum().backward()
    assert a.grad.tolist() == [5.0, 5.0]  # d exp = grad * result, and the unpack hook said result = 5
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got result "
                                        "of type NoneType"):
        with graph.saved_tensors_hooks(lambda x: x, lambda x: None):
            y = a * a
        y.sum().backward()


def test_hook_state_is_restored_after_errors():
    graph = _graph(pt)
    a = pt.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError):
        with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            raise ValueError
    calls = []
    y = a * a  # no hooks any more: nothing packed
    with pytest.raises(RuntimeError, match="boom"):
        with graph.saved_tensors_hooks(lambda x: calls.append(1) or x, lambda x: x):
            with graph.disable_saved_tensors_hooks("boom"):
                a * a
    y.sum().backward()
    assert calls == [] and a.grad.tolist() == [2.0]
    with graph.saved_tensors_hooks(lambda x: calls.append(1) or x, lambda x: x):
        a * a
    assert calls == [1, 1]


def test_packed_values_are_freed():
    """A packed object is released with the graph (backward without retain_graph, or the graph dropped)."""
    graph = _graph(pt)

    class Box:
        alive = 0

        def __init__(self, t):
            Box.alive += 1
            self.t = t

        def __del__(self):
            Box.alive -= 1
    a = pt.tensor([1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(Box, lambda box: box.t):
        y = (a * a).exp()
    assert Box.alive == 3
    y.sum().backward()
    assert Box.alive == 0
    with graph.saved_tensors_hooks(Box, lambda box: box.t):
        y = (a * a).exp()
    assert Box.alive == 3
    del y
    gc.collect()
    assert Box.alive == 0


@pytest.mark.parametrize("op", ["max", "min", "sort", "topk", "kthvalue", "median", "cummax"])
def test_saved_indices_match_torch(op):
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor(np.random.RandomState(0).randn(3, 5).astype(np.float32), requires_grad=True)
        call = {"max": lambda: x.max(1), "min": lambda: x.min(0), "sort": lambda: x.sort(1),
                "topk": lambda: x.topk(2), "kthvalue": lambda: x.kthvalue(2, 1), "median": lambda: x.median(1),
                "cummax": lambda: x.cummax(1)}[op]
        values, indices = call()
        saved = values.grad_fn._saved_indices
        return str(saved.dtype), saved.tolist(), saved.tolist() == indices.tolist()
    _compare(torch, run)


@pytest.mark.parametrize("op", ["mul", "div", "exp", "sigmoid", "tanh", "sum_dim_sizes"])
def test_dir_lists_saved_names_like_torch(op):
    torch = pytest.importorskip("torch")

    def run(lib):
        a = lib.ones(2, 3, requires_grad=True)
        b = lib.ones(2, 3, requires_grad=True)
        y = {"mul": lambda: a * b, "div": lambda: a / b, "exp": lambda: a.exp(), "sigmoid": lambda: a.sigmoid(),
             "tanh": lambda: a.tanh(), "sum_dim_sizes": lambda: (a * 2).sum(0)}[op]()
        names = sorted(x for x in dir(y.grad_fn) if "saved" in x)
        if op == "sum_dim_sizes":  # torch also keeps dim and keepdim; both keep the input's sizes
            names = [x for x in names if x.endswith("sym_sizes")]
        return names, [getattr(y.grad_fn, x) is not None for x in names]
    _compare(torch, run)
