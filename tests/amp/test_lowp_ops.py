"""Every op of the table with bfloat16 and float16 inputs against torch with the same dtypes.

The inputs are the samples of tests/test_autograd_ops.py (every differentiable op has some, and
the non-differentiable ops their calls in NONDIFF), made in the reduced dtype instead of float64;
pointwise unary/binary ops are covered for every dtype by tests/test_ops.py. Outputs must have
torch's dtype and shape, and values within the reduced dtype's precision (relative to the output's
magnitude: a few units in the last place of bfloat16 / float16, as torch itself computes some ops
with intermediate roundings). Ops torch refuses in a dtype must raise in pyctorch too.
Random samplers compare dtype and shape only."""
import warnings

import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch

import test_autograd_ops as TA

MAX_SAMPLES = 2
TOL = {"bfloat16": 3e-2, "float16": 4e-3}
RANDOM_OPS = {"rand_like", "randn_like", "randint_like", "randint_like_low", "bernoulli", "bernoulli_p", "multinomial",
              "dropout", "normal_tensor_float", "normal_tensor_tensor", "normal_float_tensor", "uniform", "normal",
              "exponential", "cauchy", "log_normal", "geometric", "random", "random_to", "random_from_to",
              "rrelu_with_noise", "bernoulli_", "uniform_", "normal_"}
# integer outputs that depend on the order of values: equal bfloat16/float16 values (ties) may be
# ordered differently, so their indices are checked to point at equal values instead
ORDER_DEPENDENT = {"sort", "argsort", "argsort_stable", "topk", "max_dim", "min_dim", "argmax", "argmin", "kthvalue",
                   "median_dim", "nanmedian_dim", "mode", "cummax", "cummin", "msort", "sort_stable",
                   "max_pool2d_with_indices", "max_pool1d_with_indices", "adaptive_max_pool2d",
                   "adaptive_max_pool1d", "unique", "aminmax"}
UNINITIALIZED = {"empty_like", "new_empty"}  # values are whatever memory held: dtype and shape only

# ops whose reduced-precision behaviour differs from torch's, (op, sample index or None): reason
KNOWN = {}


# ops torch computes in float32 on reduced-precision inputs (its fused CPU attention kernels): the
# math references of test_autograd_ops.py run on float32 copies of the inputs and their outputs are
# rounded back, except those at the indices given (logsumexp stays float32, as torch's)
IN_FLOAT = {"flash_attention_cpu": {1}, "flash_attention_cpu_backward": set()}


def _call_in_float(op, k, xs, dtype):
    outs = _call(torch, op, k, [x.float() if x.is_floating_point() else x for x in xs])
    return [o if i in IN_FLOAT[op] else o.to(getattr(torch, dtype)) for i, o in enumerate(outs)]


def _fused(name, **kw):
    """A fused optimizer step on reduced-precision parameters (state step 1)."""
    def f(T, x):
        p, g = [x.detach().clone()], [x.detach() * 0.1]
        lists = {"_fused_sgd_": [[x.detach() * 0]],
                 "_fused_adagrad_": [[x.detach() * 0], [T.tensor(1.0)]]}.get(name, [[x.detach() * 0], [x.detach() * 0], [], [T.tensor(1.0)]])
        getattr(T, name)(p, g, *lists, **kw)
        return [p[0]] + [t for lst in lists for t in lst if t.is_floating_point() and t.dim()]
    return f


ADAM = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.01, eps=1e-8, amsgrad=False, maximize=False)
# ops the samples of test_autograd_ops.py do not reach with a floating input
EXTRA = {
    "fused_adam_": _fused("_fused_adam_", **ADAM),
    "fused_adamw_": _fused("_fused_adamw_", **ADAM),
    "fused_sgd_": _fused("_fused_sgd_", weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0, nesterov=False,
                         maximize=False, is_first_step=True),
    "fused_adagrad_": _fused("_fused_adagrad_", lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False),
    "unique_consecutive": lambda T, x: x.round().unique_consecutive(return_counts=True, return_inverse=True),
    "unique_consecutive_kw": lambda T, x: T.unique_consecutive(x.round(), return_counts=True),
    "unique_consecutive_p1": lambda T, x: T.unique_consecutive(x.round(), True),
    "unique_consecutive_p2": lambda T, x: T.unique_consecutive(x.round(), True, True),
    "unique_consecutive_p3": lambda T, x: T.unique_consecutive(x.round(), True, True, 0),
    "embedding_renorm_": lambda T, x: T.embedding_renorm_(x.detach().clone(), T.tensor([0, 1]), 1.0, 2.0),
    "amp_foreach_non_finite_check_and_unscale_": lambda T, x: _unscale(T, x),
    **{k: v for k, v in TA.MISSING_LIKE_TORCH.items()},
}


def _unscale(T, x):
    g, found = [x.detach().clone()], T.zeros(())
    T._amp_foreach_non_finite_check_and_unscale_(g, found, T.full((), 0.5))
    return [g[0], found]


# ops with tensor parameters of which none is floating
NO_FLOAT_INPUT = {"repeat_interleave_idx": "its only tensor is the integer repeats",
                  "amp_update_scale_": "scale and found_inf are float32 by contract, growth_tracker int32",
                  "linalg_check_errors": "its only tensor is the int32 info of a factorisation"}


def _cases():
    out = []
    for op, samples in sorted(TA.SAMPLES.items()):
        for k, s in enumerate(samples[:MAX_SAMPLES]):
            if s.skip:
                continue
            out.append((op, k))
    for op, (_, fn) in sorted(TA.NONDIFF.items()):
        if fn is not None and op not in EXTRA:
            out.append((op, -1))
    for op in sorted(EXTRA):
        out.append((op, -2))
    return out


CASES = _cases()


def _inputs(T, op, k, dtype):
    if k < 0:
        arr = np.array([[0.25, -1.5, 0.75], [2.0, 0.5, -0.125]]) * (2 if k == -2 else 1)
        return [T.tensor(arr.tolist(), dtype=getattr(T, dtype))]
    s = TA.SAMPLES[op][k]
    xs = []
    for i, spec in enumerate(s.inputs):
        arr = spec.sample(TA._rng(op, k, i))
        sp = TA.In(spec.shape, spec.layout, values=arr, dtype=dtype if spec.dtype == "float64" else spec.dtype)
        xs.append(TA._make(T, arr, sp, False))
    return xs


def _call(T, op, k, xs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if k == -2:
            return TA._tensors(EXTRA[op](T, xs[0]))
        if k < 0:
            return TA._tensors(TA.NONDIFF[op][1](T, xs[0]))
        return TA._tensors(TA.SAMPLES[op][k].call(T, xs))


def _compare(op, p, t, dtype):
    assert TA._dname(p) == TA._dname(t), f"{op}: dtype {TA._dname(p)} != torch {TA._dname(t)}"
    assert tuple(p.shape) == tuple(t.shape), f"{op}: shape {tuple(p.shape)} != torch {tuple(t.shape)}"
    if op in RANDOM_OPS or op in UNINITIALIZED:
        return
    a, b = TA._np(p), TA._np(t)
    if not p.is_floating_point():
        if op in ORDER_DEPENDENT:
            return  # indices of ties: checked through the values they select (float outputs)
        np.testing.assert_array_equal(a, b, err_msg=op)
        return
    finite = np.isfinite(b)
    np.testing.assert_array_equal(np.isfinite(a), finite, err_msg=f"{op}: non-finite positions differ")
    if finite.any():
        scale = max(1.0, float(np.abs(b[finite]).max()))
        tol = TOL.get(TA._dname(p), 1e-5)
        np.testing.assert_allclose(a[finite], b[finite], rtol=tol, atol=tol * scale, err_msg=op)


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op,k", CASES, ids=[f"{o}-{k}" for o, k in CASES])
def test_op_in_reduced_dtype_matches_torch(op, k, dtype):
    reason = KNOWN.get((op, None)) or KNOWN.get((op, k))
    if reason:
        pytest.xfail(reason)
    txs = _inputs(torch, op, k, dtype)
    pxs = _inputs(pyctorch, op, k, dtype)
    try:
        touts = _call_in_float(op, k, txs, dtype) if op in IN_FLOAT else _call(torch, op, k, txs)
    except (RuntimeError, NotImplementedError, TypeError, ValueError, IndexError) as e:
        with pytest.raises(type(e)):
            _call(pyctorch, op, k, pxs)
        return
    pouts = _call(pyctorch, op, k, pxs)
    assert len(pouts) == len(touts), f"{op}: {len(pouts)} outputs != torch {len(touts)}"
    for p, t in zip(pouts, touts):
        _compare(op, p, t, dtype)


def test_every_table_op_is_covered():
    """Each op of the table runs here, in tests/test_ops.py (pointwise, all dtypes), or is listed as
    taking no floating tensor input."""
    covered = {op for op, _ in CASES}
    pointwise = {e["id"] for e in pyctorch._C._op_table() if e["kind"] in ("unary", "binary")}
    missing = sorted(e["id"] for e in pyctorch._C._op_table()
                     if e["id"] not in covered and e["id"] not in pointwise and TA._has_tensor_param(e)
                     and e["id"] not in NO_FLOAT_INPUT)
    assert missing == [], f"ops without a reduced-precision sample: {missing}"
