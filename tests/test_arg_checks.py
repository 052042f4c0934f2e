"""Argument checks and edge semantics found by the fuzzer (tests/test_fuzz.py), compared with torch.

Each case is one expression run with `m` bound to pyctorch and to torch: when torch raises, pyctorch must raise the
same builtin exception type and both messages must contain the case's fragment; when torch returns, the results must
be equal (dtype, shape, values; tuples element by element). The hand-checked tests at the end run without torch.
"""
import math
import os

import numpy as np
import pytest

import pyctorch
from conftest import assert_same, requires_torch, torch

F16, BF16, I8, I16, I32, I64, U8 = "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8"


def _d(m, name):
    return getattr(m, name)


# (id, expression over m, fragment that both error messages contain, or None when torch returns)
CASES = [
    # impossible sizes: RuntimeError (never MemoryError, never a crash)
    ("zeros_out_overflow", lambda m: m.zeros(2 ** 62, out=m.zeros(2)), "Storage size calculation overflowed"),
    ("linspace_out_overflow", lambda m: m.linspace(0, 1, 2 ** 62, out=m.zeros(2)), "Storage size calculation overflowed"),
    ("empty_storage_overflow", lambda m: m.empty([2 ** 62, 4]), "Storage size calculation overflowed"),
    ("zeros_storage_overflow", lambda m: m.zeros([2 ** 63 - 1, 1]), "Storage size calculation overflowed"),
    ("expanded_clone_overflow", lambda m: m.ones(1).expand(2 ** 62) * 2, "Storage size calculation overflowed"),
    ("expand_numel_overflow", lambda m: m.ones(1).expand(2 ** 62, 4), "numel: integer multiplication overflow"),
    ("view_numel_overflow", lambda m: m.zeros(0).view(2 ** 62, 4, 0), "numel: integer multiplication overflow"),
    ("empty_too_big", lambda m: m.empty([2 ** 40]), "DefaultCPUAllocator"),
    # an integral arange runs in int64: a Python int past it does not convert (fuzz-found)
    ("arange_uint64_bounds_int16", lambda m: m.arange(2 ** 64 - 1, end=2 ** 64 - 1, dtype=m.int16),
     "value cannot be converted to type int64_t without overflow"),
    ("arange_uint64_bounds_default", lambda m: m.arange(2 ** 64 - 1, end=2 ** 64 - 1),
     "value cannot be converted to type int64_t without overflow"),
    # a factory's device= must name out='s device type, whether or not that device exists here (fuzz-found)
    ("zeros_out_other_device", lambda m: m.zeros(2, device="cuda", out=m.zeros(2)),
     "device type cuda does not match device type of out parameter (cpu)"),
    ("zeros_out_other_device_empty", lambda m: m.zeros([4, 0], device="cuda", out=m.zeros(2)),
     "device type cuda does not match device type of out parameter (cpu)"),
    ("full_out_same_device", lambda m: m.full((2,), 3.0, device="cpu", out=m.zeros(2)), None),
    # arange: torch's checks in double, int64 sized on truncated bounds, the other integral dtypes in double
    ("arange_int64_truncated", lambda m: m.arange(0.0, 0.75, 4.75, dtype=m.int64), None),
    ("arange_int32_double_size", lambda m: m.arange(0.0, 0.75, 4.75, dtype=m.int32), None),
    ("arange_int8_zero_step", lambda m: m.arange(1, 12.9, 0.4, dtype=m.int8), None),
    ("arange_uint8_wraps", lambda m: m.arange(-7, 100, 2.5, dtype=m.uint8), None),
    ("arange_int64_neg_step", lambda m: m.arange(255.5, 10, -2.5, dtype=m.int64), None),
    ("arange_int64_step_truncates_to_0", lambda m: m.arange(0, 5, 0.5, dtype=m.int64), "step must be nonzero"),
    ("arange_int64_huge", lambda m: m.arange(-2 ** 63, 2 ** 63 - 1, 2 ** 62, dtype=m.int8), None),
    ("arange_int64_end_overflow", lambda m: m.arange(0, 1e19, 1e18, dtype=m.int64), "without overflow"),
    ("arange_sign", lambda m: m.arange(0.5, 0.1, 1, dtype=m.int32), "upper bound and lower bound inconsistent"),
    ("arange_bool", lambda m: m.arange(3, dtype=m.bool), "not implemented for 'Bool'"),
    ("arange_int_out_int8", lambda m: m.arange(0, 1000, 3, out=m.zeros(0, dtype=m.int8)), None),
    ("arange_out_dtype_mismatch", lambda m: m.arange(3, dtype=m.int64, out=m.zeros(5, dtype=m.int8)), "does not match"),
    # linspace / logspace: start and end converted to the dtype first (range-checked)
    ("linspace_int8_overflow", lambda m: m.linspace(300, 10, 2, dtype=m.int8), "without overflow"),
    ("linspace_half_overflow", lambda m: m.linspace(1e10, -7, 5, dtype=m.float16), "without overflow"),
    ("linspace_int32_trunc", lambda m: m.linspace(0.5, 2.5, 3, dtype=m.int32), None),
    ("linspace_int64_extremes", lambda m: m.linspace(-2 ** 63, 2 ** 63 - 1, 3, dtype=m.int64), None),
    ("linspace_bool", lambda m: m.linspace(0, 1, 3, dtype=m.bool), "not implemented for 'Bool'"),
    ("linspace_bool_one_step", lambda m: m.linspace(0, 1, 1, dtype=m.bool), None),
    ("logspace_int32", lambda m: m.logspace(4.5, -1, 3, dtype=m.int32), None),
    ("logspace_int16_trunc", lambda m: m.logspace(4.75, 1, 2, dtype=m.int16), None),
    ("logspace_int32_out_of_range", lambda m: m.logspace(20, 1, 3, dtype=m.int32), None),
    ("logspace_uint8_out_of_range", lambda m: m.logspace(20, 1, 3, dtype=m.uint8), None),
    ("logspace_negative_base", lambda m: m.logspace(0, 1, 3, base=-2.0, dtype=m.int16), None),
    ("logspace_one_step_fill_check", lambda m: m.logspace(4.75, 1, 1, dtype=m.int8), "without overflow"),
    # range factories keep an out= of the right numel (0-d stays 0-d; a transposed out is written in order)
    ("logspace_0d_out", lambda m: m.logspace(0, 1, 1, out=m.zeros(())), None),
    ("arange_2d_out", lambda m: m.arange(6, out=m.zeros(2, 3)), None),
    ("linspace_transposed_out", lambda m: m.linspace(0, 1, 6, out=m.zeros(3, 2).t()), None),
    # missing argument checks
    ("detach_view_inplace", lambda m: m.ones(3)[1:].detach_(), "Can't detach views in-place"),
    ("detach_of_detach_inplace", lambda m: m.ones(3).detach().detach_(), None),
    ("tensor_split_0d", lambda m: m.tensor_split(m.tensor(1.0), 1), "expected at least a 1-dimensional tensor"),
    ("tensor_split_negative", lambda m: m.tensor_split(m.arange(4.0).view(2, 2), [1, -2, 2]), None),
    ("tensor_split_unsorted", lambda m: m.tensor_split(m.arange(4.0).view(4, 1), [2, 1, 4, 3]), None),
    ("tensor_split_out_of_range", lambda m: m.tensor_split(m.arange(4.0), [-5, 9]), None),
    ("tensor_split_many_sections", lambda m: m.tensor_split(m.arange(5.0), 100), None),
    ("squeeze_duplicate", lambda m: m.zeros(1, 2).squeeze((0, -2)), "appears multiple times in the list of dims"),
    ("squeeze_varargs", lambda m: m.zeros(1, 2, 1).squeeze(0, 2), None),
    ("squeeze_0d_dim", lambda m: m.tensor(0.5).squeeze_(0), None),
    ("squeeze_0d_dims", lambda m: m.tensor(0.5).squeeze((0, -1)), "appears multiple times in the list of dims"),
    ("squeeze_varargs_function", lambda m: m.squeeze(m.zeros(1, 2, 1), 0, 2), "squeeze()"),
    ("count_nonzero_varargs", lambda m: m.ones(1, 3, 1).count_nonzero(0, 1), None),
    ("addcdiv_int_operands", lambda m: m.addcdiv(m.ones(2), m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
     "Integer division with addcdiv"),
    ("addcdiv_bool_operands", lambda m: m.addcdiv(m.ones(2), m.tensor([True]), m.tensor([True])),
     "Integer division with addcdiv"),
    ("contiguous_channels_last_2d", lambda m: m.ones(2, 3).contiguous(memory_format=m.channels_last),
     "required rank 4 tensor to use channels_last format"),
    ("contiguous_channels_last_4d", lambda m: m.arange(120.0).view(2, 3, 4, 5).contiguous(memory_format=m.channels_last),
     None),
    ("contiguous_preserve_copy", lambda m: m.ones(2, 3).t().contiguous(memory_format=m.preserve_format),
     "preserve memory format is unsupported by the contiguous operator"),
    ("contiguous_preserve_noop", lambda m: m.ones(2).contiguous(memory_format=m.preserve_format), None),
    ("empty_channels_last_2d", lambda m: m.empty(2, 3, memory_format=m.channels_last),
     "required rank 4 tensor to use channels_last format"),
    ("empty_memory_format_out", lambda m: m.empty(2, memory_format=m.channels_last, out=m.zeros(2)),
     "'memory_format' argument is incompatible with 'out' tensor argument"),
    ("empty_preserve", lambda m: m.empty(2, memory_format=m.preserve_format), "unsupported memory format Preserve"),
    ("pow_int_negative", lambda m: m.tensor([2, 3]).pow(-1), "Integers to negative integer powers are not allowed"),
    ("pow_uint8_negative_out", lambda m: m.pow(m.tensor([2], dtype=m.uint8), -1, out=m.zeros(1)),
     "Integers to negative integer powers are not allowed"),
    ("pow_int_negative_tensor", lambda m: m.tensor([2, 3]).pow(m.tensor(-1)), None),
    ("pow_int8_range", lambda m: m.ones(2, dtype=m.int8).pow(300), "without overflow"),
    ("pow_half_range", lambda m: m.ones(2, dtype=m.float16).pow(70000), "without overflow"),
    ("pow_float_any_exponent", lambda m: m.ones(2).pow(1e300), None),
    ("pow_bool_true", lambda m: m.tensor([True, False]).pow(True), None),
    ("pow_bool_false", lambda m: m.tensor([True, False]).pow(False), None),
    ("pow_bool_inplace", lambda m: m.tensor([True, False]).pow_(True), None),
    ("pow_bool_tensors", lambda m: m.pow(m.tensor([True]), m.tensor([True])), "not implemented for 'Bool'"),
    ("pow_scalar_bool_tensor", lambda m: m.pow(True, m.tensor([True, False])), "not implemented for 'Bool'"),
    ("nonzero_tuple_out", lambda m: m.nonzero(m.tensor([1.0]), out=m.zeros(1, dtype=m.int64), as_tuple=True),
     "does not support the out kwarg when as_tuple is True"),
    ("flatten_0d_bad_dim", lambda m: m.tensor(0.5).flatten(1, 0), "Dimension out of range"),
    ("flatten_0d_ok", lambda m: m.tensor(0.5).flatten(-1, 0), None),
    ("split_with_sizes_negative", lambda m: m.zeros(1, 2).split_with_sizes([2, -1], 1), "only non-negative entries"),
    ("split_list_negative", lambda m: m.zeros(3).split([-1, 4]), "only non-negative entries"),
    ("unfold_negative_size", lambda m: m.tensor([1, 7, 9, -5, -1]).unfold(0, -1, 4), "but must be >= 0"),
    ("lerp_weight_dtype", lambda m: m.lerp(m.zeros(2), m.ones(2), m.tensor([1, 2])), "for `weight` but got dtype long int"),
    ("lerp_end_dtype", lambda m: m.lerp(m.zeros(2, dtype=m.float64), m.ones(2), 0.5),
     "expected dtype double for `end` but got dtype float"),
    ("lerp_0d_weight", lambda m: m.lerp(m.zeros(2, dtype=m.float64), m.ones(2, dtype=m.float64), m.tensor(0.5)), None),
    ("tensordot_dims_none", lambda m: m.tensordot(m.ones(2, 2), m.ones(2, 2), None), "but got dims=None"),
    ("tensordot_default_dims", lambda m: m.tensordot(m.ones(2, 2), m.ones(2, 2)), None),
    # scalar range checks (float16 / bfloat16 too, except a one-element fill)
    ("fill_half_range", lambda m: m.zeros(2, dtype=m.float16).fill_(70000), "without overflow"),
    ("fill_half_one_element", lambda m: m.zeros(1, dtype=m.float16).fill_(1e10), None),
    ("full_bfloat16_range", lambda m: m.full((2,), 1e300, dtype=m.bfloat16), "without overflow"),
    ("clamp_half_int_range", lambda m: m.ones(2, dtype=m.float16).clamp(70000), "without overflow"),
    ("add_alpha_half_range", lambda m: m.ones(2, dtype=m.float16).add(m.ones(2, dtype=m.float16), alpha=70000),
     "without overflow"),
    ("where_scalar_range", lambda m: m.where(m.tensor([True, False]), m.zeros(2, dtype=m.int8), 300), "without overflow"),
    ("where_scalar_first_range", lambda m: m.where(m.tensor([True, False]), -300, m.zeros(2, dtype=m.uint8)),
     "without overflow"),
    ("index_add_alpha_range", lambda m: m.zeros(2, dtype=m.float16).index_add(0, m.tensor([0]), m.ones(1, dtype=m.float16),
                                                                             alpha=70000), "without overflow"),
    ("addmm_beta_range", lambda m: m.zeros(2, 2).addmm(m.zeros(2, 2), m.zeros(2, 2), beta=1e300), "type float without"),
    ("addmm_alpha_double", lambda m: m.zeros(2, 2, dtype=m.float64).addmm(m.zeros(2, 2, dtype=m.float64),
                                                                          m.zeros(2, 2, dtype=m.float64), alpha=1e300), None),
    ("baddbmm_alpha_range", lambda m: m.zeros(1, 2, 2, dtype=m.int8).baddbmm(m.zeros(1, 2, 2, dtype=m.int8),
                                                                             m.zeros(1, 2, 2, dtype=m.int8), alpha=300),
     "without overflow"),
    ("addcmul_bfloat16_value", lambda m: m.zeros(2, dtype=m.bfloat16).addcmul(m.ones(2, dtype=m.bfloat16),
                                                                              m.ones(2, dtype=m.bfloat16), value=1e300),
     "type float without"),
    ("full_uint64_int", lambda m: m.full((2,), 2 ** 63), "without overflow"),
    ("full_uint64_float", lambda m: m.full((2,), 2 ** 63, dtype=m.float32), None),
    ("tensor_int8_range", lambda m: m.tensor([1, 300], dtype=m.int8), "value cannot be converted to type int8 without"),
    ("tensor_uint8_wraps", lambda m: m.tensor([-1], dtype=m.uint8), None),
    ("tensor_int_nan", lambda m: m.tensor([float("nan")], dtype=m.int32), "without overflow"),
    ("tensor_half_inf", lambda m: m.tensor([70000], dtype=m.float16), None),
    ("tensor_float_huge_int", lambda m: m.tensor([2 ** 63], dtype=m.float32), None),
    ("tensor_huge_int", lambda m: m.tensor([2 ** 63]), "Overflow when unpacking long long"),
    # setitem: a Python number is range-checked; a tuple key with True/False goes through index_put_
    ("setitem_scalar_range", lambda m: m.zeros(2, dtype=m.uint8).__setitem__(Ellipsis, -1.0), "without overflow"),
    ("setitem_scalar_wraps", lambda m: (lambda x: (x.__setitem__(0, -1), x)[1])(m.zeros(2, dtype=m.uint8)), None),
    ("setitem_half_unchecked", lambda m: (lambda x: (x.__setitem__(Ellipsis, 1e10), x)[1])(m.zeros(2, dtype=m.float16)),
     None),
    ("setitem_bool_key_dtype", lambda m: m.zeros(2, dtype=m.int16).__setitem__((True, Ellipsis),
                                                                              m.tensor(1.5, dtype=m.float16)),
     "Index put requires the source and destination dtypes match"),
    ("setitem_bool_key_same_dtype", lambda m: (lambda x: (x.__setitem__((0, True), m.tensor(3, dtype=m.int16)), x)[1])(
        m.zeros(2, dtype=m.int16)), None),
    ("setitem_plain_true", lambda m: (lambda x: (x.__setitem__(True, m.tensor(1.5)), x)[1])(m.zeros(2, dtype=m.int16)),
     None),
    ("scatter_value_empty_index", lambda m: m.tensor([5], dtype=m.uint8).scatter_(0, m.zeros(0, dtype=m.int64), -2.0),
     None),
    ("scatter_value_range", lambda m: m.tensor([5], dtype=m.uint8).scatter_(0, m.zeros(1, dtype=m.int64), -2.0),
     "without overflow"),
    ("clamp_nan_bound_unchecked", lambda m: m.tensor([-0.1], dtype=m.float16).clamp(math.nan, 2 ** 63 - 1), None),
    ("clamp_half_int_bound", lambda m: m.tensor([-0.1], dtype=m.float16).clamp(0, 2 ** 63 - 1), "without overflow"),
    ("split_huge_step", lambda m: m.tensor([1, 5], dtype=m.int8).split(2 ** 63 - 1, -1), None),
    ("roll_dims_none", lambda m: m.arange(6.0).view(2, 3).roll(1, None), None),
    ("to_int_with_copy", lambda m: m.tensor([0.04]).to(-1, False, True), None),
    ("setitem_empty_view_extra_dims", lambda m: m.zeros(0, 2).__setitem__((), m.ones(3, 0, 2)),
     "the number of sizes provided (2) must be greater or equal"),
    ("setitem_empty_view_mismatch", lambda m: m.zeros(0).__setitem__(slice(None), m.ones(2)),
     "The expanded size of the tensor (0) must match the existing size (2)"),
    ("setitem_leading_ones", lambda m: (lambda x: (x.__setitem__((), m.ones(1, 1, 3)), x)[1])(m.zeros(2, 3)), None),
    ("tensor_split_huge_sections", lambda m: m.zeros(5, 1).tensor_split(1099511627776, 0), "std::bad_alloc"),
    ("to_negative_device_then_flag", lambda m: m.tensor(-8).to(-1, False), None),
    ("zeros_negative_device", lambda m: m.zeros(2, device=-1), "Device index must not be negative"),
    # the parser: torch's spellings
    ("bool_for_int", lambda m: m.ones(3).unfold(0, 1, True), "must be int, not bool"),
    ("bool_for_int_list", lambda m: m.zeros(True), "must be tuple of ints"),
    ("bool_for_dim", lambda m: m.ones(2, 3).softmax(True), "must be int, not bool"),
    ("none_for_requires_grad", lambda m: m.randperm(3, requires_grad=None).dtype, None),
    ("none_for_requires_grad_zeros", lambda m: m.zeros(2, requires_grad=None), None),
    ("none_for_keepdim", lambda m: m.ones(2).sum(keepdim=None), "keepdim"),
    ("positional_memory_format", lambda m: m.ones(2).contiguous(m.contiguous_format), "positional argument"),
    ("int_memory_format", lambda m: m.ones(2).contiguous(memory_format=1), "must be torch.memory_format"),
    ("dtype_as_layout", lambda m: m.empty(2, layout=m.float32), "must be torch.layout"),
    ("rsub_scalar_first", lambda m: m.rsub(1, m.ones(2)), "rsub()"),
    ("rsub_scalar_second", lambda m: m.rsub(m.ones(2), 1), None),
    ("copy_number", lambda m: m.zeros(2, dtype=m.int8).copy_(300), None),
    ("copy_other_keyword", lambda m: m.zeros(2).copy_(other=m.ones(2)), None),
    ("to_float_number", lambda m: m.tensor(False).to(1.5), None),
    ("to_bool_number", lambda m: m.tensor([1, 2]).to(True), None),
    ("to_negative_device", lambda m: m.ones(2).to(-3), "Device index must not be negative"),
    ("is_contiguous_channels_last_2d", lambda m: m.ones(2, 3).is_contiguous(memory_format=m.channels_last), None),
    ("is_contiguous_channels_last", lambda m: m.ones(2, 3, 4, 5).contiguous(memory_format=m.channels_last)
     .is_contiguous(memory_format=m.channels_last), None),
    # bool views of bytes other than 0 and 1: any nonzero byte is True
    ("bool_view_int", lambda m: m.tensor([-2, 5, 0, 256], dtype=m.int16).view(m.bool).int(), None),
    ("bool_view_not", lambda m: m.tensor([-2, 5, 0, 256], dtype=m.int16).view(m.bool).logical_not(), None),
    ("bool_view_sum_dim", lambda m: m.tensor([-2, 5, 0, 256], dtype=m.int16).view(m.bool).view(2, 4).sum(1), None),
    ("bool_view_masked_fill", lambda m: m.arange(8.0).masked_fill(m.tensor([-2, 5, 0, 256], dtype=m.int16)
                                                                  .view(m.bool), -1), None),
    # dim lists: torch's TensorIterator reductions wrap every dim before looking for repeats; flip, squeeze,
    # var/std, vector_norm and nansum check dim by dim
    *[(f"dims_{name}_{i}", (lambda f, d: lambda m: f(m, m.ones(2, 5), d))(f, d),
       "appears multiple times" if (name in ("flip", "squeeze", "std", "var_mean", "vector_norm", "nansum")
                                    and d[0] == d[1]) else "Dimension out of range")
      for name, f in [("flip", lambda m, t, d: t.flip(d)), ("squeeze", lambda m, t, d: t.squeeze(d)),
                      ("vector_norm", lambda m, t, d: m.linalg.vector_norm(t, dim=d)),
                      ("std", lambda m, t, d: t.std(dim=d)), ("var_mean", lambda m, t, d: m.var_mean(t, dim=d)),
                      ("logsumexp", lambda m, t, d: t.logsumexp(d)), ("count_nonzero", lambda m, t, d: t.count_nonzero(d)),
                      ("sum", lambda m, t, d: t.sum(d)), ("mean", lambda m, t, d: t.mean(d)),
                      ("all", lambda m, t, d: t.all(d)), ("amax", lambda m, t, d: t.amax(d)),
                      ("nansum", lambda m, t, d: t.nansum(d)), ("nanmean", lambda m, t, d: t.nanmean(d))]
      for i, d in enumerate(([0, 0, 2], [2, 0, 0], [-2, -2, 2]))],
    # native_batch_norm: running stats both or neither, then the channel dim, the dtype, the parameters' sizes
    ("bn_one_running_stat", lambda m: m.native_batch_norm(m.ones(2, 3), None, None, None, m.ones(1), False, 0.1, 1e-5),
     "must either both be None or neither be None"),
    ("bn_1d_input", lambda m: m.native_batch_norm(m.ones(3), m.ones(2), None, None, None, True, 0.1, 1e-5),
     "Dimension out of range"),
    ("bn_int_before_sizes", lambda m: m.native_batch_norm(m.ones(2, 3, dtype=m.int32), m.ones(2, dtype=m.int32), None,
                                                           None, None, True, 0.1, 1e-5), "not implemented for 'Int'"),
    ("bn_eval_functional", lambda m: m.nn.functional.batch_norm(m.ones(2, 3), None, m.ones(3), training=False),
     "running_mean must be defined in evaluation mode"),
]


def _outcome(m, fn):
    try:
        return "ok", fn(m)
    except Exception as e:  # noqa: BLE001 -- the property is about which exceptions
        return "raised", e


def _builtin_base(exc_type):
    return next(k for k in exc_type.__mro__ if k.__module__ == "builtins")


# torch is not built for ASan (make asan): its operator new aborts on impossible sizes instead of raising, so there
# these cases check pyctorch's refusal alone.
UNDER_SANITIZER = "libasan" in os.environ.get("LD_PRELOAD", "")
_HUGE = {"zeros_out_overflow", "linspace_out_overflow", "empty_storage_overflow", "zeros_storage_overflow",
         "expanded_clone_overflow", "empty_too_big", "tensor_split_huge_sections"}


@requires_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_like_torch(case):
    import warnings
    name, fn, fragment = case
    if UNDER_SANITIZER and name in _HUGE:
        pk, p = _outcome(pyctorch, fn)
        assert pk == "raised" and isinstance(p, RuntimeError) and fragment in str(p), (pk, p)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (pk, p), (tk, t) = _outcome(pyctorch, fn), _outcome(torch, fn)
    if tk == "raised":
        assert pk == "raised", f"returned {p!r}; torch raises {type(t).__name__}({t})"
        assert isinstance(p, _builtin_base(type(t))), f"raised {type(p).__name__}({p}); torch {type(t).__name__}({t})"
        assert fragment and fragment in str(t), f"torch's message changed: {t}"
        assert fragment in str(p), f"message {p!s} lacks {fragment!r} (torch: {t})"
    else:
        assert fragment is None, f"torch returned where the case expects {fragment!r}"
        assert pk == "ok", f"raised {type(p).__name__}({p}); torch returns"
        assert_same(p, t)


# ---- without torch: hand-checked values ----
def test_arange_integral_truncates_first():
    assert pyctorch.arange(1, 5.9, 0.9, dtype=pyctorch.int32).tolist() == [1] * 6   # step 0.9 -> 0, size in double
    assert pyctorch.arange(-0.9, 5, 1, dtype=pyctorch.int64).tolist() == [0, 1, 2, 3, 4]
    assert pyctorch.arange(300, 303, dtype=pyctorch.int8).tolist() == [44, 45, 46]
    with pytest.raises(ValueError, match="step must be nonzero"):
        pyctorch.arange(0, 5, 0.5, dtype=pyctorch.int64)


def test_range_out_keeps_matching_shape_and_version():
    out = pyctorch.zeros(2, 3)
    r = pyctorch.arange(6, out=out)
    assert r is out and tuple(out.shape) == (2, 3) and out.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out._version == 1
    assert pyctorch.arange(3)._version == 0
    z = pyctorch.zeros(())
    assert pyctorch.linspace(2, 3, 1, out=z).shape == () and z.item() == 2
    t = pyctorch.zeros(3, 2).t()
    pyctorch.linspace(0, 5, 6, out=t)
    assert t.stride() == (1, 2) and t.tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(RuntimeError, match="more than one element"):
        pyctorch.arange(4, out=pyctorch.zeros(1).expand(4))


def test_arange_int_out_writes_out_dtype():
    for _ in range(5):  # a heap overflow once (int64 elements into a smaller buffer)
        r = pyctorch.arange(0, 1000, out=pyctorch.zeros(0, dtype=pyctorch.int8))
        assert r.dtype == pyctorch.int8 and r.numel() == 1000
    assert pyctorch.arange(3, out=pyctorch.zeros(5, dtype=pyctorch.int16)).tolist() == [0, 1, 2]


def test_logspace_integral_x86_conversion():
    # out-of-range doubles convert to the minimum of int32 (narrower types keep its low bits) or int64
    assert pyctorch.logspace(20, 1, 3, dtype=pyctorch.int32).tolist() == [-2 ** 31, -2 ** 31, 10]
    assert pyctorch.logspace(20, 1, 3, dtype=pyctorch.int8).tolist() == [0, 0, 10]
    assert pyctorch.logspace(20, 1, 3, dtype=pyctorch.int64).tolist() == [-2 ** 63, 31622776601, 10]
    assert pyctorch.logspace(0, 1, 3, base=-2.0, dtype=pyctorch.int16).tolist() == [1, 0, -2]  # NaN -> 0


def test_to_aliases_like_torch():
    x = pyctorch.ones(3, 2).t()
    assert x.to(pyctorch.float32, memory_format=pyctorch.contiguous_format) is x  # the suggested format: no copy
    y = pyctorch.ones(2, 3, 4, 5).contiguous(memory_format=pyctorch.channels_last)
    assert y.to(memory_format=pyctorch.channels_last) is y
    z = y.to(memory_format=pyctorch.contiguous_format)
    assert z is not y and z.is_contiguous()


def test_resize_keeps_strides_of_same_shape():
    t = pyctorch.zeros(3, 2).t()
    pyctorch.zeros(2, 3, out=t)
    assert t.stride() == (1, 2)


def test_bool_view_reads_any_nonzero_byte_as_true():
    r = pyctorch.tensor([-2, 5, 0, 256], dtype=pyctorch.int16).view(pyctorch.bool)
    bits = [v != 0 for v in np.array([-2, 5, 0, 256], dtype=np.int16).view(np.uint8)]
    assert r.tolist() == bits
    assert r.sum().item() == sum(bits) and r.view(2, 4).sum(1).tolist() == [sum(bits[:4]), sum(bits[4:])]
    assert r.float().tolist() == [float(b) for b in bits]
    assert (~r).tolist() == [not b for b in bits]


def test_impossible_allocation_is_runtime_error():
    for fn in (lambda: pyctorch.empty(2 ** 62), lambda: pyctorch.zeros([2 ** 63 - 1, 1]),
               lambda: pyctorch.ones(1).expand(2 ** 62).clone()):
        with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
            fn()
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        pyctorch.ones(1).expand(2 ** 62, 4)
    assert not math.isnan(pyctorch.empty(0).sum().item())
