"""out= semantics against torch, for every op that takes out= (Note [out= arguments], csrc/aten/out.c).

Per op: a correct out= (values, returns out itself, strides kept when the shape is right), the dtype rule
(elementwise ops cast into any dtype the result can be cast to; most other ops refuse another dtype),
memory rules (internal overlap of an expanded out, partial overlap with an input), the resize of an out of
the wrong shape (torch's deprecation UserWarning when it had elements), the refusal to resize an out that is
also an input, and rounding at the result dtype before the cast into a wider out.

The calls are the registry's out= samples (tests/samples.py, "out"): the op table's elementwise ops on (3, 4)
inputs, one call for each other op and for each Python composite with out= (samples.ENTRIES: both tables);
test_every_out_op_is_covered keeps that list complete.
"""
import re
import warnings

import numpy as np
import pytest

import pyctorch as P
import samples as SR
from conftest import HAVE_TORCH, TOL, assert_same, requires_torch, torch as T

DEVICE = SR.DEVICE
OUT_OPS = [d for d in SR.ENTRIES if re.search(r"[ (]out=None", d["schema"])]


# ops with out= whose values are random or uninitialised: their out= rules are checked in tests/test_random.py
# and by the fuzzer (dtype/shape only), and need no sample call here
NOT_SAMPLED = {"empty", "rand", "randn", "randint", "randint_low", "randperm", "normal_tensor_float",
               "normal_tensor_tensor", "normal_float_tensor", "normal_float_float", "bernoulli", "multinomial",
               # private elementwise helpers with no torch function of that name (they run the same loop machine)
               "_i1", "_trigamma", "_polygamma_loop"}
TUPLE_OPS = {"max_dim", "min_dim", "sort", "sort_stable", "topk", "kthvalue", "median_dim", "nanmedian_dim", "mode",
             "cummax", "cummin"}
# out=(U, S, Vh) / (U, S, V): tested by test_out_svd (values up to the singular vectors' signs)
SVD_OPS = {"linalg_svd", "svd"}
# the tuple out= of the LAPACK-backed linalg ops: the same checks as the SVDs' (values compared as |x|)
LAPACK_TUPLE_OPS = {"linalg_inv_ex", "linalg_slogdet", "slogdet", "linalg_solve_ex", "linalg_lu_factor_ex",
                    "linalg_cholesky_ex", "linalg_qr", "geqrf", "linalg_eigh", "linalg_ldl_factor_ex", "linalg_eig"}
# the Python composites with a tuple out=: (mantissa, exponent), (hist, bin_edges); the same checks as the SVDs' (values
# compared as they are)
PY_TUPLE_OPS = {"frexp", "histogram"}


def _bound(op):
    """M -> (callable, args, kwargs): op's first out= sample of the registry, made in library M."""
    k, sample = SR.samples_for(op, "out")[0]
    arrs = SR.arrays(op, k, sample)

    def bound(M):
        with SR.default_device(M, SR.device_for(M)):
            return sample.bound(M, SR.make_inputs(M, sample, arrs, requires_grad=False, device=SR.device_for(M)))
    return bound


ALL = {d["id"]: _bound(d["id"]) for d in OUT_OPS if d["id"] not in NOT_SAMPLED and SR.samples_for(d["id"], "out")}
ELEMENTWISE = {op: ALL[op] for op in ALL if SR.ENTRY[op]["kind"] in ("unary", "binary")}
SINGLE = sorted(k for k in ALL if k not in TUPLE_OPS | SVD_OPS | LAPACK_TUPLE_OPS | PY_TUPLE_OPS)
FACTORIES = {"arange", "arange_end", "linspace", "logspace", "eye", "zeros", "ones", "full"}


# Known out= divergences of the Python composites, (test, op): reason. Each is a strict xfail (it must fail: fixed, its
# entry goes). A dtype case applies to every dtype of test_out_dtype.
ADDMM = "addbmm writes through the C addmm, which checks out's dtype first (torch checks self and mat2's dtypes first)"
PY_OUT_KNOWN = {
    ("test_out_dtype", "addbmm"): ADDMM,
    ("test_out_expanded_wrong_shape", "addbmm"): "the C addmm warns on resizing the expanded out; torch's addbmm does "
                                                 "not",
    ("test_out_resize", "addbmm", "wrong_shape"): "the C addmm warns on resizing out; torch's addbmm resizes silently",
    ("test_out_dtype", "ldexp"): "torch's ldexp out= is broken: a float64/float16 out hits an INTERNAL ASSERT "
                                 "(needs_dynamic_casting, Loops.h), and its cast error names 'ldexp' for 'result type "
                                 "Float'",
    ("test_out_correct", "narrow_copy"): "torch's narrow_copy out= writes a transposed out as if contiguous (values "
                                         "land transposed); pyctorch keeps out's strides",
    ("test_out_expanded_wrong_shape", "narrow_copy"): "torch's narrow_copy resizes silently; pyctorch warns",
    ("test_out_resize", "narrow_copy", "wrong_shape"): "torch's narrow_copy resizes silently; pyctorch warns",
    ("test_out_internal_overlap", "threshold"): "torch's threshold checks no overlap (it writes an expanded out); "
                                                "pyctorch's write through the table's mul refuses it",
    ("test_out_expanded_wrong_shape", "threshold"): "as test_out_internal_overlap[threshold]",
    ("test_out_svd", "histogram", "dtype"): "torch refuses a bin_edges out of another dtype than the input; pyctorch "
                                            "casts",
    **{("test_out_expanded_wrong_shape", n): "torch refuses the expanded out after resizing it (internal overlap); "
       "pyctorch's copy into the resized out passes" for n in ("addr", "diff")},
    **{("test_out_partial_overlap", n): "torch refuses an out that partially overlaps an input; the composite's "
       "generic write does not check it (only the elementwise composites do)"
       for n in ("addr", "cross", "take_along_dim")},
}


def _ops(test, ops):
    """ops as parameters, the known divergences of PY_OUT_KNOWN marked as strict xfails."""
    return [pytest.param(op, marks=pytest.mark.xfail(strict=True, reason=PY_OUT_KNOWN[(test, op)]))
            if (test, op) in PY_OUT_KNOWN else op for op in ops]


def _known(key, check):
    """Runs check; a key of PY_OUT_KNOWN (with the case's kind) must fail (strict), and the test then xfails."""
    reason = PY_OUT_KNOWN.get(key)
    if reason is None:
        check()
        return
    try:
        check()
    except AssertionError as e:
        pytest.xfail(f"{reason} [{str(e).splitlines()[0][:120]}]")
    pytest.fail(f"passes now (XPASS): remove {key} from PY_OUT_KNOWN ({reason})")


def test_every_out_op_is_covered():
    ids = {d["id"] for d in OUT_OPS}
    missing = ids - set(ALL) - NOT_SAMPLED
    assert not missing, f"ops with out= and no sample call here: {sorted(missing)}"
    stray = sorted(op for op in SR.SAMPLES if SR.samples_for(op, "out") and op not in ids)
    assert not stray, f"out= samples of ops without out=: {stray}"


def _call(M, op, out, seed=0):
    fn, args, kw = ALL[op](M)
    M.manual_seed(seed)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args, **kw, out=out)
        except Exception as e:  # noqa: BLE001
            return e, None, []
    return None, r, [x for x in w if "was resized" in str(x.message)]


def _result(M, op):
    fn, args, kw = ALL[op](M)
    return fn(*args, **kw)


def _check_out_call(op, make_out, check_values=True, tol_dtype=None):
    """Calls op with make_out(M, result) as out= in both libraries: same refusal (type and message) or same
    result (values, identity, warning). Returns the two outs."""
    tres, pres = _result(T, op), _result(P, op)
    tout, pout = make_out(T, tres), make_out(P, pres)
    te, tr, tw = _call(T, op, tout)
    pe, pr, pw = _call(P, op, pout)
    if isinstance(te, TypeError) and "'out'" in str(te):
        return None, None  # torch has no out= for this function (isnan, relu...): nothing to compare
    if te is not None:
        assert pe is not None, f"torch raised {type(te).__name__}({te}); pyctorch returned"
        assert isinstance(pe, type(te)), f"{type(pe).__name__}({pe}) vs torch {type(te).__name__}({te})"
        if isinstance(te, RuntimeError):
            key = str(te).split("\n")[0]
            assert key.startswith(str(pe).split("\n")[0][:40]), f"message {pe!r} vs torch {key!r}"
        return None, None
    assert pe is None, f"pyctorch raised {type(pe).__name__}({pe}); torch returned"
    assert pr is pout and tr is tout or isinstance(pout, tuple), "out= returns out itself"
    assert bool(pw) == bool(tw), f"resize warning: pyctorch {bool(pw)}, torch {bool(tw)}"
    if pw:
        assert pw[0].category is UserWarning
        assert str(pw[0].message) == str(tw[0].message).split(" (Triggered internally")[0]
    if check_values:
        # a float64 out of a float32 result holds float32 values: compared at float32's tolerance
        r, a = TOL.get(tol_dtype, (None, None))
        assert_same(pout, tout, rtol=r, atol=a)
    assert tuple(pout.stride()) == tuple(tout.stride()), f"strides {pout.stride()} vs torch {tout.stride()}"
    return pout, tout


def _dt(M, name):
    return getattr(M, name)


@requires_torch
@pytest.mark.parametrize("op", _ops("test_out_correct", SINGLE))
def test_out_correct(op):
    """A correct out= (result dtype and shape, transposed when 2-D): values, identity, strides kept."""
    def make(M, r):
        if r.ndim == 2:
            return M.zeros(tuple(r.shape)[::-1], dtype=r.dtype).t()
        return M.zeros(tuple(r.shape), dtype=r.dtype)
    _check_out_call(op, make)


@requires_torch
@pytest.mark.parametrize("op", _ops("test_out_dtype", SINGLE))
@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "bool"])
def test_out_dtype(op, dtype):
    """out= of another dtype: refused with torch's error where torch refuses, else cast as torch casts."""
    _check_out_call(op, lambda M, r: M.zeros(tuple(r.shape), dtype=_dt(M, dtype)),
                  tol_dtype=None if dtype == "float16" else str(_result(T, op).dtype).split(".")[1])


def _expandable(op):
    """ops whose result has two elements or more (a one-element result cannot be an expanded tensor)"""
    return not HAVE_TORCH or int(np.prod(_result(T, op).shape)) >= 2


@requires_torch
@pytest.mark.parametrize("op", sorted(SVD_OPS | LAPACK_TUPLE_OPS | PY_TUPLE_OPS))
@pytest.mark.parametrize("kind", ["correct", "empty", "wrong_shape", "transposed", "dtype", "expanded", "count"])
def test_out_svd(op, kind):
    """out= of the SVDs: each of the three tensors checked, resized (to the result's column-major layout)
    and written as torch does; U, V are compared as |U|, |V| (their signs depend on the LAPACK). The tuples of the
    Python composites: out tensors of the result's dtypes, values compared as they are."""
    def run(M):
        fn, args, kw = ALL[op](M)
        results = fn(*args, **kw)
        shapes = [tuple(r.shape) for r in results]
        outs = [M.zeros(s, dtype=r.dtype) if op in PY_TUPLE_OPS else M.zeros(s) for s, r in zip(shapes, results)]
        if kind == "empty":
            outs = [M.empty(0) for s in shapes]
        elif kind == "wrong_shape":
            outs[0] = M.zeros(7)
        elif kind == "transposed" and len(shapes[-1]) >= 2:
            outs[-1] = M.zeros(shapes[-1][::-1]).mT
        elif kind == "dtype":
            outs[1] = outs[1].double()
        elif kind == "expanded":
            outs[-1] = M.zeros(1).expand(shapes[-1])
        elif kind == "count":
            outs = outs[:2]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = fn(*args, **kw, out=tuple(outs))
            except (RuntimeError, TypeError) as e:
                return type(e).__name__ + ": " + str(e), None
        assert all(a is b for a, b in zip(r, outs))
        signless = op not in PY_TUPLE_OPS
        return None, ([o.abs().tolist() if i != 1 and signless else o.tolist() for i, o in enumerate(outs)],
                      [tuple(o.stride()) for o in outs], any("was resized" in str(x.message) for x in w))
    def check():
        (te, tv), (pe, pv) = run(T), run(P)
        assert te == pe
        if tv is not None:
            assert pv[1:] == tv[1:]
            assert_same(pv[0], tv[0], 1e-4, 1e-5)
    _known(("test_out_svd", op, kind), check)


# torch's narrow_copy writes all of its result into an expanded out= (one element of storage): past the end of the
# storage (ASan: heap-buffer-overflow in at::native::narrow_copy_dense_cpu_out), so torch is not called with one.
TORCH_WRITES_OUT_OF_BOUNDS = {"narrow_copy"}


@requires_torch
@pytest.mark.parametrize("op", _ops("test_out_internal_overlap", [op for op in SINGLE if _expandable(op) and
                                                                   op not in TORCH_WRITES_OUT_OF_BOUNDS]))
def test_out_internal_overlap(op):
    """An expanded out= (two elements at one address): refused where torch refuses."""
    _check_out_call(op, lambda M, r: M.zeros(1, dtype=r.dtype).expand(tuple(r.shape)), check_values=False)


def test_narrow_copy_refuses_an_expanded_out():
    """Where torch writes out of bounds (TORCH_WRITES_OUT_OF_BOUNDS), pyctorch refuses the overlapping out=."""
    x = P.arange(12.0).reshape(3, 4)
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element of the written-to tensor"):
        P.narrow_copy(x, 1, 1, 2, out=P.zeros(1).expand(3, 2))


@requires_torch
@pytest.mark.parametrize("op", _ops("test_out_expanded_wrong_shape", sorted(set(SINGLE) - FACTORIES)))
def test_out_expanded_wrong_shape(op):
    """An expanded out= of the wrong shape: torch's TensorIterator ops refuse it before resizing, most others
    resize it first (and then it no longer overlaps)."""
    _check_out_call(op, lambda M, r: M.zeros(1, dtype=r.dtype).expand(7), check_values=False)


def _partial_cases():
    ops = []
    for op in SINGLE:
        if op in FACTORIES or not HAVE_TORCH:
            continue
        fn, args, kw = ALL[op](T)
        first = args[0][0] if isinstance(args[0], list) else args[0]
        if first.dtype == _result(T, op).dtype:
            ops.append(op)
    return ops


@requires_torch
@pytest.mark.parametrize("op", _ops("test_out_partial_overlap", _partial_cases()))
def test_out_partial_overlap(op):
    """out= one element into the first input's memory: refused where torch refuses."""
    def run(M):
        fn, args, kw = ALL[op](M)
        args = list(args)
        a0 = args[0][0] if isinstance(args[0], list) else args[0]
        r = fn(*args, **kw)
        buf = M.zeros(max(a0.numel(), r.numel() + 1) + 1, dtype=r.dtype)
        a = buf[:a0.numel()].view(a0.shape)
        a.copy_(a0)
        args[0] = [a] + list(args[0][1:]) if isinstance(args[0], list) else a
        try:
            fn(*args, **kw, out=buf[1:1 + r.numel()].view(r.shape))
        except RuntimeError as e:
            return str(e)
        except TypeError:  # torch has no out= for this function
            return "TypeError"
        return None
    t, p = run(T), run(P)
    if t == "TypeError":
        return
    assert (t is None) == (p is None), f"torch: {t}; pyctorch: {p}"
    if t is not None:
        assert p == t


@requires_torch
@pytest.mark.parametrize("op", SINGLE)
@pytest.mark.parametrize("kind", ["wrong_shape", "empty"])
def test_out_resize(op, kind):
    """An out= of the wrong shape is resized (torch's UserWarning when it had elements); an empty one silently."""
    n = 7 if kind == "wrong_shape" else 0
    _known(("test_out_resize", op, kind), lambda: _check_out_call(op, lambda M, r: M.zeros(n, dtype=r.dtype)))


@requires_torch
@pytest.mark.parametrize("op", sorted(TUPLE_OPS))
@pytest.mark.parametrize("kind", ["correct", "values_dtype", "indices_dtype", "expanded_values", "expanded_indices",
                                  "wrong_shape", "values_overlap_input"])
def test_out_tuple(op, kind):
    """The (values, indices) out= of sort, topk, max.dim...: the same rules for each tensor."""
    def run(M):
        fn, args, kw = ALL[op](M)
        shape = tuple(fn(*args, **kw)[0].shape)
        v, i = M.zeros(shape), M.zeros(shape, dtype=M.int64)
        if kind == "values_dtype":
            v = v.double()
        elif kind == "indices_dtype":
            i = i.int()
        elif kind == "expanded_values":
            v = M.zeros(1).expand(shape)
        elif kind == "expanded_indices":
            i = M.zeros(1, dtype=M.int64).expand(shape)
        elif kind == "wrong_shape":
            v, i = M.zeros(7), M.zeros(7, dtype=M.int64)
        elif kind == "values_overlap_input":
            buf = M.zeros(args[0].numel() + 1)
            a = buf[:-1].view(args[0].shape)
            a.copy_(args[0])
            args = (a,) + tuple(args[1:])
            v = buf[1:1 + int(np.prod(shape))].view(shape)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = fn(*args, **kw, out=(v, i))
            except RuntimeError as e:
                return str(e), None
        assert r[0] is v and r[1] is i
        return None, (v.tolist(), i.tolist(), any("was resized" in str(x.message) for x in w))
    (te, tv), (pe, pv) = run(T), run(P)
    assert te == pe
    if kind == "values_overlap_input":
        return  # values written into the input's memory are unspecified
    assert pv == tv


@requires_torch
@pytest.mark.parametrize("op", sorted(k for k, d in ((d["id"], d) for d in OUT_OPS) if k in ELEMENTWISE and d["kind"] == "binary"))
def test_out_is_input_not_resized(op):
    """out= that is also an input may not be resized to the broadcast shape (torch: RuntimeError)."""
    def run(M):
        fn, args, kw = ELEMENTWISE[op](M)
        a = args[0][0]
        try:
            fn(a, args[1], out=a)
        except RuntimeError as e:
            return str(e)
        except TypeError:
            return "TypeError"
        return None
    t, p = run(T), run(P)
    assert t == p


def test_out_is_input_not_resized_values():
    a = P.ones(2, 4)
    with pytest.raises(RuntimeError, match=re.escape("output with shape [2, 4] doesn't match the broadcast shape [2, 2, 4]")):
        P.pow(a, P.ones(2, 2, 4), out=a)
    assert a.tolist() == [[1.0] * 4] * 2
    # the same shape is fine
    assert P.add(a, P.ones(4), out=a) is a and a.tolist() == [[2.0] * 4] * 2


def test_overlap_refused_hand():
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        P.ger(P.ones(3), P.ones(2), out=P.zeros(1).expand(6))
    x = P.arange(6.0)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
        P.cumsum(x[:4], 0, out=x[1:5])
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # torch lets tril and sum write anywhere
    P.tril(P.ones(2, 2), out=P.zeros(1).expand(2, 2))
    P.sum(P.ones(2, 3), 1, out=P.zeros(1).expand(2))


def test_resize_warning_hand():
    out = P.zeros(2, 2)
    with pytest.warns(UserWarning, match=re.escape("An output with one or more elements was resized since it had shape "
                                                   "[2, 2], which does not match the required output shape [3]")):
        r = P.cumsum(P.ones(3), 0, out=out)
    assert r is out and out.tolist() == [1.0, 2.0, 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P.cumsum(P.ones(3), 0, out=P.zeros(0))
        t = P.zeros(4, 3).t()                      # right shape, other strides: kept
        assert P.mm(P.ones(3, 2), P.ones(2, 4), out=t) is t and t.stride() == (1, 3)


def test_wider_out_rounds_at_result_dtype_hand():
    # logit computes float16 in float16 (each step rounded): -0.84765625, not float32's -0.8472978
    assert P.logit(P.tensor([0.3], dtype=P.float16), out=P.zeros(1)).item() == -0.84765625
    a = P.tensor([0.1, 0.2], dtype=P.float16)
    r = P.add(a, a, out=P.zeros(2, dtype=P.float64))
    assert r.tolist() == P.add(a, a).double().tolist()


# float16/bfloat16 results that differ from torch's whatever out= is (torch rounds an intermediate step to the
# reduced type: log in xlogy, sqrt in bfloat16 rsqrt; torch's float16 rsqrt is one unit in the last place off the
# correctly rounded value for some inputs, e.g. 0.6567 -> 1.2334 instead of 1.2344); reported, not part of the
# out= rules
REDUCED_NUMERICS = {("xlogy", "float16"), ("xlogy", "bfloat16"), ("rsqrt", "bfloat16"), ("rsqrt", "float16"),
                    # torch evaluates i0e/i1e's series in the reduced type (1 ulp apart); ours in double, rounded once
                    ("special_i0e", "float16"), ("special_i0e", "bfloat16"), ("special_i1e", "float16"),
                    ("special_i1e", "bfloat16")}


@requires_torch
@pytest.mark.parametrize("op", sorted(ELEMENTWISE) + ["logit", "clamp", "lerp", "addcmul", "addcdiv", "where"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_wider_out_rounding(op, dtype):
    """Reduced-precision inputs into a float32/float64 out=: torch's result dtype first, then the cast."""
    def run(M):
        fn, args, kw = ALL[op](M)
        args = tuple(a.to(_dt(M, dtype)) if isinstance(a, M.Tensor) and a.is_floating_point() else a for a in args)
        try:
            r = fn(*args, **kw)
        except (RuntimeError, NotImplementedError, TypeError):
            return None
        if not r.is_floating_point():
            return None
        outs = [r.double().tolist()]
        for w in ("float32", "float64"):
            try:
                outs.append(fn(*args, **kw, out=M.zeros(tuple(r.shape), dtype=_dt(M, w))).tolist())
            except (RuntimeError, TypeError) as e:  # ops that keep their input's dtype refuse another out dtype
                outs.append(type(e).__name__)
        return outs
    t, p = run(T), run(P)
    if p is not None:  # the wider out holds the result computed at its own dtype, cast
        for a in p[1:]:
            if not isinstance(a, str):
                np.testing.assert_array_equal(np.array(a, dtype=float), np.array(p[0], dtype=float))
    if t is None or (op, dtype) in REDUCED_NUMERICS:
        return
    if "TypeError" in t:  # torch has no out= for it
        return
    assert_same(p, t, exact=True)


# The order of torch's checks where a call breaks several rules, and the self of in-place ops that write in place.
ORDER_CASES = {
    "tril_expanded_4d": lambda M: M.zeros(1, dtype=M.int32).expand(2, 3, 1, 4).tril_(-1),
    "tril_expanded_2d": lambda M: M.zeros(1).expand(3, 3).tril_(),
    "triu_expanded_batch": lambda M: M.zeros(2, 1, 3, 3).expand(2, 4, 3, 3).triu_(),
    "index_copy_source_is_self": lambda M: (lambda t: t.index_copy_(1, M.zeros((2, 1, 0), dtype=M.int64), t))(
        M.ones(3, 1, 4)),
    "index_copy_expanded_out_before_index": lambda M: M.index_copy(
        M.ones(4, 3, 4), 1, M.zeros(0, 3, 1), M.ones(4, 3, 4), out=M.zeros(1).expand(4, 3, 4)),
    "index_add_index_before_expanded_out": lambda M: M.index_add(
        M.ones(4, 3, 4), 1, M.zeros(2, 0, 1, dtype=M.int64), M.ones(4, 3, 4), out=M.zeros(1).expand(4, 3, 4)),
    "kthvalue_out_type_first": lambda M: M.kthvalue(M.ones(3), -1, dim=0, out=True),
    "max_dim_out_length_first": lambda M: M.max(M.zeros(0, 5), dim=0, out=[M.zeros(1), M.zeros(1), M.zeros(1)]),
    "cummin_out_type_first": lambda M: M.cummin(M.ones(1, 5), dim=2, out={}),
    "all_out_dtype_before_dims": lambda M: M.all(M.ones(3), [-1, 1], True, out=M.zeros(1)),
    "logsumexp_out_dtype_before_dims": lambda M: M.logsumexp(M.ones(3), [-2], out=M.zeros(1, dtype=M.int8)),
    "mean_int_out": lambda M: M.mean(M.ones(2, 3), 1, out=M.zeros(2, dtype=M.int64)),
    "nansum_int_out": lambda M: M.nansum(M.ones(2, 3), 1, out=M.zeros(2, dtype=M.int64)),
    "where_wider_out": lambda M: M.where(M.ones(2, dtype=M.bool), M.ones(2), M.ones(2), out=M.zeros(2, dtype=M.float64)),
    "inner_expanded_wrong_shape": lambda M: M.inner(M.ones(2, 3), M.ones(2, 3), out=M.zeros(1).expand(2, 3)),
    "stack_dtype_before_overlap": lambda M: M.stack([M.ones(2)], out=M.zeros(1, dtype=M.int16).expand(4)),
    # torch adds the max back into the result in place, with keepdim's shape: refused for dim=[]
    "logsumexp_empty_dims": lambda M: M.ones(2, 2, 2).logsumexp([]),
    "logsumexp_empty_dims_keepdim": lambda M: M.ones(2, 2).logsumexp([], True),
    "logsumexp_empty_dims_empty_input": lambda M: M.zeros(0, 2).logsumexp([]),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(ORDER_CASES))
def test_check_order(case):
    def run(M):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ORDER_CASES[case](M)
            except Exception as e:  # noqa: BLE001
                return type(e).__name__, str(e).split("\n")[0][:60]
        return None
    t, p = run(T), run(P)
    assert (t is None) == (p is None), f"torch {t}, pyctorch {p}"
    if t is not None:
        assert p[0] == t[0] and (t[0] == "TypeError" or p[1] == t[1]), f"torch {t}, pyctorch {p}"
