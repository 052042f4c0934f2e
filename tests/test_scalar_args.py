"""Python scalars meeting tensor dtypes, and the spellings the argument parser refuses (torch's overloads).

Each case is one expression run with `m` bound to pyctorch and to torch: when torch raises, pyctorch raises the same
builtin exception type (and, where a fragment is given, both messages contain it); when torch returns, the results are
equal (dtype, shape, values). The hand-checked tests below them run without torch.
"""
import math

import pytest

import pyctorch
from conftest import assert_same, requires_torch, torch

U64 = 2 ** 64 - 1
OVERFLOW = "without overflow"
UINT64_PROMOTION = "Promotion for uint16, uint32, uint64 types is not supported"


def _t(m, values, dtype="float32"):
    return m.tensor(values, dtype=getattr(m, dtype))


def _mask(m):
    return m.tensor([True, False])


CASES = [
    # Python floats taken as a Tensor argument are float64 numbers, range-checked against the result dtype
    ("where_float_other_overflow", lambda m: m.where(_mask(m), m.ones(2), 1e300), OVERFLOW),
    ("where_float_input_overflow", lambda m: m.where(_mask(m), 1e300, m.ones(2)), OVERFLOW),
    ("where_float_double_ok", lambda m: m.where(_mask(m), m.ones(2, dtype=m.float64), 1e300), None),
    ("where_half_unchecked", lambda m: m.where(_mask(m), m.ones(2, dtype=m.float16), 1e5), None),
    ("lerp_weight_overflow", lambda m: m.lerp(m.ones(2), m.zeros(2), 1e300), OVERFLOW),
    ("lerp_weight_overflow_float", lambda m: m.lerp(m.ones(2), m.zeros(2), 1e39), OVERFLOW),
    ("lerp_weight_half_opmath", lambda m: m.lerp(m.ones(2, dtype=m.float16), m.zeros(2, dtype=m.float16), 1e5), None),
    ("lerp_weight_double", lambda m: m.lerp(m.ones(2, dtype=m.float64), m.zeros(2, dtype=m.float64), 1e300), None),
    ("lerp_weight_tensor_unchecked",
     lambda m: m.lerp(m.ones(2), m.zeros(2), m.tensor(1e300, dtype=m.float64)), None),
    ("lerp_weight_uint64", lambda m: m.lerp(m.ones(2), m.zeros(2), 2 ** 63), None),
    ("logit_eps_overflow", lambda m: m.ones(2).logit(1e300), OVERFLOW),
    ("logit_eps_overflow_int_input", lambda m: m.ones(2, dtype=m.int8).logit(-1e300), OVERFLOW),
    ("logit_eps_half", lambda m: m.ones(2, dtype=m.float16).logit(1e5), OVERFLOW),
    ("logit_eps_double", lambda m: m.ones(2, dtype=m.float64).logit(1e300), None),
    ("threshold_overflow", lambda m: m.nn.functional.threshold(m.ones(2), 1e300, 2.0), OVERFLOW),
    ("threshold_half_opmath", lambda m: m.nn.functional.threshold(m.ones(2, dtype=m.float16), 1e5, 2.0), None),
    ("threshold_value_half", lambda m: m.nn.functional.threshold(m.ones(2, dtype=m.float16), 2.0, 1e5), OVERFLOW),
    ("threshold_int", lambda m: m.nn.functional.threshold(m.ones(2, dtype=m.int32), 1e10, 2), OVERFLOW),
    ("threshold_uint8_negative", lambda m: m.nn.functional.threshold(m.ones(2, dtype=m.uint8), -1, 2), None),
    ("threshold_bool", lambda m: m.nn.functional.threshold(m.ones(2, dtype=m.bool), 5, 2), "threshold_cpu"),
    ("threshold_inplace_overflow", lambda m: m.nn.functional.threshold(m.ones(2), 1e300, 2.0, inplace=True), OVERFLOW),
    ("hardtanh_overflow", lambda m: m.nn.functional.hardtanh(m.ones(2), -1e300, 1.0), OVERFLOW),
    # 0-d tensors in a list given an integral dtype are taken as Python ints
    ("tensor_list_int_overflow", lambda m: m.tensor([m.tensor(300), m.tensor(1)], dtype=m.int8), OVERFLOW),
    ("tensor_list_1d_overflow", lambda m: m.tensor([m.tensor([300])], dtype=m.int8), OVERFLOW),
    ("tensor_list_float_into_int", lambda m: m.tensor([m.tensor(2.5), m.tensor(1)], dtype=m.int8), None),
    ("tensor_list_uint8_wraps", lambda m: m.tensor([m.tensor(-1)], dtype=m.uint8), None),
    ("tensor_list_bool_into_int", lambda m: m.tensor([m.tensor(True)], dtype=m.int8), None),
    ("tensor_list_float_inf", lambda m: m.tensor([m.tensor(1e300, dtype=m.float64)], dtype=m.float16), None),
    # Python ints in [2**63, 2**64): uint64 numbers
    ("uint64_ge_float", lambda m: m.tensor(-0.5).ge(U64), None),
    ("uint64_ge_float_2_63", lambda m: m.tensor(-0.5).ge(2 ** 63), None),
    ("uint64_ge_int64_wraps", lambda m: m.tensor(5).ge(2 ** 63), None),
    ("uint64_eq_int64_wraps", lambda m: m.tensor(5).eq(U64), None),
    ("uint64_add_int64", lambda m: m.tensor(5) + 2 ** 63, None),
    ("uint64_add_int16", lambda m: m.ones(2, dtype=m.int16) + 2 ** 63, None),
    ("uint64_add_uint8", lambda m: m.tensor(5, dtype=m.uint8) + 2 ** 63, None),
    ("uint64_add_float", lambda m: m.tensor(5.0) + 2 ** 63, None),
    ("uint64_mul_float", lambda m: m.tensor(3.0) * U64, None),
    ("uint64_mul_inplace_float", lambda m: m.ones(2).mul_(2 ** 63), None),
    ("uint64_div", lambda m: m.ones(2, dtype=m.int64).div(2 ** 63), None),
    ("uint64_remainder_float", lambda m: m.ones(2).remainder(2 ** 63), None),
    ("uint64_fmod_float", lambda m: m.ones(2).fmod(U64), None),
    ("uint64_xlogy", lambda m: m.ones(2).xlogy(2 ** 63), None),
    ("uint64_sub_float", lambda m: m.ones(2).sub(2 ** 63), None),
    ("uint64_true_divide_bf16", lambda m: _t(m, [[-745.2, 1.5]], "bfloat16").true_divide_(U64), None),
    ("uint64_bool_add", lambda m: m.ones(2, dtype=m.bool) + 2 ** 63, UINT64_PROMOTION),
    ("uint64_bool_eq", lambda m: m.ones(2, dtype=m.bool) == 2 ** 63, UINT64_PROMOTION),
    ("uint64_bool_ge", lambda m: m.ones(2, dtype=m.bool).ge(U64), UINT64_PROMOTION),
    ("uint64_bool_bitwise_and", lambda m: m.ones(2, dtype=m.bool).bitwise_and(2 ** 63), UINT64_PROMOTION),
    ("uint64_result_type_bool", lambda m: m.result_type(m.tensor(True), 2 ** 63), UINT64_PROMOTION),
    ("uint64_pow_int64", lambda m: m.ones(2, dtype=m.int64).pow(2 ** 63), OVERFLOW),
    ("uint64_pow_float", lambda m: m.ones(2).pow(2 ** 63), None),
    ("uint64_masked_fill_float", lambda m: m.ones(2).masked_fill(_mask(m), 2 ** 63), None),
    ("uint64_masked_fill_int64", lambda m: m.ones(2, dtype=m.int64).masked_fill(_mask(m), 2 ** 63), OVERFLOW),
    ("uint64_masked_fill_bool", lambda m: m.ones(2, dtype=m.bool).masked_fill(_mask(m), 2 ** 63), None),
    ("uint64_index_fill_float", lambda m: m.ones(2).index_fill(0, m.tensor([0]), U64), None),
    ("uint64_index_fill_int64", lambda m: m.ones(2, dtype=m.int64).index_fill(0, m.tensor([0]), U64), OVERFLOW),
    ("uint64_where_float", lambda m: m.where(_mask(m), m.ones(2), 2 ** 63), None),
    ("uint64_where_scalar_float", lambda m: m.where(_mask(m), 2 ** 63, 1.5), None),
    ("uint64_where_int64", lambda m: m.where(_mask(m), m.ones(2, dtype=m.int64), 2 ** 63), OVERFLOW),
    ("uint64_where_bool", lambda m: m.where(_mask(m), m.ones(2, dtype=m.bool), 2 ** 63), UINT64_PROMOTION),
    ("uint64_where_with_int", lambda m: m.where(_mask(m), 2 ** 63, 1), UINT64_PROMOTION),
    ("uint64_full_float", lambda m: m.full((2,), U64, dtype=m.float64), None),
    ("uint64_fill_int64", lambda m: m.ones(2, dtype=m.int64).fill_(2 ** 63), OVERFLOW),
    # sub/rsub negate an int64 alpha as torch does (-(-2**63) wraps)
    ("sub_alpha_int64_min", lambda m: m.subtract(m.ones(2), m.ones(2), alpha=-2 ** 63), None),
    ("sub_alpha_int64_min_double",
     lambda m: m.subtract(m.ones(2, dtype=m.float64), m.full((2,), 3.0, dtype=m.float64), alpha=-2 ** 63), None),
    ("rsub_alpha_int64_min", lambda m: m.rsub(m.ones(2), m.ones(2), alpha=-2 ** 63), None),
    ("sub_inplace_alpha_int64_min", lambda m: m.ones(2).sub_(m.ones(2), alpha=-2 ** 63), None),
    # the order of checks
    ("unflatten_sizes_before_dim", lambda m: m.ones(2, 3).unflatten(5, ()), "sizes must be non-empty"),
    ("full_negative_size_before_value", lambda m: m.full((-1,), 2 ** 63), "negative dimension"),
    ("amin_dim_none_empty", lambda m: m.zeros(0, 2).amin(dim=None), "Expected reduction dim to be specified"),
    ("baddbmm_sizes_before_ranks_0d", lambda m: m.tensor(1.0).baddbmm(m.tensor(1.0), m.tensor(0.0)), "no dimensions"),
    ("baddbmm_sizes_before_ranks_1d",
     lambda m: m.ones(3).baddbmm(batch1=m.ones(3), batch2=m.tensor(2.0)), "Dimension out of range"),
    ("baddbmm_sizes_before_ranks_batch2",
     lambda m: m.ones(2, 3).baddbmm(m.ones(2, 3, 2), m.ones(4), beta=False, alpha=False), "Dimension out of range"),
    ("baddbmm_inplace_batch2_0d", lambda m: m.ones(2, 2).baddbmm_(batch1=m.ones(1, 2, 2), batch2=m.tensor(1.0)),
     "no dimensions"),
    ("index_copy_slices_before_count", lambda m: m.zeros(5, 0, dtype=m.int32).index_copy_(
        -1, m.tensor([4, 1, 2, 2]), m.zeros(1, 0, dtype=m.int32)), "same slice shapes"),
    ("index_copy_scalar_source_before_index_dtype", lambda m: m.tensor(1.0).index_copy(
        0, m.zeros(0, dtype=m.int32), m.tensor(2.0)), "When source is scalar"),
    ("index_copy_scalar_source_before_dtypes", lambda m: m.zeros(3, dtype=m.int8).index_copy(
        0, m.tensor([0, 1, 2]), m.tensor(1.0, dtype=m.float64)), "When source is scalar"),
    ("index_copy_ok", lambda m: m.zeros(3, 2).index_copy(0, m.tensor([2, 0]), m.ones(2, 2)), None),
    ("round_int_decimals", lambda m: m.tensor([1, 2]).round(decimals=-2), "round_cpu"),
    ("round_bool", lambda m: m.tensor([True]).round(), "round_vml_cpu"),
    ("round_int", lambda m: m.tensor([1, 2]).round(), None),
    # torch's float GEMM applies a non-finite alpha to the products
    ("addmm_inf_alpha_float", lambda m: m.ones(2, 2).addmm(_t(m, [[1.0, -2.0], [0.0, 3.0]]), m.ones(2, 2),
                                                          alpha=math.inf), None),
    ("addmm_inf_alpha_double", lambda m: _t(m, [[1.0, 2.0]], "float64").addmm_(
        _t(m, [[0.5, -1.0, 0.0]], "float64"), _t(m, [[1.0, 2.0], [1.0, -1.0], [2.0, 2.0]], "float64"), alpha=-math.inf),
     None),
    ("addmm_inf_alpha_bf16", lambda m: m.ones(2, 2, dtype=m.bfloat16).addmm_(
        -m.ones(2, 2, dtype=m.bfloat16), m.ones(2, 2, dtype=m.bfloat16), alpha=math.inf), None),
    # var/std with one output: torch's mean in the dtype, then squared deviations in double
    ("var_all_mean_overflows", lambda m: _t(m, [3e38, 3e38, 3e38]).var(), None),
    ("std_all_mean_overflows", lambda m: _t(m, [3e38, 3e38, -3e38]).std(), None),
    ("var_all_double_overflow", lambda m: _t(m, [1e308, 1e308], "float64").var(), None),
    ("var_one_output_dim", lambda m: _t(m, [[3e38], [3e38], [3e38]]).var(0), None),
    ("var_half_welford", lambda m: _t(m, [60000, 60000], "float16").var(), None),
    ("var_all_plain", lambda m: _t(m, [1.5, -2.0, 7.25, 0.0]).var(correction=0), None),
    ("std_all_plain_double", lambda m: _t(m, [1.5, -2.0, 7.25, 0.0], "float64").std(), None),
    ("var_rows_welford", lambda m: _t(m, [[3e38, 3e38], [1.0, 2.0]]).var(1), None),
    ("var_mean_inf_welford", lambda m: m.var_mean(_t(m, [math.inf, 1e-07, -0.132, -2.5, 2.999]), True), None),
    ("var_mean_inf_last", lambda m: m.var_mean(_t(m, [1.0, 2.0, math.inf]), dim=0), None),
    ("std_rows_inf", lambda m: _t(m, [[1.0, math.inf], [2.0, 3.0]]).std(1), None),
]

# spellings torch's overloads refuse (TypeError), next to the ones they take
PARSER_CASES = [
    # a float argument takes a 0-d tensor that does not require grad (torchvision's uniform_(log_ratio[0], ...))
    ("float_from_0d_tensor", lambda m: m.zeros(3).uniform_(m.tensor(0.5), m.tensor(0.5)), None),
    ("float_from_0d_double", lambda m: m.nn.functional.dropout(m.ones(2), p=m.tensor(0.0, dtype=m.float64)), None),
    ("float_from_1d_tensor", lambda m: m.zeros(3).uniform_(m.tensor([0.5]), 1.0), TypeError),
    ("float_from_grad_tensor", lambda m: m.zeros(3).uniform_(m.tensor(0.5, requires_grad=True), 1.0), TypeError),
    ("eye_none", lambda m: m.eye(3, None), TypeError),
    ("eye_m_none", lambda m: m.eye(3, m=None), TypeError),
    ("eye_n_m", lambda m: m.eye(3, 2), None),
    ("eye_n", lambda m: m.eye(3), None),
    ("eye_out", lambda m: m.eye(2, out=m.zeros(2, 2)), None),
    ("std_dim_none", lambda m: m.std(m.ones(3, 2), 0, None), TypeError),
    ("var_unbiased_none", lambda m: m.ones(3, 2).var(unbiased=None), TypeError),
    ("var_unbiased_keepdim_no_dim", lambda m: m.ones(3, 2).var(unbiased=False, keepdim=True), TypeError),
    ("var_unbiased_and_correction", lambda m: m.ones(3, 2).var(0, True, correction=0), TypeError),
    ("var_list_correction_none", lambda m: m.var_mean(m.ones(3, 2), [0], False, False, correction=None), TypeError),
    ("var_dim_unbiased_keepdim", lambda m: m.ones(3, 2).var(0, True, True), None),
    ("var_none_dim_unbiased", lambda m: m.ones(3, 2).var(None, False), None),
    ("var_unbiased_only", lambda m: m.ones(3, 2).var(False), None),
    ("var_correction_keepdim", lambda m: m.ones(3, 2).var(0, correction=0, keepdim=True), None),
    ("var_keepdim_only", lambda m: m.ones(3, 2).var(keepdim=True), None),
    ("std_mean_positional", lambda m: m.std_mean(m.ones(3, 2), 0, True, True), None),
    ("var_out_correction", lambda m: m.var(m.ones(3, 2), 0, correction=1, out=m.zeros(2)), None),
    ("prod_none", lambda m: m.ones(3, 2).prod(None), TypeError),
    ("prod_keepdim_no_dim", lambda m: m.ones(3, 2).prod(keepdim=True), TypeError),
    ("prod_out_no_dim", lambda m: m.prod(m.ones(3, 2), out=m.zeros(1)), TypeError),
    ("prod_dtype", lambda m: m.ones(3, 2).prod(dtype=m.float64), None),
    ("prod_dim_keepdim", lambda m: m.ones(3, 2).prod(0, True), None),
    ("sum_keepdim_no_dim", lambda m: m.ones(3, 2).sum(keepdim=True), TypeError),
    ("sum_out_no_dim", lambda m: m.sum(m.ones(3, 2), out=m.zeros(1)), TypeError),
    ("sum_dim_none_keepdim", lambda m: m.ones(3, 2).sum(None, True), None),
    ("sum_plain", lambda m: m.ones(3, 2).sum(), None),
    ("mean_keepdim_no_dim", lambda m: m.ones(3, 2).mean(keepdim=True), TypeError),
    ("mean_out_no_dim", lambda m: m.mean(m.ones(3, 2), out=m.zeros(())), None),
    ("movedim_int_tuple", lambda m: m.ones(2, 3).movedim(0, (1,)), TypeError),
    ("movedim_tuple_int", lambda m: m.ones(2, 3).movedim((0,), 1), TypeError),
    ("moveaxis_kw_int_list", lambda m: m.ones(2, 3).moveaxis(source=1, destination=[0]), TypeError),
    ("movedim_ints", lambda m: m.ones(2, 3, 4).movedim(0, 2), None),
    ("movedim_lists", lambda m: m.ones(2, 3, 4).movedim([0, 1], [2, 0]), None),
    ("where_out_scalar_other", lambda m: m.where(_mask(m), m.ones(2), 1.0, out=m.zeros(2)), TypeError),
    ("where_out_scalar_input", lambda m: m.where(_mask(m), 1.0, m.ones(2), out=m.zeros(2)), TypeError),
    ("where_out_bool_other", lambda m: m.where(_mask(m), m.ones(2), False, out=m.zeros(2)), TypeError),
    ("where_out_tensors", lambda m: m.where(_mask(m), m.ones(2), m.zeros(2), out=m.zeros(2)), None),
    ("where_scalars", lambda m: m.where(_mask(m), 1.0, 2.0), None),
    ("squeeze_none", lambda m: m.ones(2, 1).squeeze(None), TypeError),
    ("squeeze_inplace_none", lambda m: m.ones(2, 1).squeeze_(None), TypeError),
    ("squeeze_varargs", lambda m: m.ones(1, 2, 1).squeeze(0, 2), None),
    ("squeeze_tuple", lambda m: m.ones(1, 2, 1).squeeze((0, 2)), None),
    ("to_other_keyword", lambda m: m.ones(2).to(other=m.ones(1, dtype=m.int32)), TypeError),
    ("to_tensor_keyword", lambda m: m.ones(2).to(tensor=m.ones(1, dtype=m.int32)), None),
    ("relu_out", lambda m: m.relu(m.ones(2), out=m.zeros(2)), TypeError),
    ("contiguous_memory_format_none", lambda m: m.ones(2).contiguous(memory_format=None), TypeError),
    ("clone_memory_format_none", lambda m: m.ones(2).clone(memory_format=None), None),
    ("unique_consecutive_counts_none",
     lambda m: m.unique_consecutive(m.tensor([1, 1, 2]), False, return_counts=None), TypeError),
    ("remainder_scalar_first_out", lambda m: m.remainder(2, m.ones(2), out=m.zeros(2)), TypeError),
    ("bitwise_and_scalar_first_out",
     lambda m: m.bitwise_and(2, m.ones(2, dtype=m.int32), out=m.zeros(2, dtype=m.int32)), TypeError),
    ("remainder_scalar_first", lambda m: m.remainder(2, m.full((2,), 3.0)), None),
    ("remainder_scalar_second_out", lambda m: m.remainder(m.full((2,), 3.0), 2, out=m.zeros(2)), None),
    ("bitwise_xor_scalar_first", lambda m: m.bitwise_xor(6, m.tensor([3, 5])), None),
    ("std_dims_as_varargs", lambda m: m.ones(3, 2, 2).std(0, 1), TypeError),
    ("sum_dims_as_varargs", lambda m: m.ones(3, 2, 2).sum(0, 1), TypeError),
    ("count_nonzero_varargs", lambda m: m.ones(3, 2, 2).count_nonzero(0, 1), None),
    ("count_nonzero_one_dim", lambda m: m.ones(3, 2).count_nonzero(1), None),
    ("count_nonzero_none", lambda m: m.ones(3, 2).count_nonzero(None), None),
    ("to_uint64_number", lambda m: m.ones(2).to(2 ** 63), ValueError),
    ("to_int_number_copy", lambda m: m.tensor([0.04]).to(-1, False, True), None),
    ("baddbmm_beta_positional", lambda m: m.baddbmm(m.ones(1, 2, 2), m.ones(1, 2, 2), m.ones(1, 2, 2), 2), TypeError),
    ("addmm_method_beta_positional", lambda m: m.ones(2, 2).addmm(m.ones(2, 2), m.ones(2, 2), 2), TypeError),
]


def _run(fn, m):
    try:
        return fn(m), None
    except Exception as e:  # noqa: BLE001
        return None, e


def _both(fn):
    """(torch result, torch error, pyctorch result, pyctorch error) of one case."""
    return _run(fn, torch) + _run(fn, pyctorch)


def _returned_alike(tr, pr, pe):
    assert pe is None, f"raised {type(pe).__name__}({pe}); torch returned {tr!r}"
    assert_same(pr, tr)


@requires_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_scalar_like_torch(case):
    _, fn, fragment = case
    tr, te, pr, pe = _both(fn)
    if te is None:
        assert fragment is None, f"torch returned {tr!r} where the case expects {fragment!r}"
        _returned_alike(tr, pr, pe)
        return
    assert pe is not None, f"returned {pr!r}; torch raised {type(te).__name__}({te})"
    builtin = next(k for k in type(te).__mro__ if k.__module__ == "builtins")
    assert isinstance(pe, builtin), f"raised {type(pe).__name__}({pe}); torch raised {type(te).__name__}({te})"
    if fragment:
        assert fragment in str(te) and fragment in str(pe), f"torch: {te}\npyctorch: {pe}"


@requires_torch
@pytest.mark.parametrize("case", PARSER_CASES, ids=[c[0] for c in PARSER_CASES])
def test_parser_like_torch(case):
    _, fn, exc = case
    tr, te, pr, pe = _both(fn)
    assert (te is None) == (exc is None), f"the case is stale: torch gave {tr!r} / {te!r}"
    if exc is None:
        _returned_alike(tr, pr, pe)
    else:
        assert isinstance(te, exc) and isinstance(pe, exc), f"torch: {te!r}\npyctorch: {pe!r} (returned {pr!r})"


# ---- hand-checked, run without torch ----
def test_float_argument_reads_a_0d_tensor():
    x = pyctorch.zeros(4).uniform_(pyctorch.tensor(2.0), pyctorch.tensor(2.0, dtype=pyctorch.float64))
    assert x.tolist() == [2.0] * 4
    with pytest.raises(TypeError):
        pyctorch.zeros(2).uniform_(pyctorch.tensor([1.0, 2.0]), 3.0)


def test_uint64_scalar_values():
    t = pyctorch.tensor(-0.5)
    assert t.ge(2 ** 64 - 1).item() is False
    assert (pyctorch.tensor(3.0) * (2 ** 64 - 1)).item() == 3.0 * 18446744073709551615
    assert pyctorch.ones(2).masked_fill(pyctorch.tensor([True, False]), 2 ** 63).tolist() == [2.0 ** 63, 1.0]
    # an int64 tensor takes the bits (wrapping), as torch's uint64 -> int64 conversion does
    assert (pyctorch.tensor(5) + 2 ** 63).item() == 5 - 2 ** 63
    assert pyctorch.tensor(5).ge(2 ** 63).item() is True
    assert pyctorch.lerp(pyctorch.ones(1), pyctorch.zeros(1), 2 ** 63).item() == 1.0 - 2.0 ** 63


def test_uint64_refusals():
    with pytest.raises(RuntimeError, match="attempted to promote Bool and UInt64"):
        pyctorch.ones(2, dtype=pyctorch.bool) + 2 ** 63
    with pytest.raises(RuntimeError, match="attempted to promote UInt64 and Long"):
        pyctorch.where(pyctorch.tensor([True]), 2 ** 63, 1)
    with pytest.raises(RuntimeError, match="int64_t without overflow"):
        pyctorch.ones(2, dtype=pyctorch.int64).masked_fill(pyctorch.tensor([True, False]), 2 ** 63)
    with pytest.raises(RuntimeError, match="int64_t without overflow"):
        pyctorch.ones(2, dtype=pyctorch.int64).pow(2 ** 63)


def test_float_scalars_range_checked():
    with pytest.raises(RuntimeError, match="type float without overflow"):
        pyctorch.lerp(pyctorch.ones(2), pyctorch.zeros(2), 1e300)
    with pytest.raises(RuntimeError, match="type float without overflow"):
        pyctorch.ones(2).logit(1e300)
    with pytest.raises(RuntimeError, match="type float without overflow"):
        pyctorch.nn.functional.threshold(pyctorch.ones(2), 1e300, 2.0)
    with pytest.raises(RuntimeError, match="type int8 without overflow"):
        pyctorch.tensor([pyctorch.tensor(300)], dtype=pyctorch.int8)
    x = pyctorch.lerp(pyctorch.ones(2, dtype=pyctorch.float64), pyctorch.zeros(2, dtype=pyctorch.float64), 1e300)
    assert x.tolist() == [1.0 - 1e300] * 2


def test_overloads_refuse_and_accept():
    with pytest.raises(TypeError, match="invalid combination"):
        pyctorch.eye(3, None)
    assert pyctorch.eye(3, 2).shape == (3, 2)
    with pytest.raises(TypeError):
        pyctorch.ones(2, 3).movedim(0, (1,))
    assert pyctorch.ones(2, 3, 4).movedim((0, 1), (2, 0)).shape == (3, 4, 2)
    with pytest.raises(TypeError):
        pyctorch.ones(3, 2).prod(keepdim=True)
    assert pyctorch.ones(3, 2).prod(1, keepdim=True).shape == (3, 1)
    with pytest.raises(TypeError):
        pyctorch.where(pyctorch.tensor([True]), pyctorch.ones(1), 1.0, out=pyctorch.zeros(1))
    # the op's own schema still serves everything an overload takes: var's unbiased and correction spellings
    x = pyctorch.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]])
    assert x.var(1, False).tolist() == pytest.approx([14 / 9, 2.0])
    assert x.var(1, correction=0).tolist() == pytest.approx([14 / 9, 2.0])
    assert x.var(False).item() == pytest.approx(x.var(correction=0).item())
    with pytest.raises(TypeError):
        x.var(1, None)


def test_sub_alpha_int64_min_and_var_two_pass():
    r = pyctorch.subtract(pyctorch.ones(2, dtype=pyctorch.float64), pyctorch.ones(2, dtype=pyctorch.float64),
                          alpha=-2 ** 63)
    assert r.tolist() == [1.0 - 2.0 ** 63] * 2
    # a sum in float32 overflows, so the mean is inf and so is the variance (torch's full-reduction formula)
    assert math.isinf(pyctorch.tensor([3e38, 3e38, 3e38]).var().item())
    assert pyctorch.tensor([1.0, 2.0, 3.0, 4.0]).var().item() == pytest.approx(5 / 3)
    assert pyctorch.tensor([1.0, 2.0, 3.0, 4.0]).std(correction=0).item() == pytest.approx(math.sqrt(1.25))
