"""uint16 / uint32 / uint64: torch's "limited support" unsigned dtypes (issue 15).

The dtype objects, creation, conversions to and from every dtype, printing, NumPy and DLPack interop,
save/load in both directions, type promotion (the full table, Python scalars included) and every op
of the table called with these dtypes: pyctorch must give torch 2.13's values where torch computes
and torch's exception (type and message) where it refuses. The comparisons against torch skip
without torch; the checks against NumPy and hand-computed values always run.
"""
import io
import math

import numpy as np
import pytest

import pyctorch
from conftest import HAVE_TORCH, assert_same_outcome, requires_torch, torch

UNSIGNED = ["uint16", "uint32", "uint64"]
ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"] + UNSIGNED
BITS = {"uint16": 16, "uint32": 32, "uint64": 64}
VALS = [[3, 1, 2, 5], [0, 7, 2, 2], [9, 4, 6, 1]]


def _i(L, v):
    return L.tensor(v, dtype=L.int64)


def _m(L):
    return L.tensor([[True, False, True, False]] * 3)


def _setitem(t, k, v):
    t[k] = v
    return t


# One call per op of the table (and the indexing paths) with a (3, 4) tensor x of an unsigned dtype;
# the same call runs in torch and in pyctorch (L is the library).
CALLS = {
    # pointwise with scalars and mixed dtypes
    "add": lambda L, x: L.add(x, x), "add_float": lambda L, x: L.add(x, 2.5), "sub": lambda L, x: L.sub(x, x),
    "mul": lambda L, x: L.mul(x, x), "mul_scalar": lambda L, x: x * 3, "mul_neg_scalar": lambda L, x: x * -1,
    "mul_float": lambda L, x: x * 2.5, "mul_inplace": lambda L, x: x.clone().mul_(x),
    "div": lambda L, x: L.div(x, x), "div_scalar": lambda L, x: x / 2,
    "div_mode": lambda L, x: L.div(x, x, rounding_mode="floor"), "div_trunc": lambda L, x: L.div(x, x, rounding_mode="trunc"),
    "float_power": lambda L, x: L.float_power(x, 2), "pow": lambda L, x: L.pow(x, 2), "pow_float": lambda L, x: L.pow(x, 0.5),
    "remainder": lambda L, x: L.remainder(x, 2), "fmod": lambda L, x: L.fmod(x, 2), "floor_divide": lambda L, x: L.floor_divide(x, 2),
    "eq": lambda L, x: L.eq(x, x.t().contiguous().t()), "eq_scalar": lambda L, x: x == 2, "ne": lambda L, x: x != 2,
    "eq_neg": lambda L, x: x == -1, "lt": lambda L, x: x < 2, "le": lambda L, x: x <= 2, "gt": lambda L, x: x > 2, "ge": lambda L, x: x >= 2,
    "lt_float": lambda L, x: x < 2.5,
    "bitwise_and": lambda L, x: x & x, "bitwise_and_scalar": lambda L, x: x & 6, "bitwise_or": lambda L, x: x | 8,
    "bitwise_xor": lambda L, x: x ^ x.t().contiguous().t(), "bitwise_xor_inplace": lambda L, x: x.clone().__ixor__(5),
    "bitwise_not": lambda L, x: ~x, "bitwise_left_shift": lambda L, x: x << 1, "bitwise_right_shift": lambda L, x: x >> 1,
    "logical_and": lambda L, x: L.logical_and(x, x), "logical_not": lambda L, x: L.logical_not(x),
    "logical_or": lambda L, x: L.logical_or(x, x), "logical_xor": lambda L, x: L.logical_xor(x, x),
    "neg": lambda L, x: -x, "abs": lambda L, x: L.abs(x), "sign": lambda L, x: L.sign(x), "relu": lambda L, x: L.relu(x),
    "floor": lambda L, x: L.floor(x), "ceil": lambda L, x: L.ceil(x), "trunc": lambda L, x: L.trunc(x),
    "round": lambda L, x: L.round(x), "round_decimals": lambda L, x: L.round(x, decimals=1), "frac": lambda L, x: L.frac(x),
    "isnan": lambda L, x: L.isnan(x), "isinf": lambda L, x: L.isinf(x), "isfinite": lambda L, x: L.isfinite(x),
    "signbit": lambda L, x: L.signbit(x), "sqrt": lambda L, x: L.sqrt(x), "exp": lambda L, x: L.exp(x),
    "sigmoid": lambda L, x: L.sigmoid(x), "sin": lambda L, x: L.sin(x), "log1p": lambda L, x: L.log1p(x),
    "erfinv": lambda L, x: L.erfinv(x), "lgamma": lambda L, x: L.lgamma(x), "i0": lambda L, x: L.i0(x),
    "copysign": lambda L, x: L.copysign(x, x), "xlogy": lambda L, x: L.xlogy(x, x), "atan2": lambda L, x: L.atan2(x, x),
    "hypot": lambda L, x: L.hypot(x, x), "logaddexp": lambda L, x: L.logaddexp(x, x),
    "minimum": lambda L, x: L.minimum(x, x), "maximum": lambda L, x: L.maximum(x, x), "fmin": lambda L, x: L.fmin(x, x),
    "fmax": lambda L, x: L.fmax(x, x), "gcd": lambda L, x: L.gcd(x, x), "lcm": lambda L, x: L.lcm(x, x),
    "clamp": lambda L, x: L.clamp(x, 1, 4), "clamp_min": lambda L, x: L.clamp(x, min=1), "clip": lambda L, x: L.clip(x, 1, 4),
    "where": lambda L, x: L.where(_m(L), x, x), "where_scalar": lambda L, x: L.where(_m(L), x, 0),
    "lerp": lambda L, x: L.lerp(x, x, 0.5), "addcmul": lambda L, x: L.addcmul(x, x, x),
    "addcdiv": lambda L, x: L.addcdiv(x, x, x), "nan_to_num": lambda L, x: L.nan_to_num(x), "logit": lambda L, x: L.logit(x),
    "square": lambda L, x: L.square(x),
    # copies, conversions, fills
    "to_float": lambda L, x: x.to(L.float32), "to_int64": lambda L, x: x.to(L.int64), "to_self": lambda L, x: x.to(x.dtype),
    "to_other": lambda L, x: x.to(L.zeros(1)), "type_as": lambda L, x: x.type_as(L.zeros(1, dtype=L.int8)),
    "copy_": lambda L, x: L.zeros(3, 4).copy_(x), "copy_into": lambda L, x: x.clone().copy_(L.full((3, 4), -2.0)),
    "copy_scalar": lambda L, x: x.clone().copy_(L.tensor(7)), "clone": lambda L, x: x.clone(),
    "contiguous": lambda L, x: x.t().contiguous(), "fill_": lambda L, x: x.clone().fill_(7),
    "fill_neg": lambda L, x: x.clone().fill_(-1), "fill_tensor_": lambda L, x: x.clone().fill_(L.tensor(3)),
    "zero_": lambda L, x: x.clone().zero_(),
    # factories
    "empty_like": lambda L, x: L.empty_like(x).shape, "zeros_like": lambda L, x: L.zeros_like(x), "ones_like": lambda L, x: L.ones_like(x),
    "full_like": lambda L, x: L.full_like(x, 9), "new_empty": lambda L, x: x.new_empty(2).dtype,
    "new_zeros": lambda L, x: x.new_zeros(2), "new_ones": lambda L, x: x.new_ones(2), "new_full": lambda L, x: x.new_full((2,), 5),
    "zeros": lambda L, x: L.zeros(2, 3, dtype=x.dtype), "ones": lambda L, x: L.ones(2, dtype=x.dtype),
    "empty": lambda L, x: L.empty(2, dtype=x.dtype).shape, "full": lambda L, x: L.full((2,), 7, dtype=x.dtype),
    "full_max": lambda L, x: L.full((2,), L.iinfo(x.dtype).max, dtype=x.dtype),
    "full_neg": lambda L, x: L.full((2,), -3, dtype=x.dtype),
    "zeros_out": lambda L, x: L.zeros(2, out=L.empty(0, dtype=x.dtype)),
    "arange": lambda L, x: L.arange(5, dtype=x.dtype), "arange_start": lambda L, x: L.arange(1, 9, 2, dtype=x.dtype),
    "linspace": lambda L, x: L.linspace(0, 8, 5, dtype=x.dtype), "logspace": lambda L, x: L.logspace(0, 2, 3, dtype=x.dtype),
    "eye": lambda L, x: L.eye(3, dtype=x.dtype),
    "rand": lambda L, x: L.rand(2, dtype=x.dtype), "randn": lambda L, x: L.randn(2, dtype=x.dtype),
    "randint": lambda L, x: L.randint(0, 10, (3,), dtype=x.dtype).shape, "randperm": lambda L, x: L.randperm(4, dtype=x.dtype).shape,
    "rand_like": lambda L, x: L.rand_like(x), "randint_like": lambda L, x: L.randint_like(x, 10).shape,
    "normal_": lambda L, x: x.clone().normal_(), "uniform_": lambda L, x: x.clone().uniform_(),
    "random_": lambda L, x: x.clone().random_(0, 10).shape, "bernoulli": lambda L, x: L.bernoulli(x),
    "exponential_": lambda L, x: x.clone().exponential_(), "multinomial": lambda L, x: L.multinomial(x, 2),
    # views
    "view": lambda L, x: x.view(4, 3), "view_dtype": lambda L, x: x.contiguous().view(L.uint8), "view_from_int": lambda L, x: L.full((4,), -2, dtype=L.int64).view(x.dtype),
    "reshape": lambda L, x: x.reshape(-1), "flatten": lambda L, x: x.t().flatten(), "unflatten": lambda L, x: x.unflatten(1, (2, 2)),
    "squeeze": lambda L, x: x[None].squeeze(0), "unsqueeze": lambda L, x: x.unsqueeze(1), "permute": lambda L, x: x.permute(1, 0),
    "transpose": lambda L, x: x.transpose(0, 1), "t": lambda L, x: x.t(), "movedim": lambda L, x: x.movedim(0, 1),
    "expand": lambda L, x: x[:1].expand(2, 4), "broadcast_to": lambda L, x: L.broadcast_to(x[0], (2, 4)),
    "narrow": lambda L, x: x.narrow(1, 1, 2), "select": lambda L, x: x.select(1, 2), "unbind": lambda L, x: x.unbind(0),
    "split": lambda L, x: x.split(2, 1), "chunk": lambda L, x: x.chunk(2, 1), "tensor_split": lambda L, x: x.tensor_split(3, 1),
    "diagonal": lambda L, x: x.diagonal(), "as_strided": lambda L, x: x.as_strided((2, 2), (1, 2)),
    "unfold": lambda L, x: x.unfold(1, 2, 1), "detach": lambda L, x: x.detach(),
    # reductions
    "sum": lambda L, x: x.sum(), "sum_dim": lambda L, x: x.sum(1), "sum_dtype": lambda L, x: x.sum(dtype=L.float64),
    "sum_to_uint": lambda L, x: x.to(L.int64).sum(dtype=x.dtype), "nansum": lambda L, x: L.nansum(x),
    "mean": lambda L, x: x.mean(), "mean_dtype": lambda L, x: x.mean(dtype=L.float32), "nanmean": lambda L, x: x.nanmean(),
    "prod": lambda L, x: x.prod(), "prod_dim": lambda L, x: x.prod(0), "amax": lambda L, x: x.amax(), "amin": lambda L, x: x.amin(1),
    "max": lambda L, x: x.max(), "max_dim": lambda L, x: x.max(1), "max_other": lambda L, x: L.max(x, x),
    "min": lambda L, x: x.min(), "min_dim": lambda L, x: x.min(0), "argmax": lambda L, x: x.argmax(), "argmin": lambda L, x: x.argmin(1),
    "aminmax": lambda L, x: L.aminmax(x), "all": lambda L, x: x.all(), "all_dim": lambda L, x: x.all(1), "any": lambda L, x: x.any(),
    "any_dim": lambda L, x: x.any(0), "count_nonzero": lambda L, x: L.count_nonzero(x), "var": lambda L, x: x.var(),
    "std": lambda L, x: x.std(), "var_mean": lambda L, x: L.var_mean(x), "logsumexp": lambda L, x: L.logsumexp(x, 1),
    "norm": lambda L, x: x.norm(), "softmax": lambda L, x: L.softmax(x, 1), "log_softmax": lambda L, x: L.log_softmax(x, 1),
    "softmax_dtype": lambda L, x: L.softmax(x, 1, dtype=L.float32),
    "vector_norm": lambda L, x: L.linalg.vector_norm(x),
    # linear algebra
    "matmul": lambda L, x: L.matmul(x, x.t()), "mm": lambda L, x: L.mm(x, x.t()), "bmm": lambda L, x: L.bmm(x[None], x.t()[None]),
    "mv": lambda L, x: L.mv(x, x[0]), "dot": lambda L, x: L.dot(x[0], x[1]), "outer": lambda L, x: L.outer(x[0], x[1]),
    "addmm": lambda L, x: L.addmm(x[:, :3], x, x.t()), "trace": lambda L, x: L.trace(x), "kron": lambda L, x: L.kron(x, x),
    "tensordot": lambda L, x: L.tensordot(x, x, dims=([1], [1])), "einsum": lambda L, x: L.einsum("ij,ij->i", x, x),
    # indexing
    "index_select": lambda L, x: L.index_select(x, 1, _i(L, [0, 2])), "gather": lambda L, x: L.gather(x, 1, _i(L, [[0], [1], [3]])),
    "scatter": lambda L, x: x.clone().scatter_(1, _i(L, [[0], [1], [3]]), x), "scatter_value": lambda L, x: x.clone().scatter_(1, _i(L, [[0], [1], [3]]), 5),
    "scatter_add": lambda L, x: x.clone().scatter_add_(1, _i(L, [[0], [1], [3]]), x),
    "scatter_reduce": lambda L, x: x.clone().scatter_reduce_(1, _i(L, [[0], [1], [3]]), x, "amax"),
    "index_add": lambda L, x: x.clone().index_add_(1, _i(L, [0, 2]), x[:, :2]),
    "index_copy": lambda L, x: x.clone().index_copy_(1, _i(L, [0, 2]), x[:, :2]),
    "index_fill": lambda L, x: x.clone().index_fill_(1, _i(L, [0, 2]), 5),
    "masked_fill": lambda L, x: x.masked_fill(_m(L), 5), "masked_fill_tensor": lambda L, x: x.masked_fill(_m(L), L.tensor(4)),
    "masked_select": lambda L, x: L.masked_select(x, _m(L)), "masked_scatter": lambda L, x: x.masked_scatter(_m(L), x),
    "take": lambda L, x: L.take(x, _i(L, [0, 5])), "put": lambda L, x: x.clone().put_(_i(L, [0, 5]), x[0, :2]),
    "index_put": lambda L, x: x.clone().index_put_((_i(L, [0, 2]),), x[:2]),
    "getitem_int": lambda L, x: x[1], "getitem_item": lambda L, x: x[1, 1].item(), "getitem_slice": lambda L, x: x[:, 1:3],
    "getitem_index": lambda L, x: x[_i(L, [2, 0])], "getitem_mask": lambda L, x: x[_m(L)],
    "setitem_int": lambda L, x: _setitem(x.clone(), 1, 7), "setitem_index": lambda L, x: _setitem(x.clone(), _i(L, [0]), 7),
    "setitem_mask": lambda L, x: _setitem(x.clone(), _m(L), 7),
    "nonzero": lambda L, x: L.nonzero(x), "argwhere": lambda L, x: L.argwhere(x), "where_cond": lambda L, x: L.where(x),
    # joining and reshaping copies
    "cat": lambda L, x: L.cat([x, x]), "cat_mixed": lambda L, x: L.cat([x, x.to(L.int64)]), "stack": lambda L, x: L.stack([x, x]),
    "hstack": lambda L, x: L.hstack([x, x]), "flip": lambda L, x: x.flip(0), "fliplr": lambda L, x: L.fliplr(x),
    "roll": lambda L, x: x.roll(1, 1), "repeat": lambda L, x: x.repeat(2, 1), "repeat_interleave": lambda L, x: x.repeat_interleave(2),
    "tile": lambda L, x: x.tile(2), "tril": lambda L, x: x.tril(), "triu": lambda L, x: x.triu(), "diag": lambda L, x: L.diag(x[0]),
    "diag_embed": lambda L, x: L.diag_embed(x), "constant_pad_nd": lambda L, x: L.constant_pad_nd(x, [1, 1]),
    # sorting and scans
    "sort": lambda L, x: x.sort(), "sort_desc": lambda L, x: x.sort(0, descending=True), "sort_stable": lambda L, x: x.sort(stable=True),
    "argsort": lambda L, x: x.argsort(), "msort": lambda L, x: L.msort(x), "topk": lambda L, x: x.topk(2),
    "kthvalue": lambda L, x: x.kthvalue(2), "median": lambda L, x: x.median(), "median_dim": lambda L, x: x.median(1),
    "nanmedian": lambda L, x: x.nanmedian(), "mode": lambda L, x: x.mode(), "cumsum": lambda L, x: x.cumsum(1),
    "cumsum_dtype": lambda L, x: x.cumsum(1, dtype=L.float32), "cumprod": lambda L, x: x.cumprod(0),
    "logcumsumexp": lambda L, x: x.logcumsumexp(1), "cummax": lambda L, x: x.cummax(1), "cummin": lambda L, x: x.cummin(1),
    "unique": lambda L, x: L.unique(x), "unique_inverse": lambda L, x: L.unique(x, return_inverse=True, return_counts=True),
    "unique_dim": lambda L, x: L.unique(x, dim=0), "unique_consecutive": lambda L, x: L.unique_consecutive(x),
    "bincount": lambda L, x: L.bincount(x[0]), "histc": lambda L, x: L.histc(x), "searchsorted": lambda L, x: L.searchsorted(x[0].sort().values, x[1]),
    "bucketize": lambda L, x: L.bucketize(x, x[0].sort().values),
    # nn
    "gelu": lambda L, x: L.nn.functional.gelu(x), "silu": lambda L, x: L.nn.functional.silu(x),
    "softplus": lambda L, x: L.nn.functional.softplus(x), "elu": lambda L, x: L.nn.functional.elu(x),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x), "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (4,)), "embedding": lambda L, x: L.nn.functional.embedding(_i(L, [0, 2]), x),
    "embedding_idx": lambda L, x: L.nn.functional.embedding(x, L.ones(10, 2)),
    "max_pool1d": lambda L, x: L.nn.functional.max_pool1d(x[None], 2), "avg_pool1d": lambda L, x: L.nn.functional.avg_pool1d(x[None], 2),
    "pad": lambda L, x: L.nn.functional.pad(x, (1, 1)), "interpolate": lambda L, x: L.nn.functional.interpolate(x[None], size=8),
    "conv1d": lambda L, x: L.nn.functional.conv1d(x[None], x[:, :, None][:, :1].expand(3, 3, 1).contiguous()),
    "cross_entropy_target": lambda L, x: L.nn.functional.cross_entropy(L.ones(3, 10), x[:, 0]),
}
def _f(L):
    return L.nn.functional


CALLS.update({
    # the rest of the table, through torch's public names
    "addmv": lambda L, x: L.addmv(x[:, 0], x, x[0]), "baddbmm": lambda L, x: L.baddbmm(x[None, :, :3], x[None], x.t()[None]),
    "inner": lambda L, x: L.inner(x, x), "vdot": lambda L, x: L.vdot(x[0], x[1]), "ger": lambda L, x: L.ger(x[0], x[1]),
    "concat": lambda L, x: L.concat([x, x], 1), "concatenate": lambda L, x: L.concatenate([x, x]),
    "vstack": lambda L, x: L.vstack([x, x[0]]), "dstack": lambda L, x: L.dstack([x, x]), "flipud": lambda L, x: L.flipud(x),
    "flipud_t": lambda L, x: L.flipud(x.t()), "flip_t": lambda L, x: x.t().flip(1), "flip_3d": lambda L, x: x.reshape(2, 2, 3).flip(1),
    "expand_as": lambda L, x: x[:1].expand_as(x), "moveaxis": lambda L, x: L.moveaxis(x, 0, 1), "reshape_as": lambda L, x: x.reshape_as(x.t()),
    "split_with_sizes": lambda L, x: x.split_with_sizes([1, 3], 1), "swapaxes": lambda L, x: x.swapaxes(0, 1),
    "swapdims": lambda L, x: x.swapdims(0, 1), "view_as": lambda L, x: x.view_as(x.t()), "std_mean": lambda L, x: L.std_mean(x),
    "matrix_norm": lambda L, x: L.linalg.matrix_norm(x), "linalg_norm": lambda L, x: L.linalg.norm(x),
    "linalg_svd": lambda L, x: L.linalg.svd(x), "svdvals": lambda L, x: L.linalg.svdvals(x), "svd": lambda L, x: L.svd(x),
    "cauchy_": lambda L, x: x.clone().cauchy_(), "geometric_": lambda L, x: x.clone().geometric_(0.5),
    "log_normal_": lambda L, x: x.clone().log_normal_(), "normal": lambda L, x: L.normal(x, 1.0),
    "normal_std": lambda L, x: L.normal(1.0, x), "randn_like": lambda L, x: L.randn_like(x),
    "random_from_to": lambda L, x: _seeded(L, lambda: x.clone().random_(3, 1000)),
    "random_to": lambda L, x: _seeded(L, lambda: x.clone().random_(100)),
    "random_from": lambda L, x: _seeded(L, lambda: x.clone().random_(5, None)),
    "random_full": lambda L, x: _seeded(L, lambda: x.clone().random_(-2 ** 63, None)),
    "random_default": lambda L, x: x.clone().random_(), "random_neg": lambda L, x: x.clone().random_(-1, 5),
    "random_wide": lambda L, x: _seeded(L, lambda: x.clone().random_(0, 2 ** 16 + 1)),
    "random_wider": lambda L, x: _seeded(L, lambda: x.clone().random_(0, 2 ** 32 + 1)),
    "randint_values": lambda L, x: _seeded(L, lambda: L.randint(0, 2 ** 15, (5,), dtype=x.dtype)),
    "randint_wide": lambda L, x: _seeded(L, lambda: L.randint(0, 2 ** 31, (5,), dtype=x.dtype)),
    "randint_like_values": lambda L, x: _seeded(L, lambda: L.randint_like(x, 3, 10)),
    "bernoulli_p": lambda L, x: x.clone().bernoulli_(0.5), "rand_out": lambda L, x: L.rand(2, out=L.empty(2, dtype=x.dtype)),
    "softmax_backward": lambda L, x: L._softmax_backward_data(x, x, 1, x.dtype),
    "log_softmax_backward": lambda L, x: L._log_softmax_backward_data(x, x, 1, x.dtype),
    "convolution": lambda L, x: L.convolution(x[None], x[:, :3, None], None, [1], [0], [1], False, [0], 1),
    "conv2d": lambda L, x: _f(L).conv2d(x[None, None], x[None, None, :2, :2]),
    "batch_norm": lambda L, x: _f(L).batch_norm(x.contiguous()[None], None, None, training=True),
    "group_norm": lambda L, x: _f(L).group_norm(x[None], 1), "rms_norm": lambda L, x: _f(L).rms_norm(x, (4,)),
    "embedding_max_norm": lambda L, x: _f(L).embedding(_i(L, [0, 1]), x, max_norm=1.0),
    "embedding_renorm_": lambda L, x: L.embedding_renorm_(x, _i(L, [0, 1]), 1.0, 2.0),
    "cross_entropy_input": lambda L, x: _f(L).cross_entropy(x, _i(L, [0, 1, 2])),
    "adaptive_avg_pool1d": lambda L, x: _f(L).adaptive_avg_pool1d(x[None], 2),
    "adaptive_avg_pool2d": lambda L, x: _f(L).adaptive_avg_pool2d(x[None], 2),
    "adaptive_max_pool1d": lambda L, x: _f(L).adaptive_max_pool1d(x[None], 2),
    "adaptive_max_pool2d": lambda L, x: _f(L).adaptive_max_pool2d(x[None], 2),
    "avg_pool2d": lambda L, x: _f(L).avg_pool2d(x[None], 2), "max_pool2d": lambda L, x: _f(L).max_pool2d(x[None], 2),
    "max_pool1d_with_indices": lambda L, x: _f(L).max_pool1d(x[None], 2, return_indices=True),
    "interpolate_nearest2d": lambda L, x: _f(L).interpolate(x[None, None], size=(4, 6)),
    "interpolate_exact": lambda L, x: _f(L).interpolate(x[None], size=8, mode="nearest-exact"),
    "interpolate_linear": lambda L, x: _f(L).interpolate(x[None], size=8, mode="linear"),
    "interpolate_bilinear": lambda L, x: _f(L).interpolate(x[None, None], size=(4, 6), mode="bilinear"),
    "pad_reflect": lambda L, x: _f(L).pad(x[None], (1, 1), mode="reflect"), "unfold_f": lambda L, x: _f(L).unfold(x[None, None], 2),
    "fold": lambda L, x: _f(L).fold(x.reshape(1, 4, 3), (2, 4), (2, 2)),
    "pad_replicate": lambda L, x: _f(L).pad(x[None], (1, 1), mode="replicate"),
    "pad_reflect2d": lambda L, x: _f(L).pad(x[None, None], (1, 1, 1, 1), mode="reflect"),
    "pad_circular": lambda L, x: _f(L).pad(x[None], (1, 1), mode="circular"),
    "softmax_dim0": lambda L, x: L.softmax(x, 0), "log_softmax_dim0": lambda L, x: L.log_softmax(x, 0),
    "fused_adamw": lambda L, x: L._fused_adamw_([x], [x], [x], [x], [], [L.tensor(1.0)], lr=0.1, beta1=0.9, beta2=0.99,
                                                weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False),
    "fused_sgd": lambda L, x: L._fused_sgd_([x], [x], [], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0,
                                            nesterov=False, maximize=False, is_first_step=True),
    "fused_adagrad": lambda L, x: L._fused_adagrad_([x], [x], [x], [L.tensor(1.0)], lr=0.1, lr_decay=0.0, weight_decay=0.0,
                                                    eps=1e-8, maximize=False),
    "amp_update_scale": lambda L, x: L._amp_update_scale_(x[0, :1], x[0, :1].int(), L.zeros(1), 2.0, 0.5, 10),
    "bernoulli_tensor_p": lambda L, x: x.clone().bernoulli_(L.ones(3, 4)), "bernoulli_scalar": lambda L, x: L.bernoulli(x, 0.5),
    "gelu_tanh": lambda L, x: _f(L).gelu(x, approximate="tanh"),
    "sdpa": lambda L, x: _f(L).scaled_dot_product_attention(x[None], x[None], x[None]),
    "fused_adam": lambda L, x: L._fused_adam_([x], [x], [x], [x], [], [L.tensor(1.0)], lr=0.1, beta1=0.9, beta2=0.99,
                                              weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False),
    "amp_unscale": lambda L, x: L._amp_foreach_non_finite_check_and_unscale_([x], L.zeros(1), L.ones(1)),
    # arguments with which torch computes in another dtype, or answers without its kernel
    "clamp_float_max": lambda L, x: L.clamp(x, max=1.5), "clamp_float_min": lambda L, x: L.clamp(x, 0.5, 2),
    "clamp_inplace_float": lambda L, x: x.clone().clamp_(max=1.5), "clamp_out_float": lambda L, x: L.clamp(x, max=1.5, out=L.empty(0, dtype=x.dtype)),
    "count_nonzero_dim": lambda L, x: x.count_nonzero(0), "count_nonzero_dims": lambda L, x: x.count_nonzero((0, 1)),
    "randn_like_float": lambda L, x: L.randn_like(x, dtype=L.float32).dtype, "rand_like_float": lambda L, x: L.rand_like(x, dtype=L.float64).shape,
    "randint_like_int64": lambda L, x: L.randint_like(x, 5, dtype=L.int64).dtype,
    "max_dim_0d": lambda L, x: x[0, 0].max(0), "min_dim_empty": lambda L, x: x[:0].min(1), "mode_0d": lambda L, x: x[1, 1].mode(0),
    "mode_empty": lambda L, x: x[:0].mode(1), "topk_0d": lambda L, x: x[0, 1].topk(1), "topk_empty": lambda L, x: x[:0].topk(0),
    "kthvalue_0d": lambda L, x: x[0, 1].kthvalue(1), "cummax_0d": lambda L, x: x[0, 1].cummax(0), "cummin_empty": lambda L, x: x[:0].cummin(1),
    "repeat_interleave_tensor": lambda L, x: x.repeat_interleave(_i(L, [1, 2, 0]), 0),
    "max_float_other": lambda L, x: L.max(x, L.tensor(1.25)), "min_float_other": lambda L, x: x.min(L.full((3, 4), 2.5)),
    "max_float_first": lambda L, x: L.max(L.full((3, 4), 2.5), x), "max_int_other": lambda L, x: L.max(x, L.tensor(1)),
    "cumsum_0d_to_uint": lambda L, x: x[0, 0].to(L.int64).cumsum(0, dtype=x.dtype), "cumsum_empty": lambda L, x: x[:0].cumsum(1),
    "cumprod_0d": lambda L, x: x[1, 1].cumprod(0),
    # Python compositions of table ops
    "clamp_none": lambda L, x: L.clamp(x), "clamp_min_tensor": lambda L, x: L.clamp_min(x, x),
    "clamp_max_tensor": lambda L, x: L.clamp_max(x, x), "clamp_min_number": lambda L, x: L.clamp_min(x, 1),
    "isin": lambda L, x: L.isin(x.contiguous(), x.contiguous()), "heaviside": lambda L, x: L.heaviside(x, x),
    "cross": lambda L, x: L.cross(x[:, :3], x[:, 1:], dim=1), "cosine_similarity": lambda L, x: L.cosine_similarity(x, x),
    # variants: methods, in-place, out=, non-contiguous and 0-d inputs, mixed dtypes
    "eq_method": lambda L, x: x.eq(3), "eq_inplace": lambda L, x: x.clone().eq_(3), "ne_out": lambda L, x: L.ne(x, 2, out=L.empty(0, dtype=L.bool)),
    "mul_out": lambda L, x: L.mul(x, x, out=L.empty(0, dtype=x.dtype)), "mul_out_int64": lambda L, x: L.mul(x, x, out=L.empty(0, dtype=L.int64)),
    "mul_into_uint": lambda L, x: L.mul(x.to(L.int64), 2, out=L.empty(0, dtype=x.dtype)),
    "add_into_uint": lambda L, x: L.add(x.to(L.int64), 2, out=L.empty(0, dtype=x.dtype)),
    "mul_strided": lambda L, x: x.t() * x.t(), "mul_broadcast": lambda L, x: x * x[0], "mul_0d": lambda L, x: x * x[0, 0],
    "mul_0d_int64": lambda L, x: x * L.tensor(3), "mul_0d_float": lambda L, x: x * L.tensor(1.5),
    "mul_uint64_scalar": lambda L, x: x * 2 ** 63, "eq_uint64_scalar": lambda L, x: x == 2 ** 64 - 1,
    "mul_int64_0d_by_uint": lambda L, x: L.tensor([1, 2]) * x[0, 1], "mul_bool": lambda L, x: x * L.ones(4, dtype=L.bool),
    "mul_bool_0d": lambda L, x: x * L.tensor(True), "mul_bool_scalar": lambda L, x: x * True,
    "eq_int8": lambda L, x: x == x.to(L.int8), "where_mixed": lambda L, x: L.where(_m(L), x, x.to(L.int64)),
    "where_float": lambda L, x: L.where(_m(L), x, 1.5), "floor_strided": lambda L, x: L.floor(x[:, ::2]),
    "bitwise_and_0d": lambda L, x: x[0, 0] & x[1, 1], "sum_0d": lambda L, x: x[0, 0].sum(), "sort_0d": lambda L, x: x[0, 0].sort(),
    "sum_out": lambda L, x: L.sum(x, 0, out=L.empty(0, dtype=L.int64)), "sum_out_uint": lambda L, x: L.sum(x, 0, out=L.empty(0, dtype=x.dtype)),
    "cumsum_inplace": lambda L, x: x.clone().cumsum_(1), "cumprod_inplace": lambda L, x: x.clone().cumprod_(0),
    "round_inplace": lambda L, x: x.clone().round_(), "nan_to_num_inplace": lambda L, x: x.clone().nan_to_num_(),
    "floor_inplace": lambda L, x: x.clone().floor_(), "bitwise_or_inplace": lambda L, x: x.clone().bitwise_or_(x),
    "prod_dtype_uint": lambda L, x: x.to(L.int64).prod(dtype=x.dtype), "cumsum_dtype_uint": lambda L, x: x.cumsum(0, dtype=x.dtype),
    "cumprod_dtype_uint": lambda L, x: x.to(L.int64).cumprod(0, dtype=x.dtype), "mean_dtype_uint": lambda L, x: x.float().mean(dtype=x.dtype),
    "nansum_dtype": lambda L, x: x.nansum(dtype=L.int16), "softmax_dtype_uint": lambda L, x: L.softmax(x.float(), 0, dtype=x.dtype),
    "to_uint_from_float": lambda L, x: L.full((2,), 2.75).to(x.dtype), "type_method": lambda L, x: x.type(L.float64),
    "clone_t": lambda L, x: x.t().clone(),
    "contiguous_strided": lambda L, x: x[:, ::2].contiguous(), "copy_strided": lambda L, x: x.clone().t().copy_(x.t() * 2),
    "copy_from_uint8": lambda L, x: x.clone().copy_(L.full((3, 4), 200, dtype=L.uint8)),
    "copy_between_unsigned": lambda L, x: L.zeros(3, 4, dtype=L.uint16).copy_(x * 9000),
    "requires_grad": lambda L, x: x.clone().requires_grad_(),
    "float_tensor_requires_grad_to_uint": lambda L, x: L.ones(2, requires_grad=True).to(x.dtype),
    "nonzero_static": lambda L, x: bool(x[0, 0]), "index_int": lambda L, x: [1, 2, 3][x[0, 1]],
    "item_int": lambda L, x: int(x[0, 0]), "item_float": lambda L, x: float(x[2, 0]),
    "getitem_uint_index": lambda L, x: x[x[0, 1]], "getitem_uint_tensor_index": lambda L, x: x[0][x[0, :2]],
    "setitem_slice": lambda L, x: _setitem(x.clone(), (slice(None), 1), 9), "setitem_tensor": lambda L, x: _setitem(x.clone(), 0, x[1]),
    "setitem_mask_tensor": lambda L, x: _setitem(x.clone(), _m(L), x[_m(L)]),
    "tolist_strided": lambda L, x: x.t().tolist(), "numpy_dtype": lambda L, x: str(x.numpy().dtype),
    "element_size": lambda L, x: x.element_size(), "is_signed": lambda L, x: x.is_signed(),
})


def _seeded(L, fn):
    L.manual_seed(0)
    return fn()


def _public(L, name):
    """A table entry's public function: torch.special's ops (ops_special.def) are special_<name> in the table."""
    return getattr(L.special, name[8:]) if name.startswith("special_") else getattr(L, name)


# every pointwise entry of the table that torch names publicly, with a tensor and with a Python number
for _e in pyctorch._C._op_table():
    if _e["kind"] == "unary" and not _e["name"].startswith("_"):
        CALLS.setdefault(_e["name"], (lambda n: lambda L, x: _public(L, n)(x))(_e["name"]))
    elif _e["kind"] == "binary" and not _e["name"].startswith("_"):
        CALLS.setdefault(_e["name"], (lambda n: lambda L, x: _public(L, n)(x, x.t().contiguous().t()))(_e["name"]))
        CALLS.setdefault(_e["name"] + "_number", (lambda n: lambda L, x: _public(L, n)(x, 2))(_e["name"]))
        CALLS.setdefault(_e["name"] + "_float", (lambda n: lambda L, x: _public(L, n)(x, 2.5))(_e["name"]))
CALLS["polygamma"] = lambda L, x: L.polygamma(2, x)
# torch computes torch.special's functions in float32 for these integers, with errors of a few 1e-7 and more where
# they are near zero (Bessel J1, Y0, Y1 at the sample's values, log_ndtr's tail); tests/test_special_functions.py
# compares the values, here the dtype, shape and NaN pattern
for _n in [n for n in CALLS if n.startswith("special_")]:
    CALLS[_n] = (lambda f: lambda L, x: (lambda r: (r.dtype, r.shape, r.isnan()))(f(L, x)))(CALLS[_n])


# floating values (computed by libm in both, from the same integers) within 1e-6; everything else exactly
TOL = {name: (1e-6, 0.0) for name in ("float16", "bfloat16", "float32", "float64")}


def _compare(run):
    """run(lib) in torch and in pyctorch: equal results, or the same exception type and message."""
    assert_same_outcome(lambda: run(pyctorch), lambda: run(torch), tol=TOL, message=True)


def _input(L, dtype, layout):
    """VALS as a (3, 4) tensor of dtype: contiguous, or the transpose of a contiguous (4, 3) one."""
    d = getattr(L, dtype)
    if layout == "contiguous":
        return L.tensor(VALS, dtype=d)
    return L.tensor([list(r) for r in zip(*VALS)], dtype=d).t()


@requires_torch
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("name", list(CALLS))
def test_op_matches_torch(name, dtype, layout):
    f = CALLS[name]
    _compare(lambda L: f(L, _input(L, dtype, layout)))


def _extremes(L, dtype):
    top = 2 ** BITS[dtype] - 1
    return L.tensor([[top, 0, top // 2 + 1, 5], [1, top, 2, top - 1]], dtype=getattr(L, dtype))


EXTREME_CALLS = {
    "mul": lambda L, x: x * x, "mul_scalar": lambda L, x: x * 3, "eq": lambda L, x: x == x.flip(0),
    "ne_top": lambda L, x: x != L.iinfo(x.dtype).max, "bitwise": lambda L, x: (x & 0xFF00) | (x ^ 7),
    "sum": lambda L, x: x.sum(1), "prod": lambda L, x: x.prod(0), "cumsum": lambda L, x: x.cumsum(1),
    "sort": lambda L, x: x.sort(1), "sort_desc": lambda L, x: x.sort(0, descending=True), "argsort": lambda L, x: x.argsort(1),
    "unique": lambda L, x: L.unique(x, return_counts=True), "all_any": lambda L, x: (x.all(1), x.any(0)),
    "to_float": lambda L, x: x.double(), "to_half": lambda L, x: x.half(), "to_bf16": lambda L, x: x.bfloat16().float(),
    "to_int": lambda L, x: (x.to(L.int64), x.to(L.int32), x.to(L.int8), x.to(L.uint8), x.bool()),
    "true_div": lambda L, x: x / 3, "sqrt": lambda L, x: x.sqrt(), "where": lambda L, x: L.where(x == 5, x, x.flip(1)),
    "setitem_top": lambda L, x: _setitem(x.clone(), (0, 1), L.iinfo(x.dtype).max),
    "index": lambda L, x: x[:, _i(L, [3, 0])], "cat": lambda L, x: L.cat([x, x.flip(0)], 1),
    "tolist_item": lambda L, x: (x.tolist(), x[0, 0].item(), int(x[1, 0]), float(x[0, 0])), "repr": lambda L, x: repr(x),
    "int_top": lambda L, x: int(x[0, 0]), "index_top": lambda L, x: [1][x[0, 0]], "bool_top": lambda L, x: bool(x[0, 0]),
    "setitem_int64_max": lambda L, x: _setitem(x.clone(), (0, 1), 2 ** 63 - 1),
}


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("name", list(EXTREME_CALLS))
def test_extreme_values_match_torch(name, dtype):
    """The largest values of each dtype (above 2**63 for uint64): wrapping, ordering, conversions."""
    f = EXTREME_CALLS[name]
    _compare(lambda L: f(L, _extremes(L, dtype)))


# An unsigned tensor as another argument than self (an index, a mask, a weight, a second operand): torch's own argument
# checks answer, or the op computes in the other operand's dtype. (lib, u) -> result, u a (3, 4) unsigned tensor.
AUX_CALLS = {
    "gather_idx": lambda L, u: L.gather(L.ones(3, 4), 1, u[:, :1]),
    "scatter_idx": lambda L, u: L.zeros(3, 4).scatter_(1, u[:, :1], 1.0),
    "index_select_idx": lambda L, u: L.index_select(L.ones(3, 4), 1, u[0, :2]),
    "index_add_idx": lambda L, u: L.zeros(3, 4).index_add_(1, u[0, :2], L.ones(3, 2)),
    "index_fill_idx": lambda L, u: L.zeros(3, 4).index_fill_(1, u[0, :2], 2.0),
    "index_copy_idx": lambda L, u: L.zeros(3, 4).index_copy_(1, u[0, :2], L.ones(3, 2)),
    "take_idx": lambda L, u: L.take(L.ones(3, 4), u[0]),
    "put_idx": lambda L, u: L.zeros(3, 4).put_(u[0], L.ones(4)),
    "masked_fill_mask": lambda L, u: L.zeros(3, 4).masked_fill(u, 1.0),
    "masked_select_mask": lambda L, u: L.masked_select(L.zeros(3, 4), u),
    "where_cond": lambda L, u: L.where(u, L.ones(3, 4), L.zeros(3, 4)),
    "index_put_idx": lambda L, u: L.zeros(3, 4).index_put_((u[0, :2],), L.ones(4)),
    "getitem_idx": lambda L, u: L.ones(3, 4)[u[0, :2]],
    "setitem_idx": lambda L, u: L.ones(3, 4).__setitem__(u[0, :2], 5.0),
    "repeat_interleave_rep": lambda L, u: L.ones(4).repeat_interleave(u[0]),
    "repeat_interleave_only": lambda L, u: L.repeat_interleave(u[0]),
    "bincount_w": lambda L, u: L.bincount(L.tensor([0, 1, 1, 2]), weights=u[0]),
    "searchsorted_in": lambda L, u: L.searchsorted(L.tensor([1.0, 2.0, 3.0]), u),
    "bucketize_b": lambda L, u: L.bucketize(L.tensor([1.0, 2.0]), u[0].sort().values),
    "nll_target": lambda L, u: L.nn.functional.nll_loss(L.ones(3, 10), u[:, 0]),
    "one_hot": lambda L, u: L.nn.functional.one_hot(u[0]),
    "embedding_bag": lambda L, u: L.nn.functional.embedding(u[0, :2], L.ones(10, 2)),
    "lerp_w": lambda L, u: L.lerp(L.ones(3, 4), L.zeros(3, 4), u),
    "pow_exp": lambda L, u: L.pow(2.0, u), "pow_exp_t": lambda L, u: L.pow(L.ones(3, 4), u),
    "addcmul_t": lambda L, u: L.addcmul(L.ones(3, 4), u, L.ones(3, 4)),
    "masked_scatter_mask": lambda L, u: L.zeros(3, 4).masked_scatter(u, L.ones(12)),
    "copy_to_float": lambda L, u: L.zeros(3, 4).copy_(u),
    "float_mul_u": lambda L, u: L.ones(3, 4) * u, "float_eq_u": lambda L, u: L.ones(3, 4) == u,
    "scalar_first": lambda L, u: 2 * u, "rsub_scalar": lambda L, u: 1 - u, "rdiv": lambda L, u: 1 / u,
    "stack_mixed": lambda L, u: L.stack([u[0], u[1].to(L.int64)]),
    "cat_float_first": lambda L, u: L.cat([L.ones(1, 4), u]),
    "dot_mixed": lambda L, u: L.dot(L.ones(4), u[0]),
    "mm_mixed": lambda L, u: L.mm(L.ones(2, 3), u),
    "to_dtype_kw": lambda L, u: u.to(dtype=L.float16), "to_device": lambda L, u: u.to("cpu"),
    "double": lambda L, u: u.double(), "long": lambda L, u: u.long(), "bool": lambda L, u: u.bool(),
    "half": lambda L, u: u.half(), "byte": lambda L, u: u.byte(),
    "zeros_like_float": lambda L, u: L.zeros_like(u, dtype=L.float32), "ones_like_u": lambda L, u: L.ones_like(L.ones(2), dtype=u.dtype),
    "full_like_u": lambda L, u: L.full_like(L.ones(2), 7, dtype=u.dtype), "arange_out": lambda L, u: L.arange(3, out=L.empty(0, dtype=u.dtype)),
    "linspace_out": lambda L, u: L.linspace(0, 1, 3, out=L.empty(0, dtype=u.dtype)),
    "randint_out": lambda L, u: L.randint(0, 5, (3,), out=L.empty(0, dtype=u.dtype)).shape,
    "tensor_dtype": lambda L, u: L.tensor([[1, 2]], dtype=u.dtype), "as_tensor_u": lambda L, u: L.as_tensor(u, dtype=L.int32),
    "eq_method_float": lambda L, u: u.eq(2.5), "ne_int64_t": lambda L, u: u.ne(L.tensor([1, 2, 3, 4])),
    "fill_with_0d": lambda L, u: L.zeros(2).fill_(u[0, 0]), "fill_top": lambda L, u: L.zeros(2).fill_(_top(L, u)),
    "full_like_top": lambda L, u: L.full_like(L.zeros(2, dtype=L.float64), _top(L, u).item()),
    "mul_float_by_top": lambda L, u: L.ones(2) * _top(L, u), "grad_through_mul": lambda L, u: _grad_of(L, u),
    "equal": lambda L, u: L.equal(u, u), "allclose": lambda L, u: L.allclose(u, u), "isclose": lambda L, u: L.isclose(u, u),
    "numel": lambda L, u: u.numel(), "nbytes": lambda L, u: u.nbytes, "storage_size": lambda L, u: u.untyped_storage().nbytes(),
    "view_as_int16": lambda L, u: u.view(L.int16).shape, "contig": lambda L, u: u.is_contiguous(),
}


def _top(L, u):
    """The largest value of u's dtype as a 0-d tensor."""
    return L.full((), L.iinfo(u.dtype).max, dtype=u.dtype)


def _grad_of(L, u):
    w = L.ones(3, 4, requires_grad=True)
    (w * u).sum().backward()
    return w.grad


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("name", list(AUX_CALLS))
def test_unsigned_as_other_argument_matches_torch(name, dtype):
    f = AUX_CALLS[name]
    vals = [[3, 1, 2, 0], [0, 1, 2, 2], [1, 0, 1, 1]]
    _compare(lambda L: f(L, L.tensor(vals, dtype=getattr(L, dtype))))


# ---- the dtype objects ----

@pytest.mark.parametrize("dtype", UNSIGNED)
def test_dtype_attributes(dtype):
    d = getattr(pyctorch, dtype)
    assert repr(d) == str(d) == f"torch.{dtype}"
    assert d.itemsize == BITS[dtype] // 8
    assert d.is_signed is False and d.is_floating_point is False and d.is_complex is False
    info = pyctorch.iinfo(d)
    assert (info.bits, info.min, info.max) == (BITS[dtype], 0, 2 ** BITS[dtype] - 1)
    assert info.dtype == dtype
    t = pyctorch.zeros(2, dtype=d)
    assert t.element_size() == d.itemsize and t.dtype is d
    assert t.type() == {"uint16": "torch.UInt16Tensor", "uint32": "torch.UInt32Tensor", "uint64": "torch.UInt64Tensor"}[dtype]
    assert not t.is_floating_point()


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_dtype_attributes_match_torch(dtype):
    d, e = getattr(pyctorch, dtype), getattr(torch, dtype)
    assert (repr(d), d.itemsize, d.is_signed, d.is_floating_point) == (repr(e), e.itemsize, e.is_signed, e.is_floating_point)
    assert repr(pyctorch.iinfo(d)) == repr(torch.iinfo(e))
    assert pyctorch.zeros(1, dtype=d).type() == torch.zeros(1, dtype=e).type()


# ---- type promotion ----

def _promote(lib, a, b):
    try:
        return str(lib.promote_types(getattr(lib, a), getattr(lib, b)))
    except RuntimeError as e:
        return "error: " + str(e)


def test_promotion_rules():
    """Hand-checked: a float wins, anything else is refused (bool and uint8 included)."""
    for u in UNSIGNED:
        assert _promote(pyctorch, u, u) == f"torch.{u}"
        for f in ["float16", "bfloat16", "float32", "float64"]:
            assert _promote(pyctorch, u, f) == _promote(pyctorch, f, u) == f"torch.{f}"
        for o in ["bool", "uint8", "int8", "int64"] + [v for v in UNSIGNED if v != u]:
            assert _promote(pyctorch, u, o).startswith("error: Promotion for uint16, uint32, uint64 types is not supported")


@requires_torch
def test_promote_types_table_matches_torch():
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            assert _promote(pyctorch, a, b) == _promote(torch, a, b), (a, b)


def _result_type(lib, a, b):
    try:
        return str(lib.result_type(a, b))
    except RuntimeError as e:
        return "error: " + str(e)


def _operands(lib, dtype):
    """A dim > 0 tensor and a 0-d tensor of dtype."""
    d = getattr(lib, dtype)
    return [lib.ones(2, dtype=d), lib.ones((), dtype=d)]


SCALARS = [True, 3, -1, 2 ** 63, 2.5]


@requires_torch
def test_result_type_table_matches_torch():
    """Every unsigned operand (tensor, 0-d tensor) with every dtype's tensors and with Python scalars."""
    for u in UNSIGNED:
        for i_u in range(2):
            for other in ALL_DTYPES:
                for i_o in range(2):
                    p = _result_type(pyctorch, _operands(pyctorch, u)[i_u], _operands(pyctorch, other)[i_o])
                    t = _result_type(torch, _operands(torch, u)[i_u], _operands(torch, other)[i_o])
                    assert p == t, (u, i_u, other, i_o)
                    p = _result_type(pyctorch, _operands(pyctorch, other)[i_o], _operands(pyctorch, u)[i_u])
                    t = _result_type(torch, _operands(torch, other)[i_o], _operands(torch, u)[i_u])
                    assert p == t, (other, i_o, u, i_u)
            for s in SCALARS:
                assert _result_type(pyctorch, _operands(pyctorch, u)[i_u], s) == _result_type(torch, _operands(torch, u)[i_u], s)


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_binary_ops_with_other_dtypes_match_torch(dtype):
    """mul / eq / add across dtypes: the promoted result or torch's promotion error."""
    for other in ALL_DTYPES:
        for op in ["mul", "eq", "add", "bitwise_and"]:
            def run(lib):
                a = lib.tensor([1, 2, 3], dtype=getattr(lib, dtype))
                b = lib.tensor([2, 0, 1], dtype=getattr(lib, other))
                return getattr(lib, op)(a, b)
            try:
                exp = run(torch)
            except Exception as e:  # noqa: BLE001
                with pytest.raises(type(e), match="^" + str(e).replace("(", r"\(").replace(")", r"\)").replace('"', '.')):
                    run(pyctorch)
                continue
            got = run(pyctorch)
            assert (str(got.dtype), got.tolist()) == (str(exp.dtype), exp.tolist()), (op, other)


# ---- creation and conversions ----

EDGE_INTS = [0, 1, 2 ** 15, 2 ** 16 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 63 - 1]


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_creation_and_wrapping(dtype):
    """Checked against hand-computed modular values (numpy's unsigned types wrap the same way)."""
    d, bits = getattr(pyctorch, dtype), BITS[dtype]
    np_t = getattr(np, dtype)
    assert pyctorch.zeros(2, 3, dtype=d).tolist() == [[0] * 3] * 2
    assert pyctorch.ones(3, dtype=d).tolist() == [1, 1, 1]
    assert pyctorch.full((2,), 2 ** bits - 1, dtype=d).tolist() == [2 ** bits - 1] * 2
    assert pyctorch.full((2,), -3, dtype=d).tolist() == [2 ** bits - 3] * 2
    assert pyctorch.tensor([1, 2], dtype=d).numpy().dtype == np_t
    x = pyctorch.tensor([[5, 1], [2 ** bits - 1, 0]], dtype=d)
    assert x[1, 0].item() == 2 ** bits - 1 and int(x[0, 0]) == 5
    assert (x * 3).tolist() == (np.array(x.tolist(), dtype=np_t) * np_t(3)).tolist()
    ints = [v for v in EDGE_INTS if v < 2 ** bits] + [-1, -5]
    src = pyctorch.tensor(ints, dtype=pyctorch.int64)
    assert src.to(d).tolist() == [v % 2 ** bits for v in ints]
    assert src.to(d).to(pyctorch.int64).tolist() == np.array(ints).astype(np_t).astype(np.int64).tolist()
    assert src.to(d).double().tolist() == [float(v % 2 ** bits) for v in ints]


def test_uint64_full_range():
    big = [0, 2 ** 63, 2 ** 64 - 1]
    t = pyctorch.tensor(big, dtype=pyctorch.uint64)
    assert t.tolist() == big and t[2].item() == 2 ** 64 - 1
    assert t.to(pyctorch.int64).tolist() == [0, -2 ** 63, -1]
    assert t.double().tolist() == [0.0, 2.0 ** 63, 2.0 ** 64]
    assert (t == 2 ** 64 - 1).tolist() == [False, False, True]
    with pytest.raises(OverflowError):
        pyctorch.tensor([-1], dtype=pyctorch.uint64)
    with pytest.raises(OverflowError):
        pyctorch.tensor([2 ** 64], dtype=pyctorch.uint64)
    with pytest.raises(TypeError):
        pyctorch.tensor([1.0], dtype=pyctorch.uint64)


CONVERT_INTS = [0, 1, 3, 127, 255, 1000, 40000, 65535]
CONVERT_FLOATS = [0.0, 1.0, 2.5, 3.75, 100.0, 255.0, 1000.5, 65504.0]


def _convert_source(lib, dtype):
    d = getattr(lib, dtype)
    if dtype == "bool":
        return lib.tensor([True, False, True, True, False, True, True, False])
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        return lib.tensor(CONVERT_FLOATS, dtype=lib.float64).to(d)
    return lib.tensor(CONVERT_INTS, dtype=lib.int64).to(d)


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("other", ALL_DTYPES)
def test_conversions_match_torch(dtype, other):
    """other -> unsigned -> other, .to() and copy_, contiguous and strided."""
    for lib_a, lib_b in [(pyctorch, torch)]:
        src_p, src_t = _convert_source(lib_a, other), _convert_source(lib_b, other)
        got, exp = src_p.to(getattr(lib_a, dtype)), src_t.to(getattr(lib_b, dtype))
        assert (str(got.dtype), got.tolist()) == (str(exp.dtype), exp.tolist())
        back_p, back_t = got.to(getattr(lib_a, other)), exp.to(getattr(lib_b, other))
        assert (str(back_p.dtype), back_p.tolist()) == (str(back_t.dtype), back_t.tolist())
        dst_p = lib_a.zeros(4, dtype=getattr(lib_a, dtype)).copy_(src_p[::2])
        dst_t = lib_b.zeros(4, dtype=getattr(lib_b, dtype)).copy_(src_t[::2])
        assert dst_p.tolist() == dst_t.tolist()


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_negative_and_large_floats_match_torch(dtype):
    vals = [-1.0, -3.5, 3.7, 65536.5, 4294967296.0, 9.3e18]
    got = pyctorch.tensor(vals, dtype=pyctorch.float64).to(getattr(pyctorch, dtype))
    exp = torch.tensor(vals, dtype=torch.float64).to(getattr(torch, dtype))
    assert got.tolist() == exp.tolist()
    big = [0, 1, 2 ** 31, 2 ** 32 - 1] if dtype != "uint16" else [0, 1, 2 ** 15, 2 ** 16 - 1]
    u_p, u_t = pyctorch.tensor(big, dtype=getattr(pyctorch, dtype)), torch.tensor(big, dtype=getattr(torch, dtype))
    for other in ["float16", "bfloat16", "float32", "int8", "int16", "int32"]:
        assert u_p.to(getattr(pyctorch, other)).tolist() == u_t.to(getattr(torch, other)).tolist(), other


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("data", [[70000], [-65536], [65535], [-1], [2 ** 32], [-2 ** 32 + 1], [1.5], [-1.0], [65536.0],
                                  [True, False], 7])
def test_tensor_constructor_values_match_torch(dtype, data):
    def run(lib):
        return lib.tensor(data, dtype=getattr(lib, dtype))
    try:
        exp = run(torch)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            run(pyctorch)
        assert str(info.value) == str(e)
        return
    got = run(pyctorch)
    assert (str(got.dtype), got.tolist()) == (str(exp.dtype), exp.tolist())


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("value", [70000, -70000, -1, 2 ** 63, 2 ** 64 - 1, 2.5, -2 ** 63])
def test_fill_values_match_torch(dtype, value):
    for fn in (lambda L: L.full((2,), value, dtype=getattr(L, dtype)),
               lambda L: L.zeros(2, dtype=getattr(L, dtype)).fill_(value)):
        try:
            exp = fn(torch)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)) as info:
                fn(pyctorch)
            assert str(info.value) == str(e)
            continue
        assert fn(pyctorch).tolist() == exp.tolist()


# ---- printing ----

def _print_cases(lib, dtype):
    d = getattr(lib, dtype)
    top = 2 ** BITS[dtype] - 1
    return [lib.tensor(VALS, dtype=d), lib.tensor([0, top, 5], dtype=d), lib.tensor(7, dtype=d), lib.zeros(0, dtype=d),
            lib.arange(2000).to(d).reshape(2, 1000)]


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_printing_matches_torch(dtype):
    for p, t in zip(_print_cases(pyctorch, dtype), _print_cases(torch, dtype)):
        assert repr(p) == repr(t)
        assert str(p) == str(t)


def test_printing_hand_written():
    assert repr(pyctorch.tensor([1, 2], dtype=pyctorch.uint16)) == "tensor([1, 2], dtype=torch.uint16)"
    assert repr(pyctorch.tensor([2 ** 64 - 1], dtype=pyctorch.uint64)) == "tensor([18446744073709551615], dtype=torch.uint64)"


# ---- NumPy and DLPack ----

@pytest.mark.parametrize("dtype", UNSIGNED)
def test_numpy_round_trip(dtype):
    np_t = getattr(np, dtype)
    a = np.array([[0, 1, 2 ** BITS[dtype] - 1], [7, 8, 9]], dtype=np_t)
    t = pyctorch.from_numpy(a)
    assert t.dtype is getattr(pyctorch, dtype) and t.tolist() == a.tolist()
    a[0, 0] = 5  # shares memory
    assert t[0, 0].item() == 5
    back = t.numpy()
    assert back.dtype == np_t and np.shares_memory(back, a)
    c = pyctorch.tensor(a)  # a copy, keeping the dtype
    assert c.dtype is getattr(pyctorch, dtype) and c.tolist() == a.tolist()
    assert pyctorch.as_tensor(a[:, ::2]).tolist() == a[:, ::2].tolist()
    assert pyctorch.tensor([np_t(3), np_t(4)]).dtype is getattr(pyctorch, dtype)
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not supported"):
        pyctorch.tensor([np_t(3), 1])


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_dlpack_round_trip(dtype):
    t = pyctorch.tensor([[1, 2], [3, 2 ** BITS[dtype] - 1]], dtype=getattr(pyctorch, dtype))
    back = pyctorch.from_dlpack(t)
    assert back.dtype is t.dtype and back.tolist() == t.tolist()
    a = np.from_dlpack(t)
    assert a.dtype == getattr(np, dtype) and a.tolist() == t.tolist()


@requires_torch
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_dlpack_with_torch(dtype):
    t = torch.tensor([1, 2, 2 ** BITS[dtype] - 1], dtype=getattr(torch, dtype))
    p = pyctorch.from_dlpack(t)
    assert p.dtype is getattr(pyctorch, dtype) and p.tolist() == t.tolist()
    back = torch.from_dlpack(pyctorch.tensor([4, 5], dtype=getattr(pyctorch, dtype)))
    assert back.dtype == getattr(torch, dtype) and back.tolist() == [4, 5]


# ---- save / load ----

def _payload(lib):
    return {d: lib.tensor([[0, 1, 2 ** BITS[d] - 1], [3, 4, 5]], dtype=getattr(lib, d)) for d in UNSIGNED} | {
        "view": lib.tensor([1, 2, 3, 4], dtype=lib.uint32)[1::2]}


def test_save_load_round_trip():
    buf = io.BytesIO()
    pyctorch.save(_payload(pyctorch), buf)
    buf.seek(0)
    got = pyctorch.load(buf)
    for k, v in _payload(pyctorch).items():
        assert got[k].dtype is v.dtype and got[k].tolist() == v.tolist(), k


@requires_torch
def test_torch_file_loads_in_pyctorch_and_back():
    buf = io.BytesIO()
    torch.save(_payload(torch), buf)
    buf.seek(0)
    got = pyctorch.load(buf)
    for k, v in _payload(torch).items():
        assert str(got[k].dtype) == str(v.dtype) and got[k].tolist() == v.tolist(), k
    buf = io.BytesIO()
    pyctorch.save(_payload(pyctorch), buf)
    buf.seek(0)
    back = torch.load(buf)
    for k, v in _payload(torch).items():
        assert back[k].dtype == v.dtype and back[k].tolist() == v.tolist() and back[k].stride() == v.stride(), k


def test_safetensors_round_trip():
    from pyctorch.utils import safetensors as st
    data = _payload(pyctorch)
    data["view"] = data["view"].contiguous()
    got = st.load(st.save(data))
    for k, v in data.items():
        assert got[k].dtype is v.dtype and got[k].tolist() == v.tolist(), k


@requires_torch
def test_safetensors_with_the_safetensors_package():
    sft = pytest.importorskip("safetensors.torch")
    from pyctorch.utils import safetensors as st
    data_t = {k: v.contiguous() for k, v in _payload(torch).items()}
    data_p = {k: v.contiguous() for k, v in _payload(pyctorch).items()}
    assert st.save(data_p) == sft.save(data_t)  # the same bytes: header order and offsets included
    got = st.load(sft.save(data_t))
    back = sft.load(st.save(data_p))
    for k, v in data_t.items():
        assert str(got[k].dtype) == str(v.dtype) and got[k].tolist() == v.tolist(), k
        assert back[k].dtype == v.dtype and back[k].tolist() == v.tolist(), k


@requires_torch
def test_can_cast_table_matches_torch():
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            if a in UNSIGNED or b in UNSIGNED:
                assert pyctorch.can_cast(getattr(pyctorch, a), getattr(pyctorch, b)) == \
                    torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


@requires_torch
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pad_value_conversion_matches_torch(dtype):
    """constant_pad_nd converts its value with torch's checked conversion: a negative float into an unsigned dtype,
    a float beyond the range, or 2**63 into a float dtype by value."""
    for value in [-4.125, 1000.5, -3, 300, 1e6, 2 ** 63, True, math.nan]:
        _compare(lambda L: L.constant_pad_nd(L.tensor([1, 0], dtype=getattr(L, dtype)), [1, 0], value=value))
