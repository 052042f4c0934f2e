"""Every op of the table and every Python composite with bfloat16 and float16 inputs against torch with the same
dtypes.

The inputs are the first samples made for "lowp" in the sample registry (tests/samples.py: every
differentiable op has some, the non-differentiable and formula-less ops their calls, the Python composites
their float "op" samples), made in the
reduced dtype instead of float64;
pointwise unary/binary ops are covered for every dtype by tests/test_ops.py. Outputs must have
torch's dtype and shape, and values within the reduced dtype's precision (relative to the output's
magnitude: a few units in the last place of bfloat16 / float16, as torch itself computes some ops
with intermediate roundings). Ops torch refuses in a dtype must raise in pyctorch too.
Random samplers compare dtype and shape only."""
import pytest

import pyctorch
import samples as SR
from comparison import assert_same, outcome
from conftest import requires_torch, torch

MAX_SAMPLES = 2
DEVICE = SR.DEVICE
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
# math references of the samples (tests/samples.py) run on float32 copies of the inputs and their outputs are
# rounded back, except those at the indices given (logsumexp stays float32, as torch's).
# Also grid_sampler_3d_backward, which torch computes in the reduced type itself (every coordinate step
# rounded) and pyctorch in float32 like every float16/bfloat16 kernel: where a sampling point lies near a cell
# boundary the rounding moves it to the next cell, and the gradient (piecewise in the cells) jumps, so it is
# compared with torch's float32 result.
IN_FLOAT = {"flash_attention_cpu": {1}, "flash_attention_cpu_backward": set(), "grid_sampler_3d_backward": set()}


def _call_in_float(op, k, xs, dtype):
    outs = _call(torch, op, k, [x.float() if x.is_floating_point() else x for x in xs])
    return [o if i in IN_FLOAT[op] else o.to(getattr(torch, dtype)) for i, o in enumerate(outs)]


# ops with tensor parameters of which none is floating
NO_FLOAT_INPUT = {"repeat_interleave_idx": "its only tensor is the integer repeats",
                  "amp_update_scale_": "scale and found_inf are float32 by contract, growth_tracker int32",
                  "linalg_check_errors": "its only tensor is the int32 info of a factorisation"}


CASES = SR.cases("lowp", first=MAX_SAMPLES)


def _inputs(T, op, k, dtype):
    """Sample k of op with its float64 inputs made in dtype (constants: nothing requires grad)."""
    sample = SR.SAMPLES[op][k]
    return SR.make_inputs(T, sample, SR.arrays(op, k, sample), requires_grad=False, dtype=dtype, device=DEVICE)


def _call(T, op, k, xs):
    return SR.tensors(SR.call(T, SR.SAMPLES[op][k], xs, DEVICE))


def _compare(op, p, t):
    """torch's dtype and shape; values within the reduced dtype's precision relative to the output's magnitude."""
    if op in RANDOM_OPS or op in UNINITIALIZED or (op in ORDER_DEPENDENT and not t.is_floating_point()):
        # random or uninitialised values; indices of ties: checked through the values they select (float outputs)
        assert_same(p, t, values=False, what=op)
        return
    if not t.is_floating_point():
        assert_same(p, t, what=op)
        return
    tol = TOL.get(str(t.dtype).split(".")[-1], 1e-5)
    assert_same(p, t, tol, tol, scale_atol=True, what=op)


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op,k", CASES, ids=[f"{o}-{k}" for o, k in CASES])
def test_op_in_reduced_dtype_matches_torch(op, k, dtype):
    reason = KNOWN.get((op, None)) or KNOWN.get((op, k))
    if reason:
        pytest.xfail(reason)
    txs = _inputs(torch, op, k, dtype)
    pxs = _inputs(pyctorch, op, k, dtype)
    touts = outcome(lambda: _call_in_float(op, k, txs, dtype) if op in IN_FLOAT else _call(torch, op, k, txs))
    pouts = outcome(lambda: _call(pyctorch, op, k, pxs))
    if isinstance(touts, Exception) or isinstance(pouts, Exception):  # torch refuses the dtype: pyctorch too
        assert_same(pouts, touts, what=op)
        return
    assert len(pouts) == len(touts), f"{op}: {len(pouts)} outputs != torch {len(touts)}"
    for p, t in zip(pouts, touts):
        _compare(op, p, t)


def test_every_table_op_is_covered():
    """Each op of the table and each Python composite (samples.ENTRIES) runs here, in tests/test_ops.py (the
    table's pointwise ops, all dtypes), or is listed as taking no floating tensor input."""
    covered = {op for op, _ in CASES}
    pointwise = {e["id"] for e in SR.TABLE if e["kind"] in ("unary", "binary")}
    missing = sorted(e["id"] for e in SR.ENTRIES
                     if e["id"] not in covered and e["id"] not in pointwise and SR.has_tensor_param(e)
                     and e["id"] not in NO_FLOAT_INPUT)
    assert missing == [], f"ops without a reduced-precision sample: {missing}"
