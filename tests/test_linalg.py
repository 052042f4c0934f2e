"""Linear algebra ops (csrc/aten/cpu/blas.c and the product files beside it): matmul and friends, einsum, tensordot,
kron, trace and the linalg norms.

Two kinds of tests: numpy-checked ones that always run, and oracle comparisons
against torch (values, dtypes, shapes, error types and messages) that run when torch
is installed (`_torch()` skips them otherwise).
"""
import math
import warnings

import numpy as np
import pytest

import pyctorch as pt
from comparison import assert_same, assert_same_outcome

RNG = np.random.default_rng(1234)


def _torch():
    return pytest.importorskip("torch")


def P(a):
    a = np.asarray(a)
    return pt.from_numpy(a if a.flags.c_contiguous else a.copy())


def T(torch, a):
    return torch.from_numpy(np.array(a))


def rand(*shape, dtype=np.float32, scale=1.0):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-5, 6, size=shape).astype(dtype)
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def einsum(eq, *ops):
    # what pyctorch.einsum (the Python wrapper) does with varargs operands
    return pt._C._einsum(eq, list(ops))


# --------------------------------------------------------------------------------------
# numpy-checked tests (always run)
# --------------------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),                 # dot
    ((2, 3), (3,)),               # mv
    ((3,), (3, 4)),               # vector @ matrix
    ((2, 3), (3, 4)),             # mm
    ((5, 2, 3), (3,)),            # batched @ vector (folded into mv)
    ((5, 2, 3), (3, 4)),          # batched @ matrix (folded into mm)
    ((3,), (5, 3, 4)),            # vector @ batched
    ((2, 3), (5, 3, 4)),          # matrix @ batched
    ((5, 2, 3), (5, 3, 4)),       # bmm
    ((1, 2, 3), (5, 3, 4)),       # broadcast batch
    ((5, 2, 3), (1, 3, 4)),
    ((2, 1, 2, 3), (3, 3, 4)),    # multi-dim broadcast batch
    ((4, 1, 2, 3), (1, 5, 3, 4)),
    ((2, 3, 2, 3), (3,)),
    ((7, 1, 9), (9, 1)),          # n = 1 / m = 1 edge layouts
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_broadcasting_vs_numpy(sa, sb, dtype):
    a, b = rand(*sa, dtype=dtype), rand(*sb, dtype=dtype)
    r = pt.matmul(P(a), P(b))
    assert r.dtype == (pt.float32 if dtype == np.float32 else pt.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_same(r, np.asarray(np.matmul(a, b)), tol, tol)
    assert_same(P(a) @ P(b), np.asarray(np.matmul(a, b)), tol, tol)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.int8, np.uint8])
def test_matmul_integer_dtypes(dtype):
    for sa, sb in [((4, 5), (5, 3)), ((2, 4, 5), (2, 5, 3)), ((5,), (5,)), ((4, 5), (5,))]:
        a, b = rand(*sa, dtype=dtype), rand(*sb, dtype=dtype)
        r = pt.matmul(P(a), P(b))
        assert r.numpy().dtype == dtype
        np.testing.assert_array_equal(r.numpy(), np.matmul(a, b))


def test_integer_matmul_wraps_like_fixed_width():
    a = np.full((2, 2), 100, np.int8)
    np.testing.assert_array_equal(pt.mm(P(a), P(a)).numpy(), np.full((2, 2), 32, np.int8))
    a = np.full((2, 2), 200, np.uint8)
    b = np.full((2, 2), 3, np.uint8)
    np.testing.assert_array_equal(pt.mm(P(a), P(b)).numpy(), np.full((2, 2), 176, np.uint8))
    big = np.full((3, 3), 2**62, np.int64)
    np.testing.assert_array_equal(pt.mm(P(big), P(np.ones((3, 3), np.int64))).numpy(),
                                  np.full((3, 3), (3 * 2**62) - 2**64, np.int64))


def test_large_integer_matmul_blocked_loop():
    a, b = rand(70, 300, dtype=np.int32), rand(300, 290, dtype=np.int32)
    np.testing.assert_array_equal(pt.mm(P(a), P(b)).numpy(), a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (3, 5, 7), (64, 48, 80), (130, 70, 90), (1, 200, 100), (200, 1, 100)])
def test_mm_transposed_and_strided_operands(m, n, k):
    a, b = rand(m, k), rand(k, n)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    at = P(np.ascontiguousarray(a.T)).t()          # column-major views
    bt = P(np.ascontiguousarray(b.T)).t()
    for x in (P(a), at):
        for y in (P(b), bt):
            assert_same(pt.mm(x, y), np.asarray(ref), 1e-4, 1e-4, check_dtype=False)
    # inner stride != 1 in both orientations: packed before BLAS
    a2 = np.zeros((m, 2 * k), np.float32)
    a2[:, ::2] = a
    b2 = np.zeros((2 * k, 3 * n), np.float32)
    b2[::2, ::3] = b
    assert_same(pt.mm(P(a2)[:, ::2], P(b2)[::2, ::3]), np.asarray(ref), 1e-4, 1e-4, check_dtype=False)
    # column-major result through out= (C^T = B^T A^T)
    out = P(np.zeros((n, m), np.float32)).t()
    r = pt.mm(P(a), P(b), out=out)
    assert r is out
    assert_same(out, np.asarray(ref), 1e-4, 1e-4, check_dtype=False)


def test_expanded_operands():
    a = rand(1, 4)
    b = rand(4, 3)
    ea = P(a).expand(5, 4)              # row stride 0
    assert_same(pt.mm(ea, P(b)), np.asarray(np.repeat(a, 5, 0) @ b), 1e-5, 1e-5)
    ev = P(rand(1)).expand(4)           # vector with stride 0
    assert_same(pt.mv(P(b.T.copy()), ev), np.asarray(b.T @ np.repeat(ev.numpy()[:1], 4)), 1e-5, 1e-5)
    assert_same(pt.dot(ev, P(b[:, 0].copy())), np.asarray(np.repeat(ev.numpy()[:1], 4) @ b[:, 0]), 1e-5, 1e-5)


@pytest.mark.parametrize("sa,sb", [((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 3), (3, 0)), ((0,), (0,)),
                                   ((5, 0, 3), (3, 2)), ((3, 2, 0), (0, 4)), ((2, 0), (0,))])
def test_empty_dims(sa, sb):
    a, b = rand(*sa), rand(*sb)
    r = pt.matmul(P(a), P(b))
    assert_same(r, np.asarray(np.matmul(a, b)), 1e-5, 1e-5)
    if 0 not in r.shape and r.numel() > 0:
        assert np.all(r.numpy() == 0)   # k == 0 gives zeros


def test_k_zero_ignores_garbage_output():
    out = P(np.full((2, 4), np.nan, np.float32))
    pt.mm(P(rand(2, 0)), P(rand(0, 4)), out=out)
    assert np.all(out.numpy() == 0)


@pytest.mark.parametrize("pdt", ["float16", "bfloat16"])
def test_reduced_float_matmul(pdt):
    dt = getattr(pt, pdt)
    for sa, sb in [((33, 65), (65, 17)), ((3, 4), (4, 2)), ((2, 3, 4), (2, 4, 5)), ((7,), (7,)), ((6, 7), (7,))]:
        a, b = rand(*sa), rand(*sb)
        r = pt.matmul(P(a).to(dt), P(b).to(dt))
        assert r.dtype == dt
        ref = np.matmul(P(a).to(dt).to(pt.float32).numpy(), P(b).to(dt).to(pt.float32).numpy())
        tol = 1e-2 if pdt == "float16" else 4e-2
        assert_same(r.to(pt.float32), np.asarray(ref), tol, tol)


def test_dot_vdot_inner_outer_kron():
    a, b = rand(7), rand(7)
    assert_same(pt.dot(P(a), P(b)), np.asarray(np.dot(a, b)), 1e-5, 1e-5)
    assert_same(pt.vdot(P(a), P(b)), np.asarray(np.vdot(a, b)), 1e-5, 1e-5)
    assert_same(P(a).dot(P(b)), np.asarray(np.dot(a, b)), 1e-5, 1e-5)
    s, t = rand(20), rand(7)
    assert_same(pt.dot(P(s)[::3], P(t)), np.asarray(np.dot(s[::3], t)), 1e-5, 1e-5)      # strided vector
    for sa, sb in [((3,), (3,)), ((2, 3), (4, 3)), ((2, 4, 3), (5, 3)), ((3,), (2, 3))]:
        x, y = rand(*sa), rand(*sb)
        assert_same(pt.inner(P(x), P(y)), np.asarray(np.inner(x, y)), 1e-5, 1e-5)
        assert_same(pt.kron(P(x), P(y)), np.asarray(np.kron(x, y)), 1e-5, 1e-5)
    x, y = rand(3), rand(4)
    assert_same(pt.outer(P(x), P(y)), np.asarray(np.outer(x, y)), 1e-5, 1e-5)
    assert_same(pt.ger(P(x), P(y)), np.asarray(np.outer(x, y)), 1e-5, 1e-5)
    assert_same(pt.inner(P(np.array(2.0, np.float32)), P(y)), np.asarray(2 * y), 1e-5, 1e-5)
    ii = np.arange(4, dtype=np.int64)
    np.testing.assert_array_equal(pt.outer(P(ii), P(ii)).numpy(), np.outer(ii, ii))
    np.testing.assert_array_equal(pt.kron(P(np.eye(2, dtype=np.int64)), P(ii.reshape(2, 2))).numpy(),
                                  np.kron(np.eye(2, dtype=np.int64), ii.reshape(2, 2)))


def test_tensordot_vs_numpy():
    a, b = rand(3, 4, 5), rand(4, 3, 2)
    assert_same(pt.tensordot(P(a), P(b), dims=([1, 0], [0, 1])), np.asarray(np.tensordot(a, b, axes=([1, 0], [0, 1]))),
                1e-4, 1e-5)
    a, b = rand(3, 4, 5), rand(4, 5, 6)
    assert_same(pt.tensordot(P(a), P(b)), np.asarray(np.tensordot(a, b)), 1e-4, 1e-5)
    assert_same(pt.tensordot(P(a), P(b), 0), np.asarray(np.tensordot(a, b, 0)), 1e-5, 1e-5)
    assert_same(pt.tensordot(P(a), P(b), dims=([2], [1])), np.asarray(np.tensordot(a, b, axes=([2], [1]))), 1e-4, 1e-5)
    assert_same(pt.tensordot(P(a), P(b), dims=pt.tensor([[1, 2], [0, 1]])),
                np.asarray(np.tensordot(a, b, axes=([1, 2], [0, 1]))), 1e-4, 1e-5)


def test_trace():
    a = rand(4, 6)
    assert_same(pt.trace(P(a)), np.asarray(np.trace(a)), 1e-5, 1e-5)
    assert_same(P(a).t().trace(), np.asarray(np.trace(a)), 1e-5, 1e-5)
    i = rand(3, 3, dtype=np.int32)
    r = pt.trace(P(i))
    assert r.dtype == pt.int64
    assert r.item() == np.trace(i)
    assert pt.trace(P(rand(0, 3))).item() == 0


def test_addmm_addmv_baddbmm_vs_formula():
    x, m1, m2 = rand(4, 5), rand(4, 3), rand(3, 5)
    for beta, alpha in [(1, 1), (0.5, 2.0), (0, 1), (2, 0)]:
        assert_same(pt.addmm(P(x), P(m1), P(m2), beta=beta, alpha=alpha), np.asarray(beta * x + alpha * (m1 @ m2)),
                    1e-5, 1e-5)
        assert_same(pt.addmm(P(x[0]), P(m1), P(m2), beta=beta, alpha=alpha),
                    np.asarray(beta * x[0] + alpha * (m1 @ m2)), 1e-5, 1e-5)
        v = rand(3)
        assert_same(pt.addmv(P(x[:, 0]), P(m1), P(v), beta=beta, alpha=alpha),
                    np.asarray(beta * x[:, 0] + alpha * (m1 @ v)), 1e-5, 1e-5)
        bx, b1, b2 = rand(2, 4, 5), rand(2, 4, 3), rand(2, 3, 5)
        assert_same(pt.baddbmm(P(bx), P(b1), P(b2), beta=beta, alpha=alpha), np.asarray(beta * bx + alpha * (b1 @ b2)),
                    1e-5, 1e-5)


def test_beta_zero_ignores_nan():
    nan = np.full((4, 5), np.nan, np.float32)
    m1, m2 = rand(4, 3), rand(3, 5)
    assert_same(pt.addmm(P(nan), P(m1), P(m2), beta=0), np.asarray(m1 @ m2), 1e-5, 1e-5)
    assert_same(pt.addmv(P(nan[:, 0]), P(m1), P(m2[:, 0]), beta=0), np.asarray(m1 @ m2[:, 0]), 1e-5, 1e-5)
    assert_same(pt.baddbmm(P(nan[None]), P(m1[None]), P(m2[None]), beta=0), np.asarray((m1 @ m2)[None]), 1e-5, 1e-5)
    out = P(np.full((4, 5), np.nan, np.float32))       # fresh garbage in out= is overwritten
    pt.mm(P(m1), P(m2), out=out)
    assert_same(out, np.asarray(m1 @ m2), 1e-5, 1e-5)


def test_integer_beta_alpha_truncate():
    x = np.full((2, 2), 3, np.int64)
    i = np.arange(4, dtype=np.int64).reshape(2, 2)
    np.testing.assert_array_equal(pt.addmm(P(x), P(i), P(i), beta=0.5).numpy(), i @ i)
    np.testing.assert_array_equal(pt.addmm(P(x), P(i), P(i), alpha=2.5).numpy(), 3 + 2 * (i @ i))


def test_inplace_addmm_addmv_baddbmm():
    x, m1, m2 = rand(4, 5), rand(4, 3), rand(3, 5)
    t = P(x.copy())
    r = t.addmm_(P(m1), P(m2), beta=0.5, alpha=2)
    assert r is t
    assert_same(t, np.asarray(0.5 * x + 2 * (m1 @ m2)), 1e-5, 1e-5)
    t = P(x[:, 0].copy())
    t.addmv_(P(m1), P(m2[:, 0]))
    assert_same(t, np.asarray(x[:, 0] + m1 @ m2[:, 0]), 1e-5, 1e-5)
    bx = rand(2, 4, 5)
    t = P(bx.copy())
    t.baddbmm_(P(rand(2, 4, 3) * 0), P(rand(2, 3, 5)), beta=3)
    assert_same(t, np.asarray(3 * bx), 1e-5, 1e-5)
    # in-place into a transposed (column-major) view
    base = P(np.ascontiguousarray(x.T))
    v = base.t()
    v.addmm_(P(m1), P(m2))
    assert_same(v, np.asarray(x + m1 @ m2), 1e-5, 1e-5)
    # self also an operand: computed through a temporary
    sq = rand(4, 4)
    t = P(sq.copy())
    t.addmm_(t, t)
    assert_same(t, np.asarray(sq + sq @ sq), 1e-5, 1e-5)


def test_out_variants():
    a, b = rand(3, 4), rand(4, 5)
    out = P(np.zeros((3, 5), np.float32))
    assert pt.matmul(P(a), P(b), out=out) is out
    assert_same(out, np.asarray(a @ b), 1e-5, 1e-5)
    out = pt.zeros(0)                                # empty: resized silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pt.mm(P(a), P(b), out=out)
    assert_same(out, np.asarray(a @ b), 1e-5, 1e-5)
    out = pt.zeros(7)                                # wrong non-empty shape: resized with a warning
    with pytest.warns(UserWarning, match="was resized"):
        pt.mm(P(a), P(b), out=out)
    assert tuple(out.shape) == (3, 5)
    ba, bb = rand(2, 3, 4), rand(2, 4, 5)
    out = P(np.zeros((2, 3, 5), np.float32))
    pt.bmm(P(ba), P(bb), out=out)
    assert_same(out, np.asarray(ba @ bb), 1e-5, 1e-5)
    out = P(np.zeros((2, 3, 5), np.float32))
    pt.matmul(P(ba), P(bb[0]), out=out)
    assert_same(out, np.asarray(ba @ bb[0]), 1e-5, 1e-5)
    out = P(np.zeros((2, 3), np.float32))
    pt.matmul(P(ba), P(bb[0, :, 0]), out=out)
    assert_same(out, np.asarray(ba @ bb[0, :, 0]), 1e-5, 1e-5)
    out = pt.zeros(5)
    with pytest.warns(UserWarning):                  # torch resizes to [1, 5] then squeezes
        pt.matmul(P(a[0]), P(b), out=out)
    assert_same(out, np.asarray(a[0] @ b), 1e-5, 1e-5)
    out = pt.zeros(())
    pt.dot(P(a[0]), P(b[:, 0]), out=out)
    assert_same(out, np.asarray(a[0] @ b[:, 0]), 1e-5, 1e-5)
    out = P(np.zeros(3, np.float32))
    pt.mv(P(a), P(b[:, 0]), out=out)
    assert_same(out, np.asarray(a @ b[:, 0]), 1e-5, 1e-5)
    out = P(np.zeros((3, 5), np.float32))
    pt.addmm(P(a @ b), P(a), P(b), beta=2, out=out)
    assert_same(out, np.asarray(3 * (a @ b)), 1e-5, 1e-5)
    # out= aliasing an operand
    sq = rand(4, 4)
    t = P(sq.copy())
    pt.mm(t, t, out=t)
    assert_same(t, np.asarray(sq @ sq), 1e-5, 1e-5)


def test_large_float_products_use_blas_correctly():
    a, b = rand(300, 200), rand(200, 100)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert_same(pt.mm(P(a), P(b)), np.asarray(ref), 1e-4, 1e-4, check_dtype=False)
    assert_same(pt.mm(P(a.T.copy()).t(), P(b.T.copy()).t()), np.asarray(ref), 1e-4, 1e-4, check_dtype=False)
    ba, bb = rand(6, 70, 80), rand(6, 80, 90)
    assert_same(pt.bmm(P(ba), P(bb)), np.asarray(np.matmul(ba.astype(np.float64), bb)), 1e-4, 1e-4, check_dtype=False)
    assert_same(pt.bmm(P(ba).transpose(1, 2).contiguous().transpose(1, 2), P(bb)),
                np.asarray(np.matmul(ba.astype(np.float64), bb)), 1e-4, 1e-4, check_dtype=False)
    d = rand(100, 50, dtype=np.float64)
    assert_same(pt.mm(P(d), P(d.T.copy())), np.asarray(d @ d.T), 1e-12, 1e-12)


@pytest.mark.parametrize("m,n,k", [(300, 100, 200), (100, 300, 200), (257, 255, 129)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threaded_split_paths(m, n, k, dtype):
    # products big enough to be split across threads by rows (m >= n) or columns
    a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    at, bt = P(a.T.copy()).t(), P(b.T.copy()).t()
    for x in (P(a), at):
        for y in (P(b), bt):
            assert_same(pt.mm(x, y), np.asarray(ref), tol, tol, check_dtype=False)
            out = pt.zeros(n, m, dtype=x.dtype).t()          # column-major C: C^T = B^T A^T
            pt.mm(x, y, out=out)
            assert_same(out, np.asarray(ref), tol, tol, check_dtype=False)
    # gemv split, both orientations, and vector @ matrix (B^T gemv)
    v = rand(k, dtype=dtype)
    assert_same(pt.mv(P(a), P(v)), np.asarray(a.astype(np.float64) @ v), tol, tol, check_dtype=False)
    assert_same(pt.mv(at, P(v)), np.asarray(a.astype(np.float64) @ v), tol, tol, check_dtype=False)
    w = rand(m, dtype=dtype)
    assert_same(pt.matmul(P(w), P(a)), np.asarray(w.astype(np.float64) @ a), tol, tol, check_dtype=False)
    assert_same(pt.matmul(P(w), P(a.T.copy()).t().t().t()), np.asarray(w.astype(np.float64) @ a), tol, tol,
                check_dtype=False)
    big = rand(1024, 300, dtype=dtype)
    assert_same(pt.mv(P(big), P(rand(300, dtype=dtype) * 0 + 1)), np.asarray(big.astype(np.float64).sum(1)), tol, tol,
                check_dtype=False)
    assert_same(pt.addmv(P(np.full(1024, np.nan, dtype)), P(big), P(np.ones(300, dtype)), beta=0),
                np.asarray(big.astype(np.float64).sum(1)), tol, tol, check_dtype=False)


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk", [(2, 2, 3), (2, 3, 4)]),
    ("i...,j...", [(2, 3), (4, 3)]),
    ("ij->", [(2, 3)]),
    ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 6)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("i,i,i", [(3,), (3,), (3,)]),
    ("ijkl->ljk", [(2, 3, 4, 5)]),
    (" i j -> j i ", [(2, 3)]),
    ("", [()]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_vs_numpy(eq, shapes):
    ops = [rand(*s) for s in shapes]
    assert_same(einsum(eq, *[P(o) for o in ops]), np.asarray(np.einsum(eq.replace(" ", ""), *ops)), 1e-4, 1e-5)


def test_einsum_view_and_dtypes():
    x = P(rand(2, 3))
    v = einsum("ij->ji", x)
    assert tuple(v.shape) == (3, 2) and not v.is_contiguous()      # a view, as in torch
    s = einsum("i->", P(np.arange(4, dtype=np.int32)))
    assert s.dtype == pt.int64 and s.item() == 6
    b = einsum("i,j->ij", P(np.array([True, False])), P(np.array([True, True])))
    assert b.dtype == pt.bool


@pytest.mark.parametrize("ord_", [2, 1, 0, math.inf, -math.inf, 3.5, -1, 0.5])
def test_vector_norm_vs_numpy(ord_):
    x = rand(3, 4, 5)
    flat = x.reshape(-1).astype(np.float64)
    def ref(v):
        a = np.abs(v)
        if ord_ == 0:
            return np.count_nonzero(v)
        if ord_ == math.inf:
            return a.max()
        if ord_ == -math.inf:
            return a.min()
        return np.sum(a ** ord_) ** (1 / ord_)
    assert_same(pt.linalg_vector_norm(P(x), ord_), np.asarray(ref(flat)), 1e-5, 1e-6, check_dtype=False)
    r = pt.linalg_vector_norm(P(x), ord_, dim=(0, 2), keepdim=True)
    assert tuple(r.shape) == (1, 4, 1)
    assert_same(r.reshape(4), np.asarray([ref(x[:, j, :].reshape(-1).astype(np.float64)) for j in range(4)]), 1e-5,
                1e-6, check_dtype=False)


def test_norms_vs_numpy():
    a = rand(4, 6).astype(np.float64)
    for ord_ in [None, "fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]:
        assert_same(pt.linalg_norm(P(a), ord_), np.asarray(np.linalg.norm(a, ord_)), 1e-10, 1e-10)
        assert_same(pt.linalg_norm(P(a.T.copy()), ord_), np.asarray(np.linalg.norm(a.T, ord_)), 1e-10, 1e-10)
    b = rand(3, 4, 5).astype(np.float64)
    for ord_ in ["fro", "nuc", 2, -2, 1, math.inf]:
        assert_same(pt.linalg_matrix_norm(P(b), ord_), np.asarray(np.linalg.norm(b, ord_, axis=(-2, -1))), 1e-10, 1e-10)
    assert_same(pt.linalg_matrix_norm(P(b)), np.asarray(np.linalg.norm(b, "fro", axis=(-2, -1))), 1e-10, 1e-10)
    assert_same(pt.linalg_norm(P(b)), np.asarray(np.linalg.norm(b.reshape(-1))), 1e-10, 1e-10)
    big = rand(100000, dtype=np.float64)
    assert_same(pt.linalg_vector_norm(P(big)), np.asarray(np.linalg.norm(big)), 1e-12, 1e-12)


def test_large_parallel_norm():
    x = rand(300000)
    assert_same(pt.linalg_vector_norm(P(x)), np.asarray(np.linalg.norm(x.astype(np.float64))), 1e-6, 1e-6,
                check_dtype=False)
    assert_same(pt.linalg_vector_norm(P(x), math.inf), np.asarray(np.abs(x).max()), 1e-5, 1e-5)
    y = rand(300, 1000)
    assert_same(pt.linalg_vector_norm(P(y), dim=1), np.asarray(np.linalg.norm(y.astype(np.float64), axis=1)), 1e-6,
                1e-6, check_dtype=False)


def test_errors_match_torch_text():
    def err(exc, msg, fn):
        with pytest.raises(exc) as e:
            fn()
        assert str(e.value) == msg, str(e.value)

    f = lambda *s, dtype=np.float32: P(np.ones(s, dtype))
    err(RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", lambda: pt.mm(f(2, 3), f(4, 5)))
    err(RuntimeError, "both arguments to matmul need to be at least 1D, but they are 0D and 2D",
        lambda: pt.matmul(P(np.array(1, np.float32)), f(2, 2)))
    err(RuntimeError, "expected m1 and m2 to have the same dtype, but got: float != double",
        lambda: pt.matmul(f(2, 3), f(3, 5, dtype=np.float64)))
    err(NotImplementedError, "\"addmm_impl_cpu_\" not implemented for 'Bool'",
        lambda: pt.mm(f(2, 3, dtype=bool), f(3, 5, dtype=bool)))
    err(RuntimeError, "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].",
        lambda: pt.matmul(f(2, 2, 3), f(2, 4, 5)))
    err(RuntimeError, "expected scalar type Float but found Double", lambda: pt.bmm(f(2, 2, 3), f(2, 3, 5, dtype=np.float64)))
    err(RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)", lambda: pt.mv(f(2, 3), f(4)))
    err(RuntimeError, "dot : expected both vectors to have same dtype, but found Float and Double",
        lambda: pt.dot(f(3), f(3, dtype=np.float64)))
    err(RuntimeError, "1D tensors expected, but got 2D and 1D tensors", lambda: pt.dot(f(3, 1), f(3)))
    err(RuntimeError, "Bad in-place call: input tensor size [5] and output tensor size [2, 5] should match",
        lambda: f(5).addmm_(f(2, 3), f(3, 5)))
    err(RuntimeError, "Expected out tensor to have dtype float, but got double instead",
        lambda: pt.mm(f(2, 3), f(3, 4), out=f(2, 4, dtype=np.float64)))
    err(RuntimeError, "trace: expected a matrix, but got tensor with dim 1", lambda: pt.trace(f(3)))
    err(RuntimeError, "einsum(): output subscript k does not appear in the equation for any input operand",
        lambda: einsum("ij->k", f(2, 3)))
    err(RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
        lambda: pt.linalg_vector_norm(f(3, dtype=np.int64)))


# --------------------------------------------------------------------------------------
# torch oracle
# --------------------------------------------------------------------------------------

ORACLE_MATMUL = MATMUL_SHAPES + [
    ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((5, 0, 3), (3, 2)), ((0,), (0,)),
    ((2, 3), (4, 5)), ((5, 2, 3), (4,)), ((3,), (2, 4, 5)), ((2, 2, 3), (3, 3, 5)), ((2, 3), (2, 4, 5)),
]


@pytest.mark.parametrize("sa,sb", ORACLE_MATMUL)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
def test_matmul_oracle(sa, sb, dtype):
    torch = _torch()
    a, b = rand(*sa, dtype=dtype), rand(*sb, dtype=dtype)
    tol = 1e-2 if dtype == np.float16 else 1e-5
    assert_same_outcome(lambda: pt.matmul(P(a), P(b)), lambda: torch.matmul(T(torch, a), T(torch, b)), tol, tol, message=True)


def test_dtype_errors_oracle():
    torch = _torch()
    F = lambda m, s, dt: m.ones(s, dtype=getattr(m, dt))
    dts = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
    for d in dts:
        for fn in [lambda m: m.mm(F(m, (2, 2), "float32"), F(m, (2, 2), d)),
                   lambda m: m.dot(F(m, 2, "float32"), F(m, 2, d)),
                   lambda m: m.bmm(F(m, (1, 2, 2), "float32"), F(m, (1, 2, 2), d)),
                   lambda m: m.mv(F(m, (2, 2), d), F(m, 2, d)),
                   lambda m: m.dot(F(m, 2, d), F(m, 2, d)),
                   lambda m: m.bmm(F(m, (1, 2, 2), d), F(m, (1, 2, 2), d)),
                   lambda m: m.trace(F(m, (2, 2), d)),
                   lambda m: m.addmm(F(m, (2, 2), d), F(m, (2, 2), "float32"), F(m, (2, 2), "float32")),
                   lambda m: m.baddbmm(F(m, (1, 2, 2), d), F(m, (1, 2, 2), "float32"), F(m, (1, 2, 2), "float32")),
                   lambda m: m.matmul(F(m, (2, 2, 3), "float32"), F(m, 3, d)),
                   lambda m: m.outer(F(m, 3, "float32"), F(m, 2, d))]:
            assert_same_outcome(lambda: fn(pt), lambda: fn(torch), 1e-2, 1e-2, message=True)


ERROR_CASES = [
    lambda m, f: m.mm(f(3), f(3, 5)),
    lambda m, f: m.mm(f(2, 3), f(3)),
    lambda m, f: m.matmul(f(3), f(4)),
    lambda m, f: m.matmul(f(2, 3), f(4)),
    lambda m, f: m.matmul(f(3), f(4, 5)),
    lambda m, f: m.matmul(f(2, 2, 3), f(4, 5)),
    lambda m, f: m.matmul(f(4), f(2, 2, 3)),
    lambda m, f: m.matmul(f(3, 2, 3), f(3, 2, 4, 5)),
    lambda m, f: m.bmm(f(2, 3), f(2, 3, 5)),
    lambda m, f: m.mv(f(3), f(3)),
    lambda m, f: m.addmm(f(3, 5), f(2, 3), f(3, 5)),
    lambda m, f: m.addmm(f(2, 2, 4), f(2, 3), f(3, 4)),
    lambda m, f: m.addmv(f(3), f(2, 3), f(3)),
    lambda m, f: m.addmv(f(2, 1), f(2, 3), f(3)),
    lambda m, f: f(1).addmv_(f(2, 3), f(3)),
    lambda m, f: m.baddbmm(f(3, 2, 5), f(2, 2, 3), f(2, 3, 5)),
    lambda m, f: m.baddbmm(f(2, 2, 5), f(2, 2, 3), f(2, 4, 5)),
    lambda m, f: f(1, 2, 3).baddbmm_(f(2, 2, 4), f(2, 4, 3)),
    lambda m, f: m.outer(f(3, 2), f(4)),
    lambda m, f: m.inner(f(2, 3), f(4, 4)),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims=3),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims=-1),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims=([1], [1])),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims=([1], [0, 1])),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims=([5], [0])),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims=([1, 1], [0, 0])),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims="a"),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims=(1,)),
    lambda m, f: m.tensordot(f(2, 3), f(3, 2), dims=([1], 0)),
]


@pytest.mark.parametrize("case", range(len(ERROR_CASES)))
def test_errors_oracle(case):
    torch = _torch()
    fn = ERROR_CASES[case]
    assert_same_outcome(lambda: fn(pt, pt.ones), lambda: fn(torch, torch.ones), message=True)


EINSUM_ERRORS = [
    ("ij,jk", [(2, 3), (4, 5)]), ("ij", [(2, 3, 4)]), ("ij,jk", [(2, 3)]), ("i", [(2,), (3,)]),
    ("ij->k", [(2, 3)]), ("ij->ii", [(2, 3)]), ("ii->i", [(2, 3)]), ("i1", [(2, 3)]),
    ("ij->ji->", [(2, 3)]), ("...ij,...jk", [(2, 2, 3), (3, 3, 4)]), ("ij.,jk", [(2, 3), (3, 4)]),
    ("...i...", [(2, 3)]), ("i...->......", [(2, 3)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES + EINSUM_ERRORS)
def test_einsum_oracle(eq, shapes):
    torch = _torch()
    ops = [rand(*s) for s in shapes]
    assert_same_outcome(lambda: einsum(eq, *[P(o) for o in ops]), lambda: torch.einsum(eq, *[T(torch, o) for o in ops]), 1e-4, 1e-5, message=True)


def test_einsum_dtype_oracle():
    torch = _torch()
    for eq, arrs in [("i,i", [np.ones(3, bool)] * 2), ("i,j", [np.ones(2, bool)] * 2), ("i->", [np.arange(3, dtype=np.int32)]),
                     ("ij,jk->ik", [np.ones((2, 3), np.int8), np.ones((3, 4), np.int8)]),
                     ("ij,jk", [np.ones((2, 3), np.float32), np.ones((3, 2))])]:
        assert_same_outcome(lambda: einsum(eq, *[P(a) for a in arrs]), lambda: torch.einsum(eq, *[T(torch, a) for a in arrs]), message=True)


@pytest.mark.parametrize("ord_", [2, 1, 0, math.inf, -math.inf, 3.5, -1, -2])
def test_vector_norm_oracle(ord_):
    torch = _torch()
    x = rand(3, 4, 5)
    for dim in [None, 0, (1, 2), -1, (), (0, 1, 2)]:
        for keep in (False, True):
            assert_same_outcome(lambda: pt.linalg_vector_norm(P(x), ord_, dim, keep), lambda: torch.linalg.vector_norm(T(torch, x), ord_, dim, keep), 1e-5, 1e-6, message=True)
    for s in [(0,), (0, 3), ()]:
        e = rand(*s)
        for dim in [None, 0, -1]:
            assert_same_outcome(lambda: pt.linalg_vector_norm(P(e), ord_, dim), lambda: torch.linalg.vector_norm(T(torch, e), ord_, dim), 1e-5, 1e-6, message=True)


def test_norm_misc_oracle():
    torch = _torch()
    inf = math.inf
    x = rand(2, 3)
    x3 = rand(4, 2, 3)
    cases = [
        lambda m, t: m.linalg.vector_norm(t(x), dtype=m.float64),
        lambda m, t: m.linalg.vector_norm(t(x).to(m.float64), dtype=m.float32),
        lambda m, t: m.linalg.vector_norm(t(x), dtype=m.int64),
        lambda m, t: m.linalg.vector_norm(t(x), dim=(0, 0)),
        lambda m, t: m.linalg.vector_norm(t(x), dim=5),
        lambda m, t: m.linalg.vector_norm(t(x).to(m.float16)),
        lambda m, t: m.linalg.vector_norm(t(x).to(m.bool)),
        lambda m, t: m.linalg.vector_norm(t(x), 2.5, 1, out=m.ones(2, dtype=m.float64)),
        lambda m, t: m.linalg.norm(t(x), 3),
        lambda m, t: m.linalg.norm(t(x3), 2),
        lambda m, t: m.linalg.norm(t(x), "xyz"),
        lambda m, t: m.linalg.norm(t(x), "fro", dim=0),
        lambda m, t: m.linalg.norm(t(x), dim=(0, 1, 1)),
        lambda m, t: m.linalg.norm(t(x), "fro", dim=(0, 0)),
        lambda m, t: m.linalg.norm(t(x), inf, dim=(1, 0), keepdim=True),
        lambda m, t: m.linalg.norm(t(x), dtype=m.float64, out=m.ones(1)),
        lambda m, t: m.linalg.norm(t(x3), -inf, dim=(0, 2)),
        lambda m, t: m.linalg.matrix_norm(t(x).to(m.float16), 2),
        lambda m, t: m.linalg.matrix_norm(t(x).to(m.float16), 1),
        lambda m, t: m.linalg.matrix_norm(t(x), 1, dtype=m.float64),
        lambda m, t: m.linalg.matrix_norm(t(x3), "nuc", keepdim=True),
        lambda m, t: m.linalg.matrix_norm(t(x3), -2, dim=(0, 2), keepdim=True),
        lambda m, t: m.linalg.matrix_norm(t(x[0])),
        lambda m, t: m.linalg.matrix_norm(t(x), 2, dim=(0,)),
        lambda m, t: m.linalg.matrix_norm(t(np.zeros((3, 0), np.float32)), 1),
        lambda m, t: m.linalg.matrix_norm(t(np.zeros((0, 3), np.float32)), -2),
        lambda m, t: m.linalg.matrix_norm(t(np.zeros((2, 0, 3), np.float32)), "nuc"),
        lambda m, t: m.linalg.matrix_norm(t(np.zeros((3, 0), np.float32)), -1),
        lambda m, t: m.linalg.matrix_norm(t(np.zeros((0, 3), np.float32)), -inf),
        lambda m, t: m.linalg.matrix_norm(t(np.zeros((3, 0), np.float32)), -inf),
        lambda m, t: m.linalg.matrix_norm(t(np.zeros((2, 3, 0), np.float32)), -1, keepdim=True),
        lambda m, t: m.linalg.matrix_norm(t(np.zeros((0, 3), np.float32)), 2),
    ]

    class Linalg:  # pyctorch.linalg as the lead will expose it
        vector_norm = staticmethod(pt.linalg_vector_norm)
        matrix_norm = staticmethod(pt.linalg_matrix_norm)
        norm = staticmethod(pt.linalg_norm)

    class PM:
        linalg = Linalg
        def __getattr__(self, k):
            return getattr(pt, k)

    pm = PM()
    for fn in cases:
        assert_same_outcome(lambda: fn(pm, P), lambda: fn(torch, lambda a: T(torch, a)), 1e-5, 1e-6, message=True)


def test_misc_ops_oracle():
    torch = _torch()
    a, b = rand(3, 4, 5), rand(4, 3, 2)
    c1, c2, c3, c4, c5 = rand(1, 5, 6), rand(5, 2, 3), rand(2, 5), rand(3, 5, 2), rand(5, 2)
    checks = [
        (lambda m, t: m.tensordot(t(a), t(b), dims=([1, 0], [0, 1]))),
        (lambda m, t: m.tensordot(t(a), t(b), dims=0)),
        (lambda m, t: m.tensordot(t(a[:, :1]), t(c1), dims=([1], [0]))),
        (lambda m, t: m.tensordot(t(a), t(b), dims=([1], [0]), out=m.ones(1, dtype=m.float64))),
        (lambda m, t: m.tensordot(t(a), t(c2), dims=True)),
        (lambda m, t: m.inner(t(a), t(c3))),
        (lambda m, t: m.inner(t(np.array(2, np.float32)), t(a))),
        (lambda m, t: m.inner(t(a[0]), t(a[0]), out=m.ones(1, dtype=m.float64))),
        (lambda m, t: m.kron(t(a[0]), t(b[0]))),
        (lambda m, t: m.kron(t(a[0]), t(np.array(2.0)))),
        (lambda m, t: m.kron(t(np.ones(2, bool)), t(np.ones(2, bool)))),
        (lambda m, t: m.kron(t(a[0, 0]), t(b[0, 0]), out=m.ones(1, dtype=m.int64))),
        (lambda m, t: m.outer(t(a[0, 0]), t(np.arange(3)))),
        (lambda m, t: m.outer(t(a[0, 0]), t(b[0, 0]), out=m.ones(1, dtype=m.float64))),
        (lambda m, t: m.trace(t(np.arange(12, dtype=np.int8).reshape(3, 4)))),
        (lambda m, t: m.trace(t(a[0]).to(m.float16))),
        (lambda m, t: m.vdot(t(a[0, 0]), t(a[0, 1]))),
        (lambda m, t: m.addmm(t(np.full((2, 2), 3)), t(np.arange(4).reshape(2, 2)), t(np.arange(4).reshape(2, 2)), beta=0.5)),
        (lambda m, t: m.addmv(t(np.array(1.0, np.float32)), t(a[0]), t(a[0, 0]))),
        (lambda m, t: m.baddbmm(t(a[0, 0, :2]), t(a), t(c4), beta=0.25, alpha=-1)),
        (lambda m, t: m.matmul(t(a), t(c5), out=m.ones(1))),
        (lambda m, t: m.matmul(t(a), t(c4), out=m.ones(1, dtype=m.float64))),
        (lambda m, t: m.dot(t(a[0, 0]), t(a[0, 1]), out=m.ones((2, 5), dtype=m.float64))),
        (lambda m, t: m.inner(m.ones(2, 1, dtype=m.int32), m.ones(3, 1, dtype=m.int32))),
        (lambda m, t: m.tensordot(m.ones(2, 1, dtype=m.int8), m.ones(3, 3, dtype=m.int8), dims=([1], [0]))),
        (lambda m, t: m.tensordot(m.ones(2, 1, dtype=m.bool), m.ones(3, 3, dtype=m.bool), dims=([1], [0]))),
        (lambda m, t: m.tensordot(m.tensor(2.0), m.tensor(3.0), ([0], [0]))),
        (lambda m, t: m.tensordot(m.ones(3), m.tensor(2.0), ([-1], [0]))),
        (lambda m, t: m.tensordot(m.tensor(2.0), m.tensor(3.0), 0)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in checks:
            assert_same_outcome(lambda: fn(pt, P), lambda: fn(torch, lambda a: T(torch, a)), 1e-5, 1e-5, message=True)
