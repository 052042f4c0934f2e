"""torch.nn.functional: 3-d pooling, max unpooling, fractional max pooling, grid sampling and
affine grids, embedding bags and the CTC loss (issue 20), over the table ops of
csrc/aten/ops_nn_extra.def with torch's Python-level argument handling.

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import warnings as _warnings

import numpy as _np

import pyctorch as torch
from pyctorch import _C as _C_extra
from . import _reduction as _Reduction_extra


def _ntuple_extra(x, n):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x] * n


# ---- 3-d pooling ----

def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    input.is_cuda  # noqa: B018  (torch reads it first: a non-tensor input raises its AttributeError)
    return _C_extra.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    r = _C_extra.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


avg_pool3d = _C_extra.avg_pool3d


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg_pool_complex(_C_extra.adaptive_avg_pool3d, "adaptive_avg_pool3d_cpu", input,
                                      _list_with_default(output_size, input.size()), 3)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _C_extra.adaptive_max_pool3d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    r = _C_extra.adaptive_max_pool3d(input, _list_with_default(output_size, input.size()))
    return r if return_indices else r[0]


# ---- max unpooling: a scatter of each plane's values to their saved flat indices ----

def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = input.size()
    default_size = [(input_size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
                     for d in range(len(kernel_size))]
    if output_size is None:
        return default_size
    output_size = list(output_size)
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError("output_size should be a sequence containing "
                         f"{len(kernel_size)} or {len(kernel_size) + 2} elements, but it has a length of "
                         f"'{len(output_size)}'")
    for d in range(len(kernel_size)):
        min_size = default_size[d] - stride[d]
        max_size = default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and {max_size})')
    return output_size


def _max_unpool(input, indices, n, kernel_size, stride, padding, output_size):
    kernel_size = _ntuple_extra(kernel_size, n)
    stride = _ntuple_extra(stride, n) if stride is not None else kernel_size
    padding = _ntuple_extra(padding, n)
    out_sp = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    if indices.dtype != torch.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d Tensor, but got a tensor "
                           f"with {input.dim()} dimensions.")
    lead = list(input.shape[:-n])
    plane = 1
    for s in out_sp:
        plane *= s
    flat_in = input.reshape(lead + [-1])
    flat_ix = indices.reshape(lead + [-1])
    if flat_ix.numel() and (int(flat_ix.min()) < 0 or int(flat_ix.max()) >= plane):
        bad = int(flat_ix.max()) if int(flat_ix.max()) >= plane else int(flat_ix.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(s) for s in out_sp)}")
    out = torch.zeros(lead + [plane], dtype=input.dtype).scatter(-1, flat_ix, flat_in)
    return out.reshape(lead + list(out_sp))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size)


# ---- fractional max pooling (torch's interval rule; the windows gathered, then one max) ----

def _fractional_intervals(samples, in_size, out_size, pool, np_dtype):
    """torch's generate_intervals for every plane at once: samples (P,) -> starts (P, out_size)."""
    s = samples.astype(np_dtype)
    seq = _np.zeros((s.shape[0], out_size), dtype=_np.int64)
    if out_size > 1:
        alpha = np_dtype(in_size - pool) / np_dtype(out_size - 1)
        i = _np.arange(out_size - 1, dtype=np_dtype)
        seq[:, :-1] = (((i[None, :] + s[:, None]) * alpha).astype(_np.int64)
                       - (s * alpha).astype(_np.int64)[:, None])
    if out_size > 0:
        seq[:, -1] = in_size - pool
    return seq


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = _ntuple_extra(output_ratio, 2)
        if len(ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        output_size = [int(input.size(-2) * ratio[0]), int(input.size(-1) * ratio[1])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = torch.rand(n_batch, input.size(-3), 2, dtype=input.dtype, device=input.device)
    kh, kw = _ntuple_extra(kernel_size, 2)
    oh, ow = _ntuple_extra(output_size, 2)
    if input.dim() not in (3, 4):
        raise RuntimeError(f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    for i in range(input.dim() - 3, input.dim()):
        if input.size(i) <= 0:
            raise RuntimeError("fractional_max_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got {list(input.shape)} with dimension {i} being empty.")
    ih, iw = input.size(-2), input.size(-1)
    if oh + kh - 1 > ih:
        raise RuntimeError(f"fractional_max_pool2d(): pool height {kh} too large relative to input height {ih}")
    if ow + kw - 1 > iw:
        raise RuntimeError(f"fractional_max_pool2d(): pool width {kw} too large relative to input width {iw}")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if tuple(_random_samples.shape) != (n, c, 2):
        raise RuntimeError(f"Expect _random_samples to have shape ({n}, {c}, 2), but got "
                           f"{list(_random_samples.shape)}")
    np_dtype = _np.float64 if input.dtype == torch.float64 else _np.float32
    rs = _random_samples.detach().to(torch.float64).numpy().reshape(n * c, 2)
    seq_w = _fractional_intervals(rs[:, 0], iw, ow, kw, np_dtype)  # (P, ow)
    seq_h = _fractional_intervals(rs[:, 1], ih, oh, kh, np_dtype)  # (P, oh)
    dh = _np.arange(kh)
    dw = _np.arange(kw)
    rows = seq_h[:, :, None] + dh[None, None, :]                     # (P, oh, kh)
    cols = seq_w[:, :, None] + dw[None, None, :]                     # (P, ow, kw)
    flat = rows[:, :, None, :, None] * iw + cols[:, None, :, None, :]  # (P, oh, ow, kh, kw)
    idx = torch.from_numpy(_np.ascontiguousarray(flat.reshape(n, c, oh * ow * kh * kw)))
    vals = x.reshape(n, c, ih * iw).gather(-1, idx).reshape(n, c, oh, ow, kh * kw)
    win = idx.reshape(n, c, oh, ow, kh * kw)
    # torch's scan: a larger value or a NaN takes over (the first maximum, the last NaN)
    vd = vals.detach()
    isnan = vd.isnan()
    key = torch.where(isnan, torch.full_like(vd, float("inf")), vd)
    best = key.amax(-1, keepdim=True)
    pos = torch.arange(kh * kw).expand_as(vd)
    hit = (key == best)
    last_nan = torch.where(isnan, pos, torch.full_like(pos, -1)).amax(-1, keepdim=True)
    first_max = torch.where(hit, pos, torch.full_like(pos, kh * kw)).amin(-1, keepdim=True)
    arg = torch.where(last_nan >= 0, last_nan, first_max)
    out = vals.gather(-1, arg).squeeze(-1)
    indices = win.gather(-1, arg).squeeze(-1)
    if not batched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return out, indices


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    r = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                           _random_samples)
    return r if return_indices else r[0]


# ---- grid sampling ----

def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    mode_enum = {"bilinear": 0, "nearest": 1, "bicubic": 2}[mode]
    padding_enum = {"zeros": 0, "border": 1, "reflection": 2}[padding_mode]
    if align_corners is None:
        _warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                       "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                       "documentation of grid_sample for details.", stacklevel=2)
        align_corners = False
    return _grid_sampler(input, grid, mode_enum, padding_enum, align_corners)


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: grid_sampler_2d or _3d by the input's rank (the kernels check the
    arguments in torch's order and with its texts)."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    fn = _C_extra.grid_sampler_2d if input.dim() == 4 else _C_extra.grid_sampler_3d
    return fn(input, grid, interpolation_mode, padding_mode, align_corners)


def _linspace_from_neg_one(num_steps, align_corners, dtype):
    if num_steps <= 1:
        return torch.tensor(0.0, dtype=dtype)
    r = torch.linspace(-1, 1, num_steps, dtype=dtype)
    if not align_corners:
        r = r * ((num_steps - 1) / num_steps)
    return r


def _affine_grid_base(size, align_corners, dtype):
    """torch's make_base_grid_4D/5D: (N, [D,] H, W, nd + 1) of (x, y[, z], 1)."""
    sp = list(size[2:])
    nd = len(sp)
    base = torch.ones(sp + [nd + 1], dtype=dtype)
    # x varies along the last spatial dim, y along the one before, z the first
    for k in range(nd):
        lin = _linspace_from_neg_one(sp[nd - 1 - k], align_corners, dtype)
        shape = [1] * nd
        shape[nd - 1 - k] = sp[nd - 1 - k]
        base[..., k] = lin.reshape(shape).expand(sp) if lin.dim() else lin
    return base


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        _warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                       "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                       "documentation of grid_sample for details.", stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial_size) == 1:
        _warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                       "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                       "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    base = _affine_grid_base(size, align_corners, theta.dtype)
    nd = len(spatial_size)
    pts = 1
    for s in spatial_size:
        pts *= s
    grid = base.reshape(1, pts, nd + 1).expand(n, pts, nd + 1).bmm(theta.transpose(1, 2))
    return grid.reshape([n] + spatial_size + [nd])


# ---- embedding bag ----

def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if weight.dtype == torch.long and input.is_floating_point():
        _warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                       "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                       stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = torch.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        with torch.no_grad():
            torch.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True) is not supported by pyctorch yet")
    num_weights = weight.size(0)
    if padding_idx is not None:
        if padding_idx >= 0:
            if padding_idx >= num_weights:
                raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num_weights} through "
                                   f"{num_weights - 1}, but got {padding_idx}")
        else:
            if padding_idx < -num_weights:
                raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num_weights} through "
                                   f"{num_weights - 1}, but got {padding_idx}")
            padding_idx += num_weights
    else:
        padding_idx = -1
    ret = _C_extra._embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum, sparse, per_sample_weights,
                                  include_last_offset, padding_idx)
    return ret[0]


# ---- CTC loss ----

def _ctc_lengths(lengths, name):
    if isinstance(lengths, torch.Tensor):
        if lengths.is_floating_point() or lengths.dtype == torch.bool:
            raise RuntimeError(f"{name} must be integral")
        return lengths.reshape(-1).to(torch.int64)
    return torch.tensor(list(lengths), dtype=torch.int64)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    reduction_enum = _Reduction_extra.get_enum(reduction)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    il = _ctc_lengths(input_lengths, "input_lengths")
    tl = _ctc_lengths(target_lengths, "target_lengths")
    res = _C_extra._ctc_loss(lp, targets, il, tl, blank, zero_infinity)[0]
    if zero_infinity:
        res = torch.where(res == float("inf"), torch.zeros((), dtype=res.dtype), res)
    if reduction_enum == 1:  # mean
        return (res / tl.to(res.dtype).clamp_min(1)).mean()
    if reduction_enum == 2:
        return res.sum()
    return res if batched else res.squeeze(0)
