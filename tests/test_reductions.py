"""Reductions (sum, mean, prod, amax, max, argmax, all, var, norm, logsumexp, ...) and
softmax, checked against torch (the oracle) and against hand-computed values.

Each oracle case is a function f(m, x) run with m = torch and m = pyctorch on the same
data: results must agree in type, shape, dtype and values, and when torch raises,
pyctorch raises the same exception type."""
import math
import warnings

import numpy as np
import pytest

import pyctorch
from comparison import assert_same

try:
    import torch
except ImportError:  # the oracle tests skip; the value tests below still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")

RNG = np.random.default_rng(0)

NP_DTYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16, "int64": np.int64,
    "int32": np.int32, "uint8": np.uint8, "int8": np.int8, "bool": np.bool_,
}


def make(shape, dtype):
    """Random data of a dtype name ('bfloat16' is made as float32 and converted)."""
    if dtype == "bool":
        return np.asarray(RNG.random(shape) > 0.5)
    if dtype in ("int64", "int32", "int8"):
        return np.asarray(RNG.integers(-5, 6, size=shape).astype(NP_DTYPES[dtype]))
    if dtype == "uint8":
        return np.asarray(RNG.integers(0, 6, size=shape).astype(np.uint8))
    return np.asarray(RNG.standard_normal(shape).astype(np.float64 if dtype == "float64" else np.float32))


def to_module(m, arr, dtype, layout):
    """arr as a tensor of module m, in one of several memory layouts."""
    if layout == "transposed" and arr.ndim >= 2:
        arr = np.ascontiguousarray(np.swapaxes(arr, 0, -1))
    t = m.from_numpy(arr.copy())
    if dtype in ("bfloat16", "float16"):
        t = t.to(getattr(m, dtype))
    if layout == "transposed" and t.dim() >= 2:
        t = t.transpose(0, -1)  # back to the original shape, non-contiguous
    elif layout == "sliced" and t.dim() >= 1:
        t = t.transpose(0, -1)[::2].transpose(0, -1) if t.dim() >= 2 else t[::2]
    return t


# per result dtype; other dtypes (integers, bool) exactly
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (2e-5, 2e-5), "float64": (1e-10, 1e-10)}


def run_both(f, arr, dtype, layout="contiguous", what=""):
    """Runs f on torch and pyctorch versions of arr; compares results or exception types."""
    xt = to_module(torch, arr, dtype, layout)
    xp = to_module(pyctorch, arr, dtype, layout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            e = f(torch, xt)
        except Exception as exc:  # pyctorch must raise the same type
            with pytest.raises(type(exc)):
                f(pyctorch, xp)
            return
        r = f(pyctorch, xp)
    assert_same(r, e, tol=TOL, what=what)


SHAPES = [(), (5,), (3, 4), (2, 3, 4), (0, 3)]
LAYOUTS = ["contiguous", "transposed", "sliced"]


def dims_for(shape):
    """dim arguments to try for a shape: None, ints (also negative), tuples, out of range."""
    n = len(shape)
    out = [None, 0, -1]
    if n >= 2:
        out += [1, (0, 1), (-1, 0)]
    if n >= 3:
        out += [(0, 2), (0, 1, 2)]
    out += [n + 2]
    return out


def cases_over_dims(fn, shape, keepdims=(False, True), allow_none=True):
    for dim in dims_for(shape):
        if dim is None and not allow_none:
            continue
        for keepdim in keepdims:
            yield dim, keepdim


# ---------------------------------------------------------------------------------------
# sum-like reductions with int[1]? dim

@needs_torch
@pytest.mark.parametrize("op", ["sum", "nansum", "mean", "nanmean"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16", "bfloat16"])
def test_sum_family(op, dtype):
    for shape in SHAPES:
        arr = make(shape, dtype)
        for layout in LAYOUTS:
            for dim, keepdim in cases_over_dims(op, shape):
                if dim is None:
                    f = lambda m, x: getattr(x, op)()
                else:
                    f = lambda m, x: getattr(m, op)(x, dim, keepdim)
                run_both(f, arr, dtype, layout, f"{op} {dtype} {shape} {layout} dim={dim} keepdim={keepdim}")


@needs_torch
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "nansum"])
def test_dtype_argument(op):
    for dtype in ["float32", "int64", "bool", "float16"]:
        arr = make((3, 4), dtype)
        for target in ["float64", "float32", "int64", "int32", "bool"]:
            run_both(lambda m, x: getattr(x, op)(dtype=getattr(m, target)), arr, dtype, what=f"{op} {dtype}->{target}")
            run_both(lambda m, x: getattr(m, op)(x, 1, dtype=getattr(m, target)), arr, dtype,
                     what=f"{op} dim {dtype}->{target}")


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16", "int8", "uint8"])
def test_prod(dtype):
    for shape in SHAPES:
        arr = make(shape, dtype)
        for layout in LAYOUTS:
            run_both(lambda m, x: x.prod(), arr, dtype, layout, f"prod {shape}")
            for dim in [0, -1, 1, 5]:
                for keepdim in (False, True):
                    run_both(lambda m, x: m.prod(x, dim, keepdim), arr, dtype, layout,
                             f"prod {dtype} {shape} {layout} {dim} {keepdim}")


# ---------------------------------------------------------------------------------------
# max / min family

@needs_torch
@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16", "uint8"])
def test_amax_amin(op, dtype):
    for shape in SHAPES:
        arr = make(shape, dtype)
        for layout in LAYOUTS:
            run_both(lambda m, x: getattr(x, op)(), arr, dtype, layout, f"{op} {shape}")
            for dim, keepdim in cases_over_dims(op, shape, allow_none=False):
                run_both(lambda m, x: getattr(m, op)(x, dim, keepdim), arr, dtype, layout,
                         f"{op} {dtype} {shape} {layout} {dim} {keepdim}")


@needs_torch
@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16"])
def test_max_min_arg(op, dtype):
    for shape in SHAPES + [(4, 1, 3)]:
        arr = make(shape, dtype)
        if dtype.startswith("float") and arr.size:  # ties: the first occurrence wins
            arr.flat[-1] = arr.flat[0]
        for layout in LAYOUTS:
            run_both(lambda m, x: getattr(x, op)(), arr, dtype, layout, f"{op}() {dtype} {shape}")
            for dim in [0, -1, 1, 2, 7]:
                for keepdim in (False, True):
                    run_both(lambda m, x: getattr(m, op)(x, dim, keepdim), arr, dtype, layout,
                             f"{op} {dtype} {shape} {layout} {dim} {keepdim}")
    if op.startswith("arg"):
        run_both(lambda m, x: getattr(m, op)(x, keepdim=True), make((3, 4), dtype), dtype, what="keepdim, no dim")


@needs_torch
def test_ties_are_first_occurrence():
    arr = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [5.0, 1.0, 5.0, 5.0]], dtype=np.float32)
    for f in [lambda m, x: x.argmax(), lambda m, x: x.argmin(), lambda m, x: x.argmax(1), lambda m, x: x.argmin(0),
              lambda m, x: x.max(1), lambda m, x: x.min(0), lambda m, x: x.t().argmax(0)]:
        run_both(f, arr, "float32")


@needs_torch
def test_nan_propagation():
    nan = float("nan")
    arr = np.array([[1.0, nan, 3.0, 2.0], [4.0, 5.0, 6.0, nan], [0.0, 1.0, 2.0, 3.0]], dtype=np.float32)
    cases = [lambda m, x: x.max(), lambda m, x: x.min(), lambda m, x: x.amax(1), lambda m, x: x.amin(0),
             lambda m, x: x.argmax(), lambda m, x: x.argmin(1), lambda m, x: x.max(1), lambda m, x: x.min(0),
             lambda m, x: m.aminmax(x), lambda m, x: m.aminmax(x, dim=1), lambda m, x: x.sum(1),
             lambda m, x: x.nansum(1), lambda m, x: x.nanmean(1), lambda m, x: x.nanmean(),
             lambda m, x: x.logsumexp(1), lambda m, x: x.norm(float("inf")), lambda m, x: x.norm(float("-inf"), 1),
             lambda m, x: x.norm(0), lambda m, x: x.softmax(1), lambda m, x: x.log_softmax(0),
             lambda m, x: x.var(1), lambda m, x: x.mean(0), lambda m, x: x.t().amax(0)]
    for dtype in ["float32", "float64", "float16"]:
        for layout in ["contiguous", "transposed"]:
            for i, f in enumerate(cases):
                run_both(f, arr, dtype, layout, f"nan case {i} {dtype} {layout}")
    big = make((40000,), "float32")  # parallel path: NaN in the second half
    big[30000] = nan
    for f in [lambda m, x: x.max(), lambda m, x: x.argmax(), lambda m, x: x.amin(0), lambda m, x: m.aminmax(x)]:
        run_both(f, big, "float32")


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_aminmax(dtype):
    for shape in SHAPES:
        arr = make(shape, dtype)
        for layout in LAYOUTS:
            run_both(lambda m, x: m.aminmax(x), arr, dtype, layout)
            for dim in [0, -1, 1, 5]:
                for keepdim in (False, True):
                    run_both(lambda m, x: m.aminmax(x, dim=dim, keepdim=keepdim), arr, dtype, layout,
                             f"aminmax {shape} {dim}")


@needs_torch
def test_max_other_and_return_types():
    a, b = make((3, 4), "float32"), make((4,), "float32")
    xt, xp = torch.from_numpy(a), pyctorch.from_numpy(a)
    yt, yp = torch.from_numpy(b), pyctorch.from_numpy(b)
    assert_same(pyctorch.max(xp, yp), torch.max(xt, yt), tol=TOL, what="max other")
    assert_same(xp.min(yp), xt.min(yt), tol=TOL, what="min other")
    r = xp.max(1)
    assert type(r).__name__ == "max" and type(r).__module__ == "torch.return_types"
    assert r.values is r[0] and r.indices is r[1]
    assert type(pyctorch.aminmax(xp)).__name__ == "aminmax"
    v, i = pyctorch.min(xp, 0)
    assert_same((v, i), tuple(torch.min(xt, 0)), tol=TOL, what="unpack")


# ---------------------------------------------------------------------------------------
# boolean reductions and counts

@needs_torch
@pytest.mark.parametrize("op", ["all", "any", "count_nonzero"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint8", "float16"])
def test_all_any_count(op, dtype):
    for shape in SHAPES:
        arr = make(shape, dtype)
        if dtype != "bool" and arr.size:
            arr.flat[::3] = 0
        for layout in LAYOUTS:
            run_both(lambda m, x: getattr(x, op)(), arr, dtype, layout, f"{op} {shape}")
            for dim in dims_for(shape)[1:]:
                if op == "count_nonzero":
                    run_both(lambda m, x: m.count_nonzero(x, dim), arr, dtype, layout, f"{op} {shape} {dim}")
                else:
                    for keepdim in (False, True):
                        run_both(lambda m, x: getattr(m, op)(x, dim, keepdim), arr, dtype, layout,
                                 f"{op} {shape} {dim} {keepdim}")
    run_both(lambda m, x: getattr(x, op)(()), make((3, 4), dtype), dtype, what="empty dim list")


# ---------------------------------------------------------------------------------------
# var / std

@needs_torch
@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_var_std(op, dtype):
    fn = lambda m: getattr(m, op)
    for shape in SHAPES:
        arr = make(shape, dtype)
        for layout in LAYOUTS:
            run_both(lambda m, x: fn(m)(x), arr, dtype, layout, f"{op} {shape}")
            for dim, keepdim in cases_over_dims(op, shape, allow_none=False):
                run_both(lambda m, x: fn(m)(x, dim, keepdim=keepdim), arr, dtype, layout,
                         f"{op} {shape} {layout} {dim} {keepdim}")
    arr = make((3, 5), dtype)
    for kw in [dict(unbiased=False), dict(unbiased=True), dict(correction=0), dict(correction=2),
               dict(correction=2.5), dict(correction=5)]:
        run_both(lambda m, x: fn(m)(x, 1, **kw), arr, dtype, what=f"{op} {kw}")
        run_both(lambda m, x: fn(m)(x, **kw), arr, dtype, what=f"{op} all {kw}")
    run_both(lambda m, x: fn(m)(x, False), arr, dtype, what=f"{op}(x, False)")
    run_both(lambda m, x: fn(m)(x, 0, True), arr, dtype, what=f"{op}(x, 0, True)")


@needs_torch
def test_var_warns_on_zero_dof():
    x = pyctorch.tensor([1.0])
    with pytest.warns(UserWarning, match="degrees of freedom"):
        r = x.var()
    assert math.isnan(r.item())


# ---------------------------------------------------------------------------------------
# logsumexp, norm, softmax

@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool"])
def test_logsumexp(dtype):
    for shape in SHAPES:
        arr = make(shape, dtype)
        for layout in LAYOUTS:
            for dim, keepdim in cases_over_dims("logsumexp", shape, allow_none=False):
                run_both(lambda m, x: m.logsumexp(x, dim, keepdim), arr, dtype, layout,
                         f"logsumexp {shape} {layout} {dim} {keepdim}")
    inf = float("inf")
    special = np.array([[1.0, inf], [-inf, -inf], [inf, inf], [inf, -inf], [-inf, 2.0], [1000.0, 1000.0]], np.float32)
    run_both(lambda m, x: m.logsumexp(x, 1), special, "float32", what="logsumexp infinities")


@needs_torch
@pytest.mark.parametrize("p", [2, 1, 0, 3.5, 0.5, -1, float("inf"), float("-inf"), "fro", None])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_norm(p, dtype):
    for shape in SHAPES:
        arr = make(shape, dtype)
        for layout in LAYOUTS:
            run_both(lambda m, x: x.norm(p), arr, dtype, layout, f"norm p={p} {shape}")
            for dim, keepdim in cases_over_dims("norm", shape, allow_none=False):
                if p == "fro" and isinstance(dim, tuple) and len(dim) > 2:
                    continue
                run_both(lambda m, x: m.norm(x, p, dim, keepdim), arr, dtype, layout,
                         f"norm p={p} {shape} {layout} {dim} {keepdim}")


@needs_torch
def test_norm_dtype_argument():
    arr = make((3, 4), "float32")
    for target in ["float64", "float16", "int64"]:
        run_both(lambda m, x: m.norm(x, dtype=getattr(m, target)), arr, "float32", what=target)
    run_both(lambda m, x: m.norm(x, dtype=m.float32), arr, "float16", what="half -> float")


@needs_torch
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_softmax(op, dtype):
    for shape in [(), (5,), (3, 4), (2, 3, 4), (0, 3), (2, 40, 3)]:
        arr = make(shape, dtype)
        for layout in LAYOUTS:
            for dim in [0, -1, 1, 2, 5]:
                run_both(lambda m, x: getattr(m, op)(x, dim), arr, dtype, layout, f"{op} {shape} {layout} {dim}")
                run_both(lambda m, x: getattr(x, op)(dim, dtype=m.float64), arr, dtype, layout, f"{op} dtype")
    inf = float("inf")
    special = np.array([[inf, 1.0], [-inf, -inf], [-inf, 1.0], [1000.0, -1000.0]], np.float32)
    run_both(lambda m, x: getattr(m, op)(x, 1), special, "float32", what="softmax infinities")


# ---------------------------------------------------------------------------------------
# errors, out=, large inputs (parallel paths)

@needs_torch
def test_error_types_and_messages():
    x3 = np.zeros((3, 4), np.float32)
    e = np.zeros((0, 3), np.float32)
    cases = [
        (x3, "float32", lambda m, x: x.sum(5)), (x3, "float32", lambda m, x: x.sum((0, 0))),
        (x3, "float32", lambda m, x: x.sum((0, -2))), (x3, "float32", lambda m, x: x.max(5)),
        (x3, "int64", lambda m, x: x.mean()), (x3, "int64", lambda m, x: x.var()),
        (x3, "bool", lambda m, x: x.argmax()), (x3, "int64", lambda m, x: x.norm()),
        (x3, "int64", lambda m, x: x.softmax(0)), (x3, "int64", lambda m, x: x.log_softmax(-1)),
        (x3, "int64", lambda m, x: x.nanmean()), (x3, "float32", lambda m, x: x.mean(dtype=m.int64)),
        (e, "float32", lambda m, x: x.max()), (e, "float32", lambda m, x: x.max(0)),
        (e, "float32", lambda m, x: x.amax()), (e, "float32", lambda m, x: x.amax(0)),
        (e, "float32", lambda m, x: x.argmax()), (e, "float32", lambda m, x: x.argmin(0)),
        (e, "float32", lambda m, x: m.aminmax(x)), (e, "float32", lambda m, x: m.aminmax(x, dim=0)),
        (e, "float32", lambda m, x: x.norm(float("inf"))), (e, "float32", lambda m, x: x.norm(-1, 0)),
        (x3, "float32", lambda m, x: m.norm(x, dtype=m.float16)),
    ]
    for k, (arr, dtype, f) in enumerate(cases):
        arr = arr.astype(NP_DTYPES.get(dtype, np.float32))
        xt, xp = to_module(torch, arr, dtype, "contiguous"), to_module(pyctorch, arr, dtype, "contiguous")
        with pytest.raises(Exception) as et:
            f(torch, xt)
            print("case", k, "did not raise")
        with pytest.raises(type(et.value)) as ep:
            f(pyctorch, xp)
        assert str(ep.value).split("\n")[0] == str(et.value).split("\n")[0]


@needs_torch
def test_empty_results():
    e = np.zeros((0, 3), np.float32)
    for f in [lambda m, x: x.sum(), lambda m, x: x.prod(), lambda m, x: x.mean(), lambda m, x: x.sum(0),
              lambda m, x: x.mean(0), lambda m, x: x.prod(0), lambda m, x: x.amax(1), lambda m, x: x.max(1),
              lambda m, x: x.argmax(1), lambda m, x: x.var(0), lambda m, x: x.logsumexp(0), lambda m, x: x.norm(),
              lambda m, x: x.all(), lambda m, x: x.any(), lambda m, x: x.count_nonzero(),
              lambda m, x: m.var_mean(x), lambda m, x: x.norm(0)]:
        run_both(f, e, "float32")


@needs_torch
def test_out_argument():
    a = make((3, 4), "float32")
    xt, xp = torch.from_numpy(a), pyctorch.from_numpy(a)
    for op, mk in [("sum", lambda m: m.empty(0)), ("sum", lambda m: m.empty(7, dtype=m.float64)),
                   ("mean", lambda m: m.empty(4)), ("amax", lambda m: m.empty(4)), ("prod", lambda m: m.empty(2, 2)),
                   ("argmax", lambda m: m.empty(0, dtype=m.int64)), ("amin", lambda m: m.empty(4, dtype=m.float64)),
                   ("argmin", lambda m: m.empty(0, dtype=m.int32)), ("logsumexp", lambda m: m.empty(0)),
                   ("all", lambda m: m.empty(0, dtype=m.bool)), ("any", lambda m: m.empty(0, dtype=m.float32)),
                   ("var", lambda m: m.empty(0)), ("std", lambda m: m.empty(0, dtype=m.float64))]:
        ot, op_ = mk(torch), mk(pyctorch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                rt = getattr(torch, op)(xt, 0, out=ot)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    getattr(pyctorch, op)(xp, 0, out=op_)
                continue
            rp = getattr(pyctorch, op)(xp, 0, out=op_)
        assert rp is op_
        assert_same(op_, ot, tol=TOL, what=f"out= {op}")
    vt, it = torch.empty(0), torch.empty(0, dtype=torch.int64)
    vp, ip = pyctorch.empty(0), pyctorch.empty(0, dtype=pyctorch.int64)
    rt, rp = torch.max(xt, 1, out=(vt, it)), pyctorch.max(xp, 1, out=(vp, ip))
    assert rp.values is vp and rp.indices is ip
    assert_same(tuple(rp), tuple(rt), tol=TOL, what="max out=")
    with pytest.raises(RuntimeError):
        pyctorch.max(xp, 1, out=(pyctorch.empty(0, dtype=pyctorch.float64), ip))


@needs_torch
def test_large_parallel_paths():
    big = make((300000,), "float32")
    run_both(lambda m, x: x.sum(), big, "float32")
    run_both(lambda m, x: x.mean(), big, "float32")
    run_both(lambda m, x: x.var(), big, "float32")
    run_both(lambda m, x: x.norm(), big, "float32")
    run_both(lambda m, x: x.argmin(), big, "float32")
    run_both(lambda m, x: x.logsumexp(0), big, "float32")
    mat = make((300, 500), "float32")
    for layout in ["contiguous", "transposed"]:
        for f in [lambda m, x: x.sum(0), lambda m, x: x.sum(1), lambda m, x: x.mean(0), lambda m, x: x.amax(0),
                  lambda m, x: x.argmax(0), lambda m, x: x.max(1), lambda m, x: x.var(0), lambda m, x: x.std(1),
                  lambda m, x: x.softmax(0), lambda m, x: x.log_softmax(1), lambda m, x: x.logsumexp(0),
                  lambda m, x: x.norm(dim=0), lambda m, x: x.prod(1), lambda m, x: (x > 0).all(0),
                  lambda m, x: (x > 0).sum(0), lambda m, x: x.half().sum(1), lambda m, x: x.double().sum(0)]:
            run_both(f, mat, "float32", layout)
    tall = make((100000, 3), "float32")
    run_both(lambda m, x: x.sum(0), tall, "float32")
    run_both(lambda m, x: x.argmax(0), tall, "float32")
    run_both(lambda m, x: x.sum(1), tall, "float32")
    ints = make((200000,), "int64")
    run_both(lambda m, x: x.sum(), ints, "int64")
    run_both(lambda m, x: x.argmax(), ints, "int64")


@needs_torch
def test_overloads_and_edge_cases():
    a = make((3, 4), "float32")
    xt, xp = torch.from_numpy(a), pyctorch.from_numpy(a)
    # max(Tensor, Tensor, out=Tensor) is the elementwise overload even with a 0-d other
    bt, bp = torch.tensor(False), pyctorch.tensor(False)
    assert_same(pyctorch.max(bp, bp, out=pyctorch.tensor(True)), torch.max(bt, bt, out=torch.tensor(True)), tol=TOL,
                what="max out")
    assert_same(pyctorch.min(xp, pyctorch.from_numpy(a[0].copy()), out=pyctorch.empty(0)),
                torch.min(xt, torch.from_numpy(a[0].copy()), out=torch.empty(0)), tol=TOL, what="min out")
    # var over empty reductions is NaN whatever the correction
    e = np.zeros((4, 0, 3), np.float32)
    for corr in (-2, 0, 1):
        run_both(lambda m, x: m.var_mean(x, [1], correction=corr), e, "float32", what=f"empty var corr={corr}")
    # unbiased and correction together is a TypeError, before the dtype check
    with pytest.raises(TypeError):
        pyctorch.var(pyctorch.tensor([True]), [0], False, correction=0)
    # stride-0 (expanded) inputs
    row = make((1, 5), "float32")
    for f in [lambda m, x: x.expand(4, 5).sum(0), lambda m, x: x.expand(4, 5).sum(), lambda m, x: x.expand(4, 5).argmax(0),
              lambda m, x: x.expand(4, 5).var(0), lambda m, x: x.expand(4, 5).softmax(0),
              lambda m, x: x.expand(40000, 5).mean(1), lambda m, x: x.expand(40000, 5).amax()]:
        run_both(f, row, "float32")


# ---------------------------------------------------------------------------------------
# values checked by hand (run without torch)

def test_values_by_hand():
    x = pyctorch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=pyctorch.float32)
    assert x.sum().item() == 21.0
    assert x.sum(0).tolist() == [5.0, 7.0, 9.0]
    assert x.sum(1, keepdim=True).tolist() == [[6.0], [15.0]]
    assert x.mean().item() == 3.5
    assert x.prod().item() == 720.0
    assert x.amax(0).tolist() == [4.0, 5.0, 6.0]
    assert x.max().item() == 6.0
    v, i = x.max(1)
    assert v.tolist() == [3.0, 6.0] and i.tolist() == [2, 2]
    assert x.argmin().item() == 0
    assert x.t().argmax(0).tolist() == [2, 2]
    assert x.var(1).tolist() == [1.0, 1.0]
    assert x.std(1, unbiased=False).tolist() == pytest.approx([math.sqrt(2 / 3)] * 2)
    assert x.norm().item() == pytest.approx(math.sqrt(91))
    assert x.norm(1).item() == 21.0
    assert x.count_nonzero().item() == 6
    assert x.logsumexp(1).tolist() == pytest.approx([math.log(math.exp(1) + math.exp(2) + math.exp(3)),
                                                     math.log(math.exp(4) + math.exp(5) + math.exp(6))], rel=1e-6)
    s = x.softmax(1).tolist()
    assert s[0] == pytest.approx([math.exp(k - 3) / sum(math.exp(j - 3) for j in (1, 2, 3)) for k in (1, 2, 3)], rel=1e-6)
    assert x.log_softmax(1).exp().sum(1).tolist() == pytest.approx([1.0, 1.0], rel=1e-6)
    i = pyctorch.tensor([[1, 2], [3, 4]], dtype=pyctorch.int32)
    assert i.sum().dtype == pyctorch.int64 and i.sum().item() == 10
    b = pyctorch.tensor([True, False, True])
    assert b.sum().item() == 2 and b.all().item() is False and b.any().item() is True
    assert pyctorch.tensor(5.0).sum(0).item() == 5.0
    e = pyctorch.from_numpy(np.zeros((0, 3), np.float32))
    assert e.sum().item() == 0.0 and e.prod().item() == 1.0 and math.isnan(e.mean().item())
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"):
        x.sum(5)
    with pytest.raises(RuntimeError):
        i.mean()


def test_sum_accuracy_float32():
    """A long float32 sum stays close to the float64 answer (pairwise summation)."""
    a = np.full(1 << 22, 0.1, dtype=np.float32)
    got = pyctorch.from_numpy(a).sum().item()
    exact = float(a.astype(np.float64).sum())
    assert abs(got - exact) / exact < 1e-6
    a2 = np.full((1 << 18, 2), 0.1, dtype=np.float32)  # vertical (column) sums
    got2 = pyctorch.from_numpy(a2).sum(0).tolist()
    assert all(abs(g - (1 << 18) * float(np.float32(0.1))) / ((1 << 18) * 0.1) < 1e-5 for g in got2)


def test_numpy_agreement():
    a = RNG.standard_normal((4, 5, 6))
    x = pyctorch.from_numpy(a)
    np.testing.assert_allclose(x.sum((0, 2)).numpy(), a.sum((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(x.mean(1).numpy(), a.mean(1), rtol=1e-12)
    np.testing.assert_allclose(x.var(2, correction=0).numpy(), a.var(2), rtol=1e-10)
    np.testing.assert_allclose(x.std(0).numpy(), a.std(0, ddof=1), rtol=1e-10)
    np.testing.assert_allclose(x.amax((1, 2)).numpy(), a.max((1, 2)))
    np.testing.assert_array_equal(x.argmax(1).numpy(), a.argmax(1))
    np.testing.assert_array_equal(x.permute(2, 0, 1).argmin(0).numpy(), a.argmin(2))
    np.testing.assert_allclose(x.prod(2).numpy(), a.prod(2), rtol=1e-12)
    np.testing.assert_allclose(x.norm(dim=1).numpy(), np.sqrt((a * a).sum(1)), rtol=1e-12)


def test_amax_amin_dim_none_reduces_everything():
    x = pyctorch.tensor([[1., 5.], [3., 2.]])
    assert x.amax(None).item() == 5.0 and x.amin(dim=None).item() == 1.0
    assert pyctorch.amax(x, None, True).shape == (1, 1)
    assert x.amax(1).tolist() == [5.0, 3.0]


@pytest.mark.parametrize("shape, seed, layout, bound", [((100000, 3), 5, "contiguous", 1.5e-4),
                                                        ((200000, 5), 5, "contiguous", 2e-4),
                                                        ((100000, 64), 6, "contiguous", 2.5e-4),
                                                        ((200000, 5), 5, "transposed", 2.5e-4)])
def test_tall_column_sums_are_cascaded(shape, seed, layout, bound):
    """sum/mean/nansum over the rows of a tall float32 matrix: rows are added through a short cascade, so the
    error against a float64 sum stays of torch's order (the naive row-by-row sum of before was 2.7e-4 for the first
    case, 3.9e-4 for the second, 4.6e-4 for the third). Against torch: within 3x torch's own error."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    ref = a.astype(np.float64).sum(0)
    src = np.ascontiguousarray(a.T) if layout == "transposed" else a

    def errors(m):
        x = m.tensor(src)
        x = x.t() if layout == "transposed" else x
        return [np.abs(x.sum(0).numpy() - ref).max(), np.abs(x.mean(0).numpy() * shape[0] - ref).max(),
                np.abs(x.nansum(0).numpy() - ref).max()]

    ours = errors(pyctorch)
    assert max(ours) < bound, (ours, bound)
    try:
        import torch
    except ImportError:
        return
    theirs = errors(torch)
    for e, t in zip(ours, theirs):
        assert e < 3 * t + 2e-5, (ours, theirs)


@pytest.mark.parametrize("shape, dims", [((100000, 64), (0,)), ((100001, 8), (0,)), ((20000, 3, 64), (0,)),
                                         ((3000, 70, 5), (0,)), ((1000, 300, 7), (0, 1)), ((300, 1000, 3), (0, 2)),
                                         ((70000, 33), (0,))])
def test_split_reductions_have_the_same_bits_for_any_thread_count(shape, dims):
    """A reduction with fewer outputs than threads is split across threads at blocks of its cascade, whose values are
    added through the cascade's upper levels: 1, 2 and 3 threads give the same bits (equal chunks per thread did not,
    e.g. (100000, 64).sum(0) in float32), and argmax keeps the first index."""
    x = pyctorch.tensor(np.random.default_rng(7).standard_normal(shape).astype(np.float32))
    x[5, ...] = x[7, ...] = 9.0  # ties: the first index wins
    ops = [lambda t: t.sum(dims), lambda t: t.mean(dims), lambda t: t.nansum(dims), lambda t: t.amax(dims),
           lambda t: t.var(dims), lambda t: pyctorch.linalg.vector_norm(t, dim=dims), lambda t: t.argmax(dims[0]),
           lambda t: t.double().sum(dims), lambda t: t.half().sum(dims)]
    saved = pyctorch.get_num_threads()
    try:
        for op in ops:
            outs = []
            for n in (1, 2, 3):
                pyctorch.set_num_threads(n)
                outs.append(op(x).numpy().tobytes())
            assert outs[0] == outs[1] == outs[2]
    finally:
        pyctorch.set_num_threads(saved)
