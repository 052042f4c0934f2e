"""The __torch_function__ protocol and torch.overrides: subclasses, tensor-like types, modes.

The user code (subclasses, modes, small scripts) is written once as functions of the framework module `lib` and
run with lib = pyctorch and lib = torch; what the handlers see (function names, result types) must agree. The
checks of pyctorch alone (recorded names against hand-written lists, errors) run without torch."""
import copy
import io
import pickle

import pytest

import pyctorch as pt


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def both(torch, f):
    """f(lib) for pyctorch and torch; the two results must be equal."""
    mine, theirs = f(pt), f(torch)
    assert mine == theirs
    return mine


# ---------------------------------------------------------------- user code, written once

def logging_mode(lib):
    class Log(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))
    return Log


def logging_subclass(lib):
    class LoggingTensor(lib.Tensor):
        log = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)
    LoggingTensor.log = []
    return LoggingTensor


def scalar_tensor(lib):
    """The ScalarTensor example of torch's "Extending torch with a Tensor-like type"."""
    handled = {}

    class ScalarTensor:
        def __init__(self, N, value):
            self._N, self._value = N, value

        def tensor(self):
            return self._value * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def mean(inp):
        return float(inp._value) / inp._N
    handled[lib.mean] = mean
    return ScalarTensor


def small_script(lib):
    """An MLP forward and backward with F.relu, indexing, +, sum, in-place ops and properties."""
    lib.manual_seed(0)
    F = lib.nn.functional
    x = lib.ones(4, 3)
    w = lib.full((5, 3), 0.5, requires_grad=True)
    h = F.relu(F.linear(x, w))
    y = h[1:, :2] + 1
    y = y * 2 - x[0, 0]
    loss = y.sum()
    loss.backward()
    t = lib.zeros(3)
    t[0] = 2.0
    t.add_(1)
    _ = t.shape, w.grad
    return lib.cat([t, t]).mean()


# ---------------------------------------------------------------- modes

def test_mode_sees_the_calls_of_a_script(torch):
    def run(lib):
        Log = logging_mode(lib)
        with Log() as mode:
            small_script(lib)
        return mode.names
    names = both(torch, run)
    assert names[:5] == ["ones", "full", "linear", "relu", "__getitem__"]


def test_mode_sees_the_calls_of_a_script_without_torch():
    Log = logging_mode(pt)
    with Log() as mode:
        small_script(pt)
    assert mode.names == ["ones", "full", "linear", "relu", "__getitem__", "add", "mul",
                          "__getitem__", "sub", "sum", "backward", "zeros", "__setitem__", "add_", "__get__",
                          "__get__", "cat", "mean"]


def test_mode_is_popped_inside_its_handler_and_nests():
    outer_names, inner_names = [], []

    class Outer(pt.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            outer_names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    class Inner(pt.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            inner_names.append(func.__name__)
            assert pt.overrides._get_current_function_mode() is outer
            return func(*args, **(kwargs or {})) * 2

    outer = Outer()
    with outer:
        with Inner():
            assert len(pt.overrides._get_current_function_mode_stack()) == 2
            r = pt.ones(2).sum()
        assert pt.overrides._get_current_function_mode() is outer
    assert pt.overrides._get_current_function_mode() is None
    assert inner_names == ["ones", "sum"]
    assert outer_names == ["ones", "mul", "sum", "mul"]  # what Inner's handler called: Outer is next on the stack
    assert r.item() == 8.0  # ones*2 -> sum -> *2


def test_mode_result_replaces_the_call(torch):
    def run(lib):
        class Const(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if func is lib.add:
                    return "intercepted"
                return func(*args, **(kwargs or {}))
        with Const():
            a = lib.add(lib.ones(1), 1)
            b = (lib.ones(1) + 1).tolist()
        return a, b
    assert both(torch, run) == ("intercepted", [2.0])


def test_disable_torch_function(torch):
    def run(lib):
        Log = logging_mode(lib)
        with Log() as mode:
            with lib._C.DisableTorchFunction():
                off = lib._C._is_torch_function_enabled()
                lib.ones(2).sum()
            with lib._C.DisableTorchFunctionSubclass():
                lib.ones(2)
        return mode.names, off, lib._C._is_torch_function_enabled()
    assert both(torch, run) == (["ones"], False, True)


def test_mode_returning_not_implemented_raises_type_error(torch):
    def run(lib):
        class Refuse(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented
        with Refuse():
            try:
                lib.ones(2)
            except TypeError as e:
                return "all __torch_function__ handlers returned NotImplemented" in str(e)
        return None
    assert both(torch, run) is True


def test_handler_raising_propagates(torch):
    def run(lib):
        class Boom(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                raise ValueError("boom")
        with Boom():
            try:
                lib.ones(2)
            except ValueError as e:
                msg = str(e)
        return msg, lib.ones(1).tolist()  # the mode is off the stack after its block
    assert both(torch, run) == ("boom", [1.0])


# ---------------------------------------------------------------- subclasses

def test_default_subclass_keeps_its_type(torch):
    def run(lib):
        class MyT(lib.Tensor):
            pass
        a = lib.arange(6.).reshape(2, 3).as_subclass(MyT)
        b = a.clone()
        out = [a + 1, 1 + a, 2 - a, a * a, a @ a.T, a[0], a.sum(), lib.add(a, 1), lib.nn.functional.relu(a),
               lib.cat([a, a]), a.t(), a.float(), lib.ones(2, 3) + a]
        names = [type(o).__name__ for o in out]
        same = b.add_(1) is b
        pieces = [type(p).__name__ for p in a.unbind(0)]
        return names, same, type(b).__name__, pieces, [o.tolist() for o in out[:4]]
    names, same, tb, pieces, values = both(torch, run)
    assert set(names) == {"MyT"} and same and tb == "MyT" and pieces == ["MyT", "MyT"]


def test_subclass_autograd(torch):
    def run(lib):
        class MyT(lib.Tensor):
            pass
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.as_subclass(MyT)
        z = (y * y).sum()
        z.backward()
        return type(z).__name__, y.requires_grad, y.is_leaf, x.grad.tolist(), type(x.grad).__name__
    assert both(torch, run) == ("MyT", True, False, [2.0, 4.0, 6.0], "Tensor")


def test_logging_subclass_sees_methods_operators_and_functions(torch):
    def run(lib):
        LT = logging_subclass(lib)
        a = lib.ones(2, 2).as_subclass(LT)
        LT.log.clear()
        b = a + 1
        b = b.mul(2)
        b = lib.nn.functional.relu(b)
        _ = b[0]
        _ = b.shape
        _ = lib.sum(b)
        return list(LT.log), type(b).__name__
    log, tname = both(torch, run)
    assert log == ["add", "mul", "relu", "__getitem__", "__get__", "sum"]


def test_func_identity_in_handlers(torch):
    def run(lib):
        seen = []

        class Probe(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append((func is lib.add, func is lib.Tensor.add, func is lib.nn.functional.relu,
                             func is lib.Tensor.backward))
                return super().__torch_function__(func, types, args, kwargs)
        p = lib.ones(2).as_subclass(Probe)
        lib.add(p, 1)
        p.add(1)
        lib.nn.functional.relu(p)
        return seen
    assert both(torch, run) == [(True, False, False, False), (False, True, False, False),
                                (False, False, True, False)]


def test_parameter_results_are_plain(torch):
    def run(lib):
        p = lib.nn.Parameter(lib.ones(2))
        return [type(r).__name__ for r in (p + 1, p * p, p.sum(), lib.nn.functional.relu(p), p[0])]
    assert both(torch, run) == ["Tensor"] * 5


def test_scalar_tensor_like(torch):
    def run(lib):
        ST = scalar_tensor(lib)
        d = ST(5, 2)
        r = lib.mean(d)
        try:
            lib.add(d, 1)
        except TypeError as e:
            err = "all __torch_function__ handlers returned NotImplemented" in str(e)
        return r, err, lib.overrides.is_tensor_like(d), lib.overrides.is_tensor_like(1)
    assert both(torch, run) == (0.4, True, True, False)


def test_make_subclass_and_printing_and_pickling(torch):
    def run(lib):
        global PickledT
        a = lib.Tensor._make_subclass(PickledT[lib.__name__], lib.tensor([1.0, 2.0]), True)
        b = pickle.loads(pickle.dumps(a))
        buf = io.BytesIO()
        lib.save(a, buf)
        buf.seek(0)
        d = lib.load(buf, weights_only=False)
        return (type(a).__name__, a.requires_grad, type(b).__name__, b.tolist(),
                type(d).__name__, d.tolist(), type(a.detach()).__name__)
    assert both(torch, run)[0] == "PickledT"


PickledT = {"pyctorch": type("PickledT", (pt.Tensor,), {"__module__": __name__, "__qualname__": "PickledTPT"})}
PickledTPT = PickledT["pyctorch"]


@pytest.fixture(autouse=True, scope="module")
def _torch_pickled_class():
    try:
        import torch
    except ImportError:
        yield
        return
    cls = type("PickledT", (torch.Tensor,), {"__module__": __name__, "__qualname__": "PickledTTorch"})
    globals()["PickledTTorch"] = cls
    PickledT["torch"] = cls
    yield


def test_repr_of_subclass(torch):
    def run(lib):
        class MyT(lib.Tensor):
            pass
        return repr(lib.tensor([1.0, 2.0]).as_subclass(MyT))
    both(torch, run)


# ---------------------------------------------------------------- torch.overrides helpers

def test_has_torch_function(torch):
    def run(lib):
        class MyT(lib.Tensor):
            pass
        t, m, p = lib.ones(1), lib.ones(1).as_subclass(MyT), lib.nn.Parameter(lib.ones(1))
        o = lib.overrides
        return (o.has_torch_function((t, 1)), o.has_torch_function((t, m)), o.has_torch_function_unary(p),
                o.has_torch_function_variadic(t, m), o.has_torch_function_unary(m))
    assert both(torch, run) == (False, True, False, True, True)


def test_handle_and_wrap_torch_function(torch):
    def run(lib):
        o = lib.overrides

        @o.wrap_torch_function(lambda x, y=None: (x,))
        def double(x, y=None):
            return x * 2

        class Catch:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("caught", func.__name__, len(args))
        return double(lib.ones(1)).tolist(), double(Catch())
    assert both(torch, run) == ([2.0], ("caught", "double", 1))


# what torch's get_testing_overrides lists and pyctorch has but does not route through the protocol: the
# properties written in Python
_NOT_OVERRIDABLE_YET = set()


def test_testing_overrides_cover_public_functions(torch):
    import inspect
    ours = pt.overrides.get_testing_overrides()
    theirs = torch.overrides.get_testing_overrides()
    checked, missing = 0, []
    for f in theirs:
        name = torch.overrides.resolve_name(f)
        obj = pt
        try:
            for part in (name or "").split(".")[1:] or [None]:
                obj = getattr(obj, part)
        except (AttributeError, TypeError):
            continue
        checked += 1
        if obj not in ours:
            missing.append(name)
    assert checked > 1000
    assert set(missing) == _NOT_OVERRIDABLE_YET
    for mine, ref in [(pt.add, torch.add), (pt.nn.functional.linear, torch.nn.functional.linear),
                      (pt.nn.functional.relu, torch.nn.functional.relu), (pt.cat, torch.cat)]:
        assert list(inspect.signature(ours[mine]).parameters)[:2] == list(inspect.signature(theirs[ref]).parameters)[:2]
        assert ours[mine](*[None] * len([p for p in inspect.signature(ours[mine]).parameters.values()
                                         if p.default is inspect.Parameter.empty])) == -1


def test_overridable_ignored_and_resolve_name():
    o = pt.overrides
    over = o.get_overridable_functions()
    assert pt.add in over[pt] and pt.nn.functional.relu in over[pt.nn.functional]
    assert pt.Tensor.add in over[pt.Tensor]
    ignored = o.get_ignored_functions()
    assert pt.is_tensor in ignored and pt.ones in ignored and pt.add not in ignored
    assert o.resolve_name(pt.add) == "torch.add"
    assert o.resolve_name(pt.Tensor.add) == "torch.Tensor.add"
    assert o.resolve_name(pt.nn.functional.relu) == "torch.nn.functional.relu"
    assert o.is_tensor_method_or_property(pt.Tensor.add)
    assert o.is_tensor_method_or_property(pt.Tensor.grad.__get__)
    assert not o.is_tensor_method_or_property(pt.add)
    with o.enable_reentrant_dispatch():
        pass


def test_wrapped_functions_stay_functions():
    import inspect
    F = pt.nn.functional
    assert F.relu.__name__ == "relu" and F.relu.__module__ == "pyctorch.nn.functional"
    assert "input" in inspect.signature(F.relu).parameters
    assert pickle.loads(pickle.dumps(F.relu)) is F.relu
    assert copy.deepcopy(F.relu) is F.relu
    t = pt.ones(2, requires_grad=True)
    t.sum().backward()  # a Python method, through the wrapper, bound without a bound-method object
    assert t.grad.tolist() == [1.0, 1.0]


def test_state_functions_without_torch():
    C = pt._C
    assert C._is_torch_function_enabled() and not C._is_torch_function_mode_enabled()
    with pt.overrides.BaseTorchFunctionMode():
        assert C._is_torch_function_mode_enabled() and C._len_torch_function_stack() == 1
        assert pt.ones(1).tolist() == [1.0]
        with C.DisableTorchFunction():
            assert not C._is_torch_function_mode_enabled()
    assert C._len_torch_function_stack() == 0
    with pytest.raises(RuntimeError):
        C._pop_torch_function_stack()
    with pytest.raises(TypeError):
        pt.ones(1).as_subclass(int)


def test_uninitialized_parameter_refuses_ops(torch):
    def run(lib):
        p = lib.nn.parameter.UninitializedParameter()
        out = []
        for f in (lambda: p + 1, lambda: lib.add(p, 1), lambda: p.sum(), lambda: lib.nn.functional.relu(p),
                  lambda: tuple(p.size()), lambda: str(p.dtype), lambda: p.requires_grad, lambda: p.shape,
                  lambda: type(p.float()).__name__):
            try:
                out.append(f())
            except Exception as e:
                out.append(type(e).__name__)
        return out
    assert both(torch, run)[:4] == ["ValueError"] * 4


def test_logging_subclass_names_and_types(torch):
    """What a subclass's handler receives for the common entry points: function name and overloaded types."""
    def run(lib):
        class LT(lib.Tensor):
            log = []

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                cls.log.append((func.__name__, [t.__name__ for t in types]))
                return super().__torch_function__(func, types, args, kwargs)
        a, p = lib.ones(2, 2).as_subclass(LT), lib.ones(2, 2)
        _ = (a + p, p + a, lib.nn.functional.relu(a), a[0], a.grad, lib.cat([p, a]), lib.sum(a, dim=0), 2 * a,
             2 - a, a.T, a.float(), a.dim(), repr(a), -a, a.clone(), a.detach(), a.requires_grad_(), a.size(0),
             a.numel(), a.tolist(), a.mean(), lib.where(a > 0, a, p))
        x = lib.tensor([1., 2.], requires_grad=True).as_subclass(LT)
        (x * 2).sum().backward()
        return LT.log
    log = both(torch, run)
    assert [n for n, _ in log][:6] == ["add", "add", "relu", "__getitem__", "__get__", "cat"]


def test_weird_handlers_never_crash():
    class Recurse(pt.Tensor):  # calls func with the protocol still on: Python's recursion limit, not a crash
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    with pytest.raises(RecursionError):
        pt.ones(2).as_subclass(Recurse) + 1

    class PlainMethod(pt.Tensor):  # an instance method (torch deprecates it, still calls it)
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return ("plain", func.__name__)
    assert pt.ones(1).as_subclass(PlainMethod).sum() == ("plain", "sum")

    class OptOut(pt.Tensor):
        __torch_function__ = None
    assert type(pt.ones(1).as_subclass(OptOut) + 1) is pt.Tensor

    class Raises(pt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            raise KeyError(func.__name__)
    r = pt.ones(1).as_subclass(Raises)
    for f in (lambda: r + 1, lambda: r[0], lambda: r.shape, lambda: pt.nn.functional.relu(r), lambda: repr(r)):
        with pytest.raises(KeyError):
            f()
    with pytest.raises(KeyError):
        r[0] = 1.0


def test_modes_are_per_thread():
    import threading
    seen = []

    class Log(pt.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    out = []
    with Log():
        t = threading.Thread(target=lambda: out.append(pt.ones(2).sum().item()))
        t.start()
        t.join()
        pt.zeros(1)
    assert out == [2.0] and seen == ["zeros"]


def test_tensor_methods_pickle_by_reference():
    assert pickle.loads(pickle.dumps(pt.Tensor.backward)) is pt.Tensor.backward
    assert pickle.loads(pickle.dumps(pt.Tensor.dim)) is pt.Tensor.dim
    assert pickle.loads(pickle.dumps(pt.diff)) is pt.diff


def test_python_properties_reach_handlers(torch):
    """Tensor properties written in Python (H, mH, real, imag, output_nr, ...) reach handlers as torch's do."""
    def run(m):
        seen = []

        class Logged(m.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(m.overrides.resolve_name(func))
                return super().__torch_function__(func, types, args, kwargs or {})

        x = m.ones(2, 2).as_subclass(Logged)
        seen.clear()
        results = [type(x.H).__name__, type(x.mH).__name__, type(x.real).__name__, x.output_nr]
        return seen, results
    assert run(pt) == run(torch)


def test_redispatch_function_skips_one_hop(torch):
    """torch.overrides.redispatch_function: the subclass sees scaled_mul and mul (not add, whose input is plain by
    then); a mode that re-enters itself sees all three."""
    def run(m):
        o = m.overrides
        seen = []

        def scaled_mul(a, b):
            if o.has_torch_function((a, b)):
                return o.handle_torch_function(scaled_mul, (a, b), a, b)
            return a * b + 1

        class Logging(m.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return o.redispatch_function(func, types, args, kwargs)

        class LoggingMode(o.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append("mode:" + func.__name__)
                with self:
                    return o.redispatch_function(func, types, args, kwargs)

        x, y = m.tensor([3.0]).as_subclass(Logging), m.tensor([4.0]).as_subclass(Logging)
        r1 = scaled_mul(x, y)
        a, b = m.tensor([3.0]), m.tensor([4.0])
        with LoggingMode():
            r2 = scaled_mul(a, b)
        return seen, type(r1).__name__, r1.tolist(), r2.tolist(), m.Tensor.grad.__get__ in o.get_default_nowrap_functions()
    assert run(pt) == run(torch)
