"""torch.library: operators defined from Python (Library.define/impl, custom_op), how calls reach their kernels,
autograd, autocast, the profiler, torch.fx / torch.export capture, infer_schema and opcheck; against torch where
it runs the same registrations (each test uses its own namespace, in both libraries, and destroys it)."""
import itertools
import warnings

import pytest

import pyctorch
import pyctorch.library as plib
from conftest import requires_torch, torch

_names = itertools.count()


def fresh(prefix="pct_lib"):
    return f"{prefix}{next(_names)}"


@pytest.fixture
def libs():
    made = []

    def make(module, ns, kind):
        lib = module.library.Library(ns, kind)
        made.append(lib)
        return lib
    yield make
    for lib in reversed(made):
        lib._destroy()


def both():
    return [pyctorch] + ([torch] if torch is not None else [])


def outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # the exception's type is what is compared
        return ("raised", type(e).__name__)


# ---- Library.define / impl ----

def test_define_impl_and_call(libs):
    ns = fresh()
    for m in both():
        lib = libs(m, ns, "DEF")
        assert lib.define("scale(Tensor x, int n=2) -> Tensor") == "scale"
        lib.define("scale.twice(Tensor x) -> Tensor")
        lib.impl("scale", lambda x, n=2: x * n, "CPU")
        lib.impl("scale.twice", lambda x: x * 2, "CPU")
        packet = getattr(m.ops, ns).scale
        assert packet.overloads() == ["default", "twice"]
        assert str(packet.default._schema) == f"{ns}::scale(Tensor x, int n=2) -> Tensor"
        assert packet(m.ones(2), 3).tolist() == [3.0, 3.0]
        assert packet.default(m.ones(2)).tolist() == [2.0, 2.0]
        assert packet.twice(m.ones(1)).tolist() == [2.0]
        lib._destroy()
        assert not hasattr(getattr(m.ops, ns), "scale")


@requires_torch
def test_registration_errors_match_torch(libs):
    ns = fresh()
    found = {}
    for m in both():
        lib = libs(m, ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        found[m.__name__] = [
            outcome(lambda: getattr(m.ops, ns).f(m.ones(2))),            # no kernel for CPU
            outcome(lambda: lib.define("f(Tensor x) -> Tensor")),       # defined twice
            outcome(lambda: m.library.Library(ns, "DEF")),              # a second DEF library
            outcome(lambda: m.library.Library(ns, "BAD")),              # unknown kind
            outcome(lambda: getattr(m.ops, ns).f(m.ones(2, device="meta"))),  # no fake function
        ]
        lib._destroy()
    assert found["pyctorch"] == found["torch"]
    assert found["pyctorch"][0] == ("raised", "NotImplementedError")


def test_missing_kernel_names_the_backend(libs):
    ns = fresh()
    lib = libs(pyctorch, ns, "DEF")
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", lambda x: x + 1, "Meta")
    with pytest.raises(NotImplementedError, match=f"Could not run '{ns}::g' with arguments from the 'CPU' "
                                                  r"backend.*\[Meta\]"):
        getattr(pyctorch.ops, ns).g(pyctorch.ones(1))


def test_overriding_a_kernel_warns_and_destroy_restores(libs):
    ns = fresh()
    lib = libs(pyctorch, ns, "DEF")
    lib.define("h(Tensor x) -> Tensor")
    lib.impl("h", lambda x: x + 1, "CPU")
    other = libs(pyctorch, ns, "IMPL")
    with pytest.warns(UserWarning, match="Overriding a previously registered kernel"):
        other.impl("h", lambda x: x + 10, "CPU")
    assert getattr(pyctorch.ops, ns).h(pyctorch.zeros(1)).item() == 10
    other._destroy()
    assert getattr(pyctorch.ops, ns).h(pyctorch.zeros(1)).item() == 1


def test_refusals_say_what_is_missing():
    aten = pyctorch.library.Library("aten", "IMPL")
    try:
        with pytest.raises(NotImplementedError, match="cannot replace the kernel of aten::add"):
            aten.impl("add.Tensor", lambda *a: None, "CPU")
    finally:
        aten._destroy()
    ns = fresh()
    lib = pyctorch.library.Library(ns, "DEF")
    try:
        lib.define("k(Tensor x) -> Tensor")
        with pytest.raises(NotImplementedError, match="dispatch keys"):
            lib.impl("k", lambda x: x, "XLA")
        with pytest.raises(RuntimeError, match="Could not find schema"):
            lib.impl("missing", lambda x: x, "CPU")
        with pytest.raises(TypeError):
            lib.impl("k", 3, "CPU")
        lib.impl("k", pyctorch.library.fallthrough_kernel, "CPU")  # registers nothing
        with pytest.raises(NotImplementedError):
            getattr(pyctorch.ops, ns).k(pyctorch.ones(1))
    finally:
        lib._destroy()


# ---- autograd ----

@requires_torch
def test_gradients_of_each_registration_kind_match_torch(libs):
    ns = fresh()
    grads = {}
    for m in both():
        lib = libs(m, ns, "DEF")
        # CompositeImplicitAutograd: the gradient of the ops it calls
        lib.define("implicit(Tensor x) -> Tensor")
        lib.impl("implicit", lambda x: x.sin() * x, "CompositeImplicitAutograd")
        # a CPU kernel and no autograd registration: torch's fallback lets the kernel's ops record
        lib.define("plain(Tensor x) -> Tensor")
        lib.impl("plain", lambda x: x.exp(), "CPU")
        # an Autograd kernel calling the operator again below autograd, through an autograd.Function
        lib.define("custom(Tensor x) -> Tensor")
        lib.impl("custom", lambda x: x * x, "CPU")
        ops = getattr(m.ops, ns)

        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                if m is torch:
                    with torch._C._AutoDispatchBelowAutograd():
                        return ops.custom(x)
                return ops.custom(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * g * x  # deliberately not 2x: the registered kernel is what runs

        lib.impl("custom", Square.apply, "Autograd")
        x = m.tensor([0.5, 1.5, -2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns that "plain" has no autograd kernel
            (ops.implicit(x).sum() + ops.plain(x).sum() + ops.custom(x).sum()).backward()
        grads[m.__name__] = x.grad.tolist()
    assert grads["pyctorch"] == pytest.approx(grads["torch"], rel=1e-6)


@requires_torch
def test_custom_op_register_autograd_matches_torch():
    ns = fresh()
    out = {}
    for m in both():
        @m.library.custom_op(f"{ns}::mul3", mutates_args=())
        def mul3(x: m.Tensor, w: m.Tensor, k: float = 3.0) -> m.Tensor:
            return x * w * k

        def setup_context(ctx, inputs, output):
            x, w, k = inputs
            ctx.save_for_backward(x, w)
            ctx.k = k

        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w * ctx.k, g * x * ctx.k, None
        mul3.register_autograd(backward, setup_context=setup_context)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, -1.0], requires_grad=True)
        y = mul3(x, w, k=2.0)
        y.sum().backward()
        out[m.__name__] = (y.tolist(), x.grad.tolist(), w.grad.tolist(), y.grad_fn is not None)
    assert out["pyctorch"] == out["torch"]


# ---- meta, autocast, profiler ----

@requires_torch
def test_fake_function_runs_for_meta_tensors(libs):
    ns = fresh()
    shapes = {}
    for m in both():
        lib = libs(m, ns, "DEF")
        lib.define("rows(Tensor x) -> Tensor")
        lib.impl("rows", lambda x: x.sum(1), "CPU")
        m.library.register_fake(f"{ns}::rows", lambda x: x.new_empty(x.shape[0]))
        y = getattr(m.ops, ns).rows(m.ones(3, 4, device="meta"))
        shapes[m.__name__] = (tuple(y.shape), y.device.type)
    assert shapes["pyctorch"] == shapes["torch"] == ((3,), "meta")


@requires_torch
def test_register_autocast_casts_inputs_as_torch():
    ns = fresh()
    dtypes = {}
    for m in both():
        @m.library.custom_op(f"{ns}::mm", mutates_args=())
        def mm(a: m.Tensor, b: m.Tensor) -> m.Tensor:
            return a @ b
        m.library.register_autocast(f"{ns}::mm", "cpu", m.bfloat16)
        a, b = m.ones(2, 2), m.ones(2, 2)
        with m.autocast("cpu", dtype=m.bfloat16):
            inside = mm(a, b).dtype
        dtypes[m.__name__] = (str(inside), str(mm(a, b).dtype))
    assert dtypes["pyctorch"] == dtypes["torch"] == ("torch.bfloat16", "torch.float32")


def test_profiler_shows_the_operator():
    ns = fresh()

    @pyctorch.library.custom_op(f"{ns}::twice", mutates_args=())
    def twice(x: pyctorch.Tensor) -> pyctorch.Tensor:
        return x * 2
    with pyctorch.profiler.profile() as prof:
        twice(pyctorch.ones(4))
    names = {e.key for e in prof.key_averages()}
    assert f"{ns}::twice" in names


# ---- capture: torch.fx and torch.export keep the operator as one node ----

def _scaled_op(ns):
    @pyctorch.library.custom_op(f"{ns}::axpy", mutates_args=())
    def axpy(x: pyctorch.Tensor, y: pyctorch.Tensor, a: float = 2.0) -> pyctorch.Tensor:
        return a * x + y
    axpy.register_fake(lambda x, y, a=2.0: pyctorch.empty_like(x))
    return axpy


def test_fx_traces_the_operator_as_one_node():
    ns = fresh()
    axpy = _scaled_op(ns)

    class M(pyctorch.nn.Module):
        def forward(self, x, y):
            return axpy(x.relu(), y, a=3.0) + 1
    gm = pyctorch.fx.symbolic_trace(M())
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    handle = getattr(pyctorch.ops, ns).axpy.default
    assert handle in targets
    x, y = pyctorch.randn(5), pyctorch.randn(5)
    pyctorch.testing.assert_close(gm(x, y), M()(x, y))


def test_export_records_the_operator_as_one_node(tmp_path):
    ns = fresh()
    axpy = _scaled_op(ns)

    class M(pyctorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = pyctorch.nn.Linear(4, 4)

        def forward(self, x):
            return axpy(self.lin(x), x)
    model = M()
    x = pyctorch.randn(2, 4)
    program = pyctorch.export.export(model, (x,))
    handle = getattr(pyctorch.ops, ns).axpy.default
    calls = [n.target for n in program.graph.nodes if n.op == "call_function"]
    assert calls.count(handle) == 1
    assert not any("mul" in str(t) for t in calls)  # the operator's insides are not in the graph
    pyctorch.testing.assert_close(program.module()(x), model(x))
    path = tmp_path / "axpy.pt2"
    pyctorch.export.save(program, str(path))
    pyctorch.testing.assert_close(pyctorch.export.load(str(path)).module()(x), model(x))


# ---- infer_schema, module-level define/impl, opcheck ----

@requires_torch
def test_infer_schema_matches_torch():
    from typing import Optional

    def build(m):
        def f1(x: m.Tensor, n: int, s: float = 1.0, flag: bool = False) -> m.Tensor: ...
        def f2(x: m.Tensor, ys: list[m.Tensor], out: Optional[m.Tensor] = None) -> tuple[m.Tensor, m.Tensor]: ...
        def f3(x: m.Tensor, *, scale: float = 0.5, name: str = "a") -> m.Tensor: ...
        def f4(x: m.Tensor, dims: list[int], dt: Optional[m.dtype] = None) -> None: ...
        return [(f1, ()), (f2, ("out",)), (f3, ()), (f4, ("x",))]
    ours = [plib.infer_schema(f, mutates_args=mut) for f, mut in build(pyctorch)]
    theirs = [torch.library.infer_schema(f, mutates_args=mut) for f, mut in build(torch)]
    assert ours == theirs
    def g(x: pyctorch.Tensor) -> pyctorch.Tensor: ...
    assert plib.infer_schema(g, mutates_args=(), op_name="g") == "g(Tensor x) -> Tensor"
    with pytest.raises(ValueError):
        plib.infer_schema(lambda x: x, mutates_args=())


def test_module_level_define_and_impl():
    ns = fresh()
    plib.define(f"{ns}::neg2", "(Tensor x) -> Tensor")

    @plib.impl(f"{ns}::neg2", "cpu")
    def neg2(x):
        return -2 * x
    plib.impl(f"{ns}::neg2", "meta", lambda x: pyctorch.empty_like(x))
    assert getattr(pyctorch.ops, ns).neg2(pyctorch.ones(2)).tolist() == [-2.0, -2.0]
    assert getattr(pyctorch.ops, ns).neg2(pyctorch.ones(2, device="meta")).shape == (2,)
    with pytest.warns(DeprecationWarning):
        plib.impl_abstract(f"{ns}::neg2", lambda x: pyctorch.empty_like(x))


@requires_torch
def test_opcheck_matches_torch():
    ns = fresh()
    results = {}
    for m in both():
        @m.library.custom_op(f"{ns}::good", mutates_args=())
        def good(x: m.Tensor, n: int = 2) -> m.Tensor:
            return x * n
        good.register_fake(lambda x, n=2: m.empty_like(x))

        @m.library.custom_op(f"{ns}::aliasing", mutates_args=())
        def aliasing(x: m.Tensor) -> m.Tensor:
            return x
        aliasing.register_fake(lambda x: m.empty_like(x))

        @m.library.custom_op(f"{ns}::mutating", mutates_args=())
        def mutating(x: m.Tensor) -> m.Tensor:
            return x.add_(1).clone()
        mutating.register_fake(lambda x: m.empty_like(x))

        @m.library.custom_op(f"{ns}::nofake", mutates_args=())
        def nofake(x: m.Tensor) -> m.Tensor:
            return x + 1
        x = m.ones(3)
        results[m.__name__] = [
            m.library.opcheck(good, (x,)),
            outcome(lambda: m.library.opcheck(aliasing, (x,), test_utils="test_schema")),
            outcome(lambda: m.library.opcheck(mutating, (x,), test_utils=("test_schema",))),
            outcome(lambda: m.library.opcheck(nofake, (x,), test_utils="test_faketensor")),
            outcome(lambda: m.library.opcheck(good, (x,), test_utils="bad")),
            {k: v if v == "SUCCESS" else "failed"
             for k, v in m.library.opcheck(nofake, (x,), raise_exception=False).items()},
        ]
    assert results["pyctorch"] == results["torch"]
    assert results["pyctorch"][1] == ("raised", "OpCheckError")


def test_opcheck_flags_a_library_op_without_autograd():
    ns = fresh()
    lib = pyctorch.library.Library(ns, "DEF")
    try:
        lib.define("sq(Tensor x) -> Tensor")
        lib.impl("sq", lambda x: x * x, "CPU")
        x = pyctorch.ones(2, requires_grad=True)
        with pytest.raises(plib.OpCheckError, match="no autograd registration"):
            plib.opcheck(getattr(pyctorch.ops, ns).sq.default, (x,), test_utils="test_autograd_registration")
    finally:
        lib._destroy()


def test_get_ctx_outside_a_fake_function_raises():
    with pytest.raises(RuntimeError, match="get_ctx"):
        plib.get_ctx()
