"""Sorting, selection, scans, unique, counting and searching (csrc/aten/cpu/sort.c, scan.c, unique.c,
histogram.c, searchsorted.c).

Oracle tests run each case as f(m, *tensors) with m = torch and m = pyctorch on the same
data: results must agree in type (torch.return_types names included), shape, dtype and
values -- indices exactly, also for ties, where torch's algorithms are deterministic --
and when torch raises, pyctorch raises the same exception type with the same message.
The numpy-checked tests at the end run without torch."""
import math

import numpy as np
import pytest

import pyctorch
from comparison import assert_same

try:
    import torch
except ImportError:  # the oracle tests skip; the numpy-checked tests still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
NUM = ALL[1:]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
LAYOUTS = ["contiguous", "transposed", "sliced"]
NP = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
      "float16": np.float32, "bfloat16": np.float32, "float32": np.float32, "float64": np.float64}


def data(shape, dtype, seed=0, special=True, spread=6):
    """Values with many ties; floats also get NaN, +-inf and -0.0."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    lo = 0 if dtype == "uint8" else -spread
    a = rng.integers(lo, spread, size=shape).astype(NP[dtype])
    if dtype in FLOATS:
        a = a * np.asarray(0.5, dtype=a.dtype)
        if special and a.size:
            flat = a.reshape(-1)
            picks = rng.integers(0, flat.size, size=max(1, flat.size // 8))
            flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dtype=a.dtype), size=picks.size)
    return a


def tensor(m, arr, dtype, layout="contiguous"):
    """arr as a tensor of module m in a memory layout (same logical values either way)."""
    if layout == "transposed" and arr.ndim >= 2:
        t = m.from_numpy(np.ascontiguousarray(np.swapaxes(arr, 0, -1)).copy())
        t = t.to(getattr(m, dtype)).transpose(0, -1)
    elif layout == "sliced" and arr.ndim >= 1:
        big = np.repeat(arr, 2, axis=-1)
        t = m.from_numpy(big.copy()).to(getattr(m, dtype))[..., ::2]
    elif layout == "expanded" and arr.ndim >= 1:
        t = m.from_numpy(arr[..., :1].copy()).to(getattr(m, dtype)).expand(*arr.shape)
    else:
        t = m.from_numpy(arr.copy()).to(getattr(m, dtype))
    return t


def as_np(t):
    name = str(t.dtype).split(".")[1]
    if name in ("float16", "bfloat16"):
        return np.array(t.float().tolist(), dtype=np.float64).reshape(tuple(t.shape))
    return np.array(t.tolist(), dtype=np.bool_ if name == "bool" else np.dtype(name)).reshape(tuple(t.shape))


def both(f, arrs, dtypes, layout="contiguous", what="", rtol=0.0, atol=0.0, msg=True):
    """Runs f(m, *tensors) for torch and pyctorch; same results or the same exception."""
    if not isinstance(arrs, (list, tuple)):
        arrs, dtypes = [arrs], [dtypes]
    try:
        e = f(torch, *[tensor(torch, a, d, layout) for a, d in zip(arrs, dtypes)])
    except Exception as ex:  # noqa: BLE001
        with pytest.raises(type(ex)) as info:
            f(pyctorch, *[tensor(pyctorch, a, d, layout) for a, d in zip(arrs, dtypes)])
        if msg:
            assert str(info.value).split("\n")[0] == str(ex).split("\n")[0], what
        return None
    r = f(pyctorch, *[tensor(pyctorch, a, d, layout) for a, d in zip(arrs, dtypes)])
    # exactly (0.0 and -0.0 told apart) unless a tolerance is given
    assert_same(r, e, rtol, atol, exact=not (rtol or atol), what=what or f"{dtypes} {layout}")
    if hasattr(type(e), "n_fields"):  # a torch.return_types struct sequence: its fields are its items
        assert r.values is r[0] and r.indices is r[1], what
    return r


SHAPES = [(), (0,), (1,), (7,), (3, 40), (2, 0, 3), (2, 3, 70)]


# ---------------------------------------------------------------------------------------
# sort, argsort, msort

@needs_torch
@pytest.mark.parametrize("dtype", ALL)
def test_sort_dtypes_ties_and_nan(dtype):
    for shape in SHAPES:
        a = data(shape, dtype, seed=len(shape))
        for dim in ([0, -1] if len(shape) else [0, -1]):
            for desc in (False, True):
                both(lambda m, x: m.sort(x, dim, desc), a, dtype, what=f"sort {shape} {dim} {desc}")
                both(lambda m, x: m.sort(x, dim=dim, descending=desc, stable=True), a, dtype, what="stable")
                both(lambda m, x: x.argsort(dim, desc), a, dtype, what="argsort")


@needs_torch
@pytest.mark.parametrize("layout", LAYOUTS + ["expanded"])
def test_sort_layouts(layout):
    for dtype in ("float32", "int64", "bfloat16"):
        a = data((5, 33), dtype, seed=3)
        for dim in (0, 1):
            both(lambda m, x: m.sort(x, dim), a, dtype, layout, f"sort {layout} {dim}")
            both(lambda m, x: m.sort(x, dim, True), a, dtype, layout, f"sort desc {layout} {dim}")
            both(lambda m, x: m.argsort(x, dim=dim, stable=True, descending=True), a, dtype, layout)
            both(lambda m, x: m.msort(x), a, dtype, layout)


@needs_torch
def test_sort_result_layout():
    # sort / argsort / msort results keep the input's memory layout, as torch's
    a = np.arange(60.0).reshape(3, 4, 5)
    for f in (lambda m, x: x.transpose(0, 2), lambda m, x: x.permute(1, 2, 0)[:, ::2],
              lambda m, x: x[:, :1].expand(3, 4, 5), lambda m, x: x[::2, :, 1:], lambda m, x: x):
        p, t = f(pyctorch, tensor(pyctorch, a, "float32")), f(torch, tensor(torch, a, "float32"))
        for g in (lambda m, y: m.sort(y, 1)[0], lambda m, y: m.sort(y, 0, True)[1], lambda m, y: m.argsort(y, -1),
                  lambda m, y: m.msort(y)):
            r, e = g(pyctorch, p), g(torch, t)
            assert r.stride() == e.stride(), (r.stride(), e.stride())
            assert_same(r, e, exact=True, what="layout")


@needs_torch
def test_sort_large_and_parallel():
    # many rows (threads) and long rows (introsort, heapsort fallback), unstable ties
    for dtype in ("float32", "int32", "float16"):
        a = data((64, 1500), dtype, seed=5, spread=3)
        both(lambda m, x: m.sort(x, 1), a, dtype)
        both(lambda m, x: m.sort(x, 0, True), a, dtype)
    # 1-D integers above the grain size: torch's radix sort is stable
    a = data((40000,), "int64", seed=6, spread=4)
    both(lambda m, x: m.sort(x), a, "int64")
    both(lambda m, x: m.sort(x, descending=True), a, "int64")
    # long stable rows (radix sort) with NaN, +-inf and -0.0, both directions
    for dtype in ("float32", "bfloat16", "int16", "bool"):
        a = data((3, 700), dtype, seed=8, spread=4)
        both(lambda m, x: m.sort(x, dim=1, stable=True), a, dtype)
        both(lambda m, x: m.sort(x, dim=0, descending=True, stable=True), a, dtype, "transposed")
        both(lambda m, x: m.argsort(x, dim=1, descending=True, stable=True), a, dtype)
    # a sorted / reversed input stresses the pivot choice
    for arr in (np.arange(3000.0), np.arange(3000.0)[::-1].copy(), np.zeros(3000)):
        both(lambda m, x: m.sort(x), arr, "float64")
        both(lambda m, x: m.sort(x, descending=True), arr, "float64")


@needs_torch
def test_sort_out_and_errors():
    a = data((4, 5), "float32")
    x, tx = tensor(pyctorch, a, "float32"), tensor(torch, a, "float32")
    v, i = pyctorch.empty(0), pyctorch.empty(0, dtype=pyctorch.int64)
    r = pyctorch.sort(x, 1, out=(v, i))
    e = torch.sort(tx, 1)
    assert r[0] is v and r[1] is i and type(r).__name__ == "sort_out"
    assert_same(tuple(r), tuple(e), exact=True, what="sort out")
    o = pyctorch.empty(0, dtype=pyctorch.int64)
    assert pyctorch.argsort(x, stable=True, out=o) is o
    for f in (lambda m, x: m.sort(x, 2), lambda m, x: m.sort(x, -3), lambda m, x: m.argsort(x, 5),
              lambda m, x: m.sort(x, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64))),
              lambda m, x: m.sort(x, out=(m.empty(0), m.empty(0, dtype=m.int32))),
              lambda m, x: m.msort(x, out=m.empty(0, dtype=m.int64)),
              lambda m, x: m.argsort(x, stable=True, out=m.empty(0, dtype=m.int32))):
        both(f, a, "float32")
    both(lambda m, x: m.sort(x, 0, out=(m.empty(0), m.empty(0, dtype=m.int64), m.empty(0))), a, "float32", msg=False)


# ---------------------------------------------------------------------------------------
# topk, kthvalue, median, nanmedian, mode

@needs_torch
@pytest.mark.parametrize("dtype", NUM)
def test_topk(dtype):
    for shape, dim in (((), 0), ((9,), 0), ((3, 40), 1), ((300,), 0), ((40, 3), 0), ((2, 0), 0)):
        a = data(shape, dtype, seed=7)
        n = a.shape[dim] if a.ndim else 1
        for k in sorted({0, 1, 2, min(3, n), n // 2, n}):
            if k > n:
                continue
            for largest in (True, False):
                for srt in (True, False):
                    both(lambda m, x: m.topk(x, k, dim, largest, srt), a, dtype, what=f"topk {shape} {k} {largest} {srt}")


@needs_torch
def test_topk_errors_and_out():
    a = data((3, 4), "float32")
    for f in (lambda m, x: m.topk(x, 5), lambda m, x: m.topk(x, -1), lambda m, x: m.topk(x, 1, 2),
              lambda m, x: m.topk(x > 0, 1), lambda m, x: m.topk(x, 2, out=m.empty(0)),
              lambda m, x: m.topk(x, 2, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64)))):
        both(f, a, "float32")
    both(lambda m, x: m.topk(x, 2, 0, out=(m.empty(0), m.empty(0, dtype=m.int64))), a, "float32")


@needs_torch
@pytest.mark.parametrize("dtype", ALL)
def test_kthvalue_median_mode(dtype):
    for shape in ((), (1,), (8,), (3, 40), (4, 17, 2)):
        a = data(shape, dtype, seed=11)
        dims = [0, -1] if len(shape) else [0]
        for dim in dims:
            n = a.shape[dim] if a.ndim else 1
            for keepdim in (False, True):
                for k in sorted({1, (n + 1) // 2, n}):
                    both(lambda m, x: m.kthvalue(x, k, dim, keepdim), a, dtype, what=f"kthvalue {shape} {dim} {k}")
                both(lambda m, x: m.median(x, dim, keepdim), a, dtype, what=f"median {shape} {dim}")
                both(lambda m, x: x.nanmedian(dim, keepdim=keepdim), a, dtype, what=f"nanmedian {shape} {dim}")
                both(lambda m, x: m.mode(x, dim, keepdim), a, dtype, what=f"mode {shape} {dim}")
        both(lambda m, x: m.median(x), a, dtype, what=f"median() {shape}")
        both(lambda m, x: m.nanmedian(x), a, dtype, what=f"nanmedian() {shape}")


@needs_torch
def test_selection_layouts_nan_and_empty():
    for layout in LAYOUTS:
        a = data((6, 35), "float32", seed=13)
        both(lambda m, x: m.kthvalue(x, 3, 0), a, "float32", layout)
        both(lambda m, x: m.median(x, 1), a, "float32", layout)
        both(lambda m, x: m.nanmedian(x, 0, True), a, "float32", layout)
        both(lambda m, x: m.mode(x, 1), data((6, 35), "int16", seed=14), "int16", layout)
        both(lambda m, x: m.topk(x, 4, 0), a, "float32", layout)
    nan = np.full((3, 5), np.nan, dtype=np.float32)
    nan[0, 3] = 1.0
    both(lambda m, x: m.median(x, 1), nan, "float32")
    both(lambda m, x: m.nanmedian(x, 1), nan[:, :3].copy(), "float32")  # all-NaN rows of <= 3
    both(lambda m, x: m.nanmedian(x), nan, "float32")
    both(lambda m, x: m.median(x), nan, "float32")
    for dtype in ("float32", "int32", "int64", "int8", "float16"):
        both(lambda m, x: m.median(x), np.zeros(0), dtype)
        both(lambda m, x: m.nanmedian(x), np.zeros(0), dtype)
    e = np.zeros((2, 0))
    for f in (lambda m, x: m.median(x, 1), lambda m, x: m.median(x, 0), lambda m, x: m.nanmedian(x, 1),
              lambda m, x: m.kthvalue(x, 1, 0), lambda m, x: m.kthvalue(x, 1, 1), lambda m, x: m.mode(x, 1),
              lambda m, x: m.mode(x, 0), lambda m, x: m.kthvalue(x, 3, 0)):
        both(f, e, "float32")


@needs_torch
def test_selection_errors_and_out():
    a = data((3, 4), "float32")
    for f in (lambda m, x: m.kthvalue(x, 0), lambda m, x: m.kthvalue(x, 5), lambda m, x: m.kthvalue(x, 1, 3),
              lambda m, x: m.kthvalue(x > 0, 1), lambda m, x: m.median(x > 0), lambda m, x: m.median(x > 0, 0),
              lambda m, x: m.nanmedian(x > 0), lambda m, x: m.kthvalue(x[0, 0], 2),
              lambda m, x: m.kthvalue(x, 1, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64))),
              lambda m, x: m.kthvalue(x, 1, out=(m.empty(0), m.empty(0, dtype=m.int32))),
              lambda m, x: m.median(x, 0, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64))),
              lambda m, x: m.median(x, 0, out=(m.empty(0), m.empty(0, dtype=m.int32))),
              lambda m, x: m.mode(x, 0, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64))),
              lambda m, x: m.mode(x, 0, out=(m.empty(0), m.empty(0, dtype=m.int32))),
              lambda m, x: m.mode(x, 0, out=m.empty(0))):
        both(f, a, "float32")
    for f in (lambda m, x: m.kthvalue(x, 2, 1, out=(m.empty(0), m.empty(0, dtype=m.int64))),
              lambda m, x: m.median(x, 1, True, out=(m.empty(0), m.empty(0, dtype=m.int64))),
              lambda m, x: m.nanmedian(x, 1, out=(m.empty(0), m.empty(0, dtype=m.int64))),
              lambda m, x: m.mode(x, 1, out=[m.empty(0), m.empty(0, dtype=m.int64)])):
        both(f, a, "float32")


# ---------------------------------------------------------------------------------------
# scans

@needs_torch
@pytest.mark.parametrize("dtype", ALL)
def test_cumsum_cumprod(dtype):
    for shape in ((), (0,), (9,), (3, 7), (2, 0, 3), (4, 5, 6)):
        a = data(shape, dtype, seed=17, special=False, spread=3)
        for dim in ([0, -1] if len(shape) else [0, -1]):
            for layout in ("contiguous", "transposed"):
                tol = dict(rtol=1e-2, atol=1e-2) if dtype in ("float16", "bfloat16") else dict(rtol=1e-6, atol=1e-6)
                both(lambda m, x: m.cumsum(x, dim), a, dtype, layout, f"cumsum {shape} {dim}", **tol)
                both(lambda m, x: x.cumprod(dim), a, dtype, layout, f"cumprod {shape} {dim}", **tol)
        both(lambda m, x: m.cumsum(x, 0, dtype=m.float64), a, dtype, what="cumsum dtype")
        both(lambda m, x: m.cumprod(x, -1, dtype=m.int32), a, dtype, what="cumprod dtype")
        both(lambda m, x: m.cumsum(x, 0, dtype=m.bool), a, dtype, what="cumsum bool")


@needs_torch
def test_cumsum_out_inplace_special():
    a = np.array([100, 100, 7], dtype=np.int64)
    both(lambda m, x: m.cumsum(x, 0, out=m.empty(0, dtype=m.int8)), a, "int64")
    both(lambda m, x: m.cumsum(x, 0, out=m.empty(0, dtype=m.float32)), a, "int64")
    both(lambda m, x: m.cumsum(x, 0, dtype=m.float64, out=m.empty(0, dtype=m.float32)), a, "int64")
    both(lambda m, x: m.cumsum(x, 0, out=m.empty(3, 2)[:, 0]), a, "float32")
    both(lambda m, x: x.cumsum_(0), a, "int8")
    both(lambda m, x: x.cumprod_(0), a, "int16")
    both(lambda m, x: x.cumsum_(0, dtype=m.int64), a, "int8")
    x = pyctorch.tensor([1.0, 2.0, 3.0])
    assert x.cumsum_(0) is x and x.tolist() == [1.0, 3.0, 6.0]
    # float32 accumulates in double, as torch's CPU kernel
    b = np.full(300000, 0.1, dtype=np.float32)
    both(lambda m, x: m.cumsum(x, 0)[-1:], b, "float32")
    s = data((5, 9), "float64", seed=19)
    both(lambda m, x: m.cumsum(x, 1), s, "float64")
    both(lambda m, x: m.cumprod(x, 0), s, "float64")
    both(lambda m, x: m.cumsum(x, 2), s, "float64")


@needs_torch
@pytest.mark.parametrize("dtype", ALL)
def test_cummax_cummin_logcumsumexp(dtype):
    for shape in ((), (0,), (11,), (3, 9), (2, 4, 5)):
        a = data(shape, dtype, seed=23)
        for dim in ([0, -1] if len(shape) else [0]):
            for layout in ("contiguous", "transposed"):
                both(lambda m, x: m.cummax(x, dim), a, dtype, layout, f"cummax {shape} {dim}")
                both(lambda m, x: x.cummin(dim), a, dtype, layout, f"cummin {shape} {dim}")
                tol = dict(rtol=1e-2, atol=1e-2) if dtype in ("float16", "bfloat16") else dict(rtol=1e-6, atol=1e-6)
                both(lambda m, x: m.logcumsumexp(x, dim), a, dtype, layout, f"logcumsumexp {shape}", **tol)


@needs_torch
def test_scan_errors_and_out():
    a = data((3, 4), "float32", special=False)
    for f in (lambda m, x: m.cumsum(x, 2), lambda m, x: m.cummax(x, -3), lambda m, x: m.logcumsumexp(x, 5),
              lambda m, x: m.cummax(x, 0, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64))),
              lambda m, x: m.cummin(x, 0, out=(m.empty(0), m.empty(0, dtype=m.int32))),
              lambda m, x: m.logcumsumexp(x, 0, out=m.empty(0, dtype=m.float64)),
              lambda m, x: m.cumsum(x, 0, dtype=m.float64, out=m.empty(0)),
              lambda m, x: m.cumsum(x, 0, dtype=m.bool), lambda m, x: x.to(m.int8).cumsum_(0, dtype=m.int64)):
        both(f, a, "float32")
    both(lambda m, x: m.cummax(x, 1, out=(m.empty(0), m.empty(0, dtype=m.int64))), a, "float32")
    both(lambda m, x: m.cummin(x, 0, out=(m.empty(0), m.empty(0, dtype=m.int64))), a, "float32")
    both(lambda m, x: m.logcumsumexp(x, 1, out=m.empty(0)), a, "float32", rtol=1e-6, atol=1e-6)
    inf = np.array([-np.inf, -np.inf, 1.0, np.inf, np.inf, np.nan, 2.0], dtype=np.float64)
    both(lambda m, x: m.logcumsumexp(x, 0), inf, "float64")
    both(lambda m, x: m.logcumsumexp(x, 0), inf, "float32")


# ---------------------------------------------------------------------------------------
# unique, unique_consecutive

@needs_torch
@pytest.mark.parametrize("dtype", ALL)
def test_unique(dtype):
    for shape in ((), (0,), (9,), (3, 8), (2, 0, 2)):
        a = data(shape, dtype, seed=29)
        for inv in (False, True):
            for cnt in (False, True):
                both(lambda m, x: m.unique(x, return_inverse=inv, return_counts=cnt), a, dtype, what=f"unique {shape}")
                both(lambda m, x: x.unique(sorted=False, return_inverse=inv, return_counts=cnt), a, dtype)
                both(lambda m, x: m.unique_consecutive(x, return_inverse=inv, return_counts=cnt), a, dtype)
    rows = data((6, 3), dtype, seed=31, spread=2)
    rows[3] = rows[0]
    rows[4] = rows[0]
    for dim in (0, 1, -1):
        both(lambda m, x: m.unique(x, dim=dim, return_inverse=True, return_counts=True), rows, dtype, what="unique dim")
        both(lambda m, x: m.unique_consecutive(x, True, True, dim), rows, dtype, what="unique_consecutive dim")
        both(lambda m, x: m.unique(x, dim=dim), rows, dtype, "transposed")


@needs_torch
def test_unique_special():
    z = np.array([0.0, -0.0, 0.0, -0.0] * 6, dtype=np.float32)
    both(lambda m, x: m.unique(x, return_counts=True), z, "float32")
    both(lambda m, x: m.unique(x), -z, "float32")
    cons = np.array([1, 1, 2, 2, 3, 1, 1, 2], dtype=np.int64)
    both(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True), cons, "int64")
    both(lambda m, x: m.unique_consecutive(x.view(2, 4), return_inverse=True), cons, "int64")
    big = data((3000,), "int32", seed=37, spread=50)
    both(lambda m, x: m.unique(x, return_inverse=True, return_counts=True), big, "int32")
    for shape, dim in (((2, 0), 0), ((0, 2), 0), ((0, 2), 1), ((2, 0, 3), 1), ((0, 3), 1), ((0, 0), 0)):
        both(lambda m, x: m.unique(x, dim=dim, return_inverse=True, return_counts=True), np.zeros(shape), "float32")
        both(lambda m, x: m.unique_consecutive(x, dim=dim, return_counts=True), np.zeros(shape), "float32")
    both(lambda m, x: m.unique(x, dim=0), np.array(3.0), "float32")
    both(lambda m, x: m.unique(x, dim=2), np.zeros((2, 2)), "float32")
    # torch.unique_consecutive's boolean_dispatch reads positional flags from swapped positions
    for f in (lambda m, x: m.unique_consecutive(x, True), lambda m, x: m.unique_consecutive(x, True, False),
              lambda m, x: m.unique_consecutive(x, False, True), lambda m, x: m.unique_consecutive(x, True, True),
              lambda m, x: m.unique_consecutive(x, True, return_counts=True),
              lambda m, x: m.unique_consecutive(x, True, return_counts=False),
              lambda m, x: m.unique_consecutive(x.view(4, 2), True, False, 0),
              lambda m, x: m.unique_consecutive(x, False, True, 0), lambda m, x: x.unique_consecutive(True, False),
              lambda m, x: m.unique(x, True, True), lambda m, x: m.unique(x, False, False, True)):
        both(f, cons, "int64")
    nanrows = np.array([[np.nan, 1], [np.nan, 1], [0, 1]], dtype=np.float32)
    both(lambda m, x: m.unique(x, dim=0, return_counts=True), nanrows, "float32")
    both(lambda m, x: m.unique_consecutive(x, dim=0, return_counts=True), nanrows, "float32")


# ---------------------------------------------------------------------------------------
# bincount, histc, searchsorted, bucketize

@needs_torch
def test_bincount():
    a = np.array([0, 1, 1, 3, 7, 1], dtype=np.int64)
    w = np.array([0.5, 0.25, 1, 2, -1, 3], dtype=np.float64)
    for dtype in ("uint8", "int8", "int16", "int32", "int64", "bool", "float32"):
        both(lambda m, x: m.bincount(x), a, dtype)
        both(lambda m, x: x.bincount(minlength=10), a, dtype)
    for wd in ("float32", "float64", "int64", "float16", "bool"):
        both(lambda m, x, y: m.bincount(x, y), [a, w], ["int64", wd])
        both(lambda m, x, y: m.bincount(x, weights=y, minlength=12), [a, w], ["int32", wd])
    for f in (lambda m, x: m.bincount(x - 2), lambda m, x: m.bincount(x.view(2, 3)), lambda m, x: m.bincount(x[0]),
              lambda m, x: m.bincount(x, minlength=-1), lambda m, x: m.bincount(x, m.ones(2)),
              lambda m, x: m.bincount(x[:0]), lambda m, x: m.bincount(x[:0], minlength=3),
              lambda m, x: m.bincount(x[:0], m.ones(0), minlength=2), lambda m, x: m.bincount(x, x.float()[:, None])):
        both(f, a, "int64")
    both(lambda m, x: m.bincount(x[::2]), a, "int64", "contiguous")


@needs_torch
@pytest.mark.parametrize("dtype", FLOATS)
def test_histc(dtype):
    a = data((50,), dtype, seed=41, special=False) * np.float32(1.7)
    for bins, lo, hi in ((100, 0, 0), (4, 0, 3), (7, -2, 2), (1, -1, 1), (13, 0.5, 0.5), (5, -1.0, 2.5)):
        both(lambda m, x: m.histc(x, bins, lo, hi), a, dtype, what=f"histc {bins} {lo} {hi}")
        both(lambda m, x: x.histc(bins=bins, min=lo, max=hi), a, dtype, "sliced")
    both(lambda m, x: m.histc(x, 4), np.ones(5), dtype)
    both(lambda m, x: m.histc(x, 4), np.zeros(0), dtype)
    both(lambda m, x: m.histc(x, 3), np.array(2.0), dtype)
    both(lambda m, x: m.histc(x.view(5, 10), 6), a, dtype)
    both(lambda m, x: m.histc(x, 6, 0, 2, out=m.empty(0, dtype=x.dtype)), a, dtype)


@needs_torch
def test_histc_errors():
    a = np.array([1.0, 2.0, 1.0, np.inf], dtype=np.float32)
    for f in (lambda m, x: m.histc(x, 0), lambda m, x: m.histc(x, -3), lambda m, x: m.histc(x[:3], 3, 3, 1),
              lambda m, x: m.histc(x, 3), lambda m, x: m.histc(x[:3], 3, float("nan"), 1),
              lambda m, x: m.histc(x[:3].long(), 3), lambda m, x: m.histc(x[:3].long(), 0),
              lambda m, x: m.histc(x[:3], 3, out=m.empty(0, dtype=m.float64)),
              lambda m, x: m.histc(x[:1] * float("nan"), 3), lambda m, x: m.histc(x * float("nan"), 3)):
        both(f, a, "float32")


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # torch warns about non-contiguous inputs
@pytest.mark.parametrize("dtype", NUM)
def test_searchsorted_bucketize(dtype):
    bd = np.sort(data((9,), dtype, seed=43, special=False))
    v = data((3, 5), dtype, seed=44, special=False)
    for right in (False, True):
        both(lambda m, b, x: m.searchsorted(b, x, right=right), [bd, v], [dtype, dtype])
        both(lambda m, b, x: m.searchsorted(b, x, side="right" if right else "left", out_int32=True), [bd, v],
             [dtype, dtype])
        both(lambda m, x, b: m.bucketize(x, b, right=right), [v, bd], [dtype, dtype])
        both(lambda m, x, b: m.bucketize(x, b, out_int32=right), [v, bd], [dtype, "float64"])
    bd2 = np.sort(data((3, 6), dtype, seed=45, special=False), axis=1)
    both(lambda m, b, x: m.searchsorted(b, x), [bd2, v[:, :4]], [dtype, dtype])
    both(lambda m, b, x: m.searchsorted(b, x, right=True), [bd2, v[:, :4]], [dtype, dtype], "transposed")
    both(lambda m, b, x: m.searchsorted(b, x[0, 0]), [bd, v], [dtype, dtype])


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_searchsorted_special():
    bd = np.array([1.0, 3, 5, 7, 9])
    v = np.array([[3, 6, 9], [0, 10, 5]], dtype=np.float64)
    both(lambda m, b, x: m.searchsorted(b, 5), [bd, v], ["float32", "float32"])
    both(lambda m, b, x: m.searchsorted(b, 5.5, out_int32=True), [bd, v], ["int64", "float32"])
    both(lambda m, b, x: m.bucketize(4, b), [bd, v], ["int32", "float32"])
    both(lambda m, b, x: m.searchsorted(b, x), [bd, v], ["int64", "float32"])
    nanb = np.array([1.0, np.nan, np.nan])
    both(lambda m, b, x: m.searchsorted(b, x), [nanb, np.array([np.nan, 2, 0])], ["float32", "float32"])
    both(lambda m, b, x: m.searchsorted(b, x, right=True), [nanb, np.array([np.nan, 2, 0])], ["float32", "float32"])
    unsorted = np.array([[5, 1, 3, 2], [9, 7, 8, 6]], dtype=np.int64)
    sorter = np.argsort(unsorted, axis=1, kind="stable")
    q = np.array([[2, 4, 6], [6, 10, 0]], dtype=np.int64)
    both(lambda m, b, x, s: m.searchsorted(b, x, sorter=s), [unsorted, q, sorter], ["int64"] * 3)
    both(lambda m, b, x, s: m.searchsorted(b[0], x[0], sorter=s[0], side="right"), [unsorted, q, sorter], ["int64"] * 3)
    out = lambda m: m.empty(0, dtype=m.int64)  # noqa: E731
    both(lambda m, b, x: m.searchsorted(b, x, out=out(m)), [bd, v], ["float32", "float32"])
    errs = (lambda m, b, x, s: m.searchsorted(b, x, side="middle"),
            lambda m, b, x, s: m.searchsorted(b, x, side="left", right=True),
            lambda m, b, x, s: m.searchsorted(b[0, 0], x),
            lambda m, b, x, s: m.searchsorted(b, x[0]),
            lambda m, b, x, s: m.searchsorted(b, 3),
            lambda m, b, x, s: m.searchsorted(b, x, sorter=s[:1]),
            lambda m, b, x, s: m.searchsorted(b, x, sorter=s.float()),
            lambda m, b, x, s: m.searchsorted(b, x, sorter=s + 3),
            lambda m, b, x, s: m.searchsorted(b[0], x, out=m.empty(0, dtype=m.int32)),
            lambda m, b, x, s: m.searchsorted(b[0], x, out_int32=True, out=m.empty(0, dtype=m.int64)),
            lambda m, b, x, s: m.searchsorted(b[0] > 2, x > 2),
            lambda m, b, x, s: m.bucketize(x, b),
            lambda m, b, x, s: m.bucketize(x, b[0, 0]))
    for f in errs:
        both(f, [unsorted, q, sorter], ["int64"] * 3)
    assert not hasattr(pyctorch.Tensor, "searchsorted") and not hasattr(pyctorch.Tensor, "bucketize")


# ---------------------------------------------------------------------------------------
# numpy-checked (always run)

def P(a, dtype=None):
    t = pyctorch.from_numpy(np.asarray(a).copy())
    return t.to(getattr(pyctorch, dtype)) if dtype else t


def test_np_sort_argsort_values():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 50))
    r = pyctorch.sort(P(a), dim=1)
    assert type(r).__name__ == "sort" and type(r).__module__ == "torch.return_types"
    np.testing.assert_array_equal(as_np(r.values), np.sort(a, axis=1))
    np.testing.assert_array_equal(as_np(r.indices), np.argsort(a, axis=1))  # distinct values: one answer
    st = pyctorch.sort(P(np.array([2, 1, 2, 1, 2] * 10)), stable=True)
    np.testing.assert_array_equal(as_np(st.indices), np.argsort(np.array([2, 1, 2, 1, 2] * 10), kind="stable"))
    d = pyctorch.sort(P(np.array([1.0, np.nan, -np.inf, 3.0])), descending=True)
    assert as_np(d.indices).tolist() == [1, 3, 0, 2]
    assert as_np(pyctorch.argsort(P(a), dim=0)).tolist() == np.argsort(a, axis=0).tolist()
    np.testing.assert_array_equal(as_np(pyctorch.msort(P(a))), np.sort(a, axis=0))
    assert as_np(pyctorch.sort(P(np.array(5.0))).values).tolist() == 5.0


def test_np_selection():
    rng = np.random.default_rng(2)
    a = rng.permutation(101).astype(np.float32)
    t = P(a)
    v, i = pyctorch.topk(t, 5)
    assert as_np(v).tolist() == [100, 99, 98, 97, 96] and a[as_np(i)].tolist() == as_np(v).tolist()
    assert pyctorch.kthvalue(t, 10).values.item() == 9 and a[pyctorch.kthvalue(t, 10).indices.item()] == 9
    assert pyctorch.median(t).item() == 50.0 and pyctorch.median(P(np.arange(4.0))).item() == 1.0
    assert pyctorch.nanmedian(P(np.array([1.0, np.nan, 3.0, 2.0]))).item() == 2.0
    assert math.isnan(pyctorch.median(P(np.array([1.0, np.nan, 3.0]))).item())
    m = pyctorch.mode(P(np.array([[1, 2, 2, 3, 3, 3], [5, 5, 4, 4, 1, 0]])), 1)
    assert as_np(m.values).tolist() == [3, 4] and as_np(m.indices).tolist() == [5, 3]
    r = pyctorch.median(P(np.array([[3.0, 1.0, 2.0], [6.0, 5.0, 4.0]])), 1, keepdim=True)
    assert tuple(r.values.shape) == (2, 1) and as_np(r.indices).tolist() == [[2], [1]]


def test_np_scans():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 6))
    np.testing.assert_allclose(as_np(pyctorch.cumsum(P(a), 1)), np.cumsum(a, 1), rtol=1e-12)
    np.testing.assert_allclose(as_np(pyctorch.cumprod(P(a), 0)), np.cumprod(a, 0), rtol=1e-12)
    np.testing.assert_allclose(as_np(pyctorch.logcumsumexp(P(a), 1)), np.logaddexp.accumulate(a, 1), rtol=1e-12)
    i = pyctorch.cumsum(P(np.array([1, 2, 3], dtype=np.int8)), 0)
    assert str(i.dtype).endswith("int64") and as_np(i).tolist() == [1, 3, 6]
    v, idx = pyctorch.cummax(P(np.array([1.0, 3.0, 2.0, 3.0, np.nan, 5.0])), 0)
    assert as_np(idx).tolist() == [0, 1, 1, 3, 4, 4]
    np.testing.assert_array_equal(as_np(v), [1, 3, 3, 3, np.nan, np.nan])
    assert as_np(pyctorch.cummin(P(np.array([3, 1, 2, 1])), 0).indices).tolist() == [0, 1, 1, 3]


def test_np_unique_counts_search():
    a = np.array([3, 1, 2, 3, 1, 1], dtype=np.int64)
    u, inv, cnt = pyctorch.unique(P(a), return_inverse=True, return_counts=True)
    nu, ninv, ncnt = np.unique(a, return_inverse=True, return_counts=True)
    assert as_np(u).tolist() == nu.tolist() and as_np(inv).tolist() == ninv.tolist() and as_np(cnt).tolist() == ncnt.tolist()
    rows = np.array([[1, 2], [0, 5], [1, 2]])
    ud, invd = pyctorch.unique(P(rows), dim=0, return_inverse=True)
    assert as_np(ud).tolist() == [[0, 5], [1, 2]] and as_np(invd).tolist() == [1, 0, 1]
    assert as_np(pyctorch.unique_consecutive(P(np.array([1, 1, 2, 1])))).tolist() == [1, 2, 1]
    assert as_np(pyctorch.bincount(P(a))).tolist() == np.bincount(a).tolist()
    w = np.array([0.5, 1, 2, 3, 4, 5])
    np.testing.assert_allclose(as_np(pyctorch.bincount(P(a), P(w))), np.bincount(a, w))
    x = np.array([0.1, 0.5, 0.9, 1.0, -1.0, 2.0, 0.5])
    np.testing.assert_array_equal(as_np(pyctorch.histc(P(x), bins=4, min=0, max=1)),
                                  np.histogram(x, bins=4, range=(0, 1))[0])
    bd = np.array([1, 3, 5, 7])
    q = np.array([0, 1, 4, 7, 8])
    assert as_np(pyctorch.searchsorted(P(bd), P(q))).tolist() == np.searchsorted(bd, q).tolist()
    assert as_np(pyctorch.searchsorted(P(bd), P(q), right=True)).tolist() == np.searchsorted(bd, q, "right").tolist()
    assert as_np(pyctorch.bucketize(P(q), P(bd))).tolist() == np.searchsorted(bd, q).tolist()
