"""Backward formulas: compiling the PCT_GRAD lines of the op table, and the helpers they call.

Each op's formulas (``"input: grad * other"``, one per differentiable parameter) are compiled on
first use into one function ``fn(grads, results, needs, *params)`` that returns a gradient (or
None) per edge of the node: one per Tensor parameter, one per item of a Tensor[] parameter.
The C recorder saves only the parameters a formula names, and the outputs only when a formula
names ``result``; a tensor whose formulas read only its shape or dtype is saved as a stand-in of
that shape (one element, zero strides), so it is neither kept alive nor version-checked. Formulas call ordinary operators, so with ``create_graph=True`` the backward
is itself recorded and double backward works for every op whose formula is differentiable.
"""
import ast
import keyword
import re
import math
import traceback
import warnings

import pyctorch as torch
from pyctorch import _C
from . import _forward_ad

__all__ = ["compile_op"]


# ---- helpers the formulas use -------------------------------------------------------------------

def _expandable(shape, to):
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True


def maybe_multiply(t, s):
    """t * s, or t itself when s is the number 1: no pass over a gradient for the default beta and alpha (torch's
    maybe_multiply)."""
    if not isinstance(s, torch.Tensor) and s == 1:
        return t
    return t * s


def _column_major(m):
    return m.dim() == 2 and m.stride(0) == 1 and m.stride(1) == max(m.shape[0], 1) and m.shape[1] > 1


def mm_mat2_backward(grad, mat1, mat2, alpha):
    """The gradient of mat2 in alpha * mat1 @ mat2, mat1^H @ grad, laid out like mat2: a column-major mat2 (the
    transposed weight of a linear layer) gets it as (grad^H @ mat1)^H, whose transpose is contiguous, so that the
    weight's gradient needs no copy to follow the weight's layout when it is accumulated (torch computes it so)."""
    if _column_major(mat2):
        if mat1.is_complex() or grad.is_complex():
            r = (grad.mT.conj() @ mat1).mT.conj()
        else:
            r = (grad.mT @ mat1).mT
    else:
        r = (mat1.mT.conj() if mat1.is_complex() else mat1.mT) @ grad
    return maybe_multiply(r, alpha)


def sum_to(g, shape):
    """Sums a broadcast gradient back to `shape` (torch's at::sum_to)."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    dims = list(range(lead))
    dims += [lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1]
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g


def sum_to_checked(g, shape):
    """sum_to, or None when g's shape cannot have been broadcast from `shape` (the engine raises)."""
    if not _expandable(tuple(shape), tuple(g.shape)):
        return None
    return sum_to(g, shape)


def _norm_dims(dim, ndim):
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    if len(dim) == 0:
        return list(range(ndim))
    return sorted(d % ndim if ndim else 0 for d in dim)


def unreduce(g, input, dim=None, keepdim=False):
    """Brings the gradient of a reduction over `dim` back to input's shape (broadcasting view)."""
    if input.ndim == 0:
        return g.reshape(())
    if not keepdim:
        for d in _norm_dims(dim, input.ndim):
            g = g.unsqueeze(d)
    return g.expand(input.shape)


def reduced_count(input, dim):
    n = 1
    for d in _norm_dims(dim, input.ndim):
        n *= input.shape[d] if input.ndim else 1
    return n


def select_reduced(g, input, indices, dim, keepdim):
    """Gradient of min/max/median/mode/kthvalue along dim: scatter into the picked positions."""
    if input.ndim == 0:
        return g.clone()
    if not keepdim:
        g = g.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return torch.zeros_like(input).scatter(dim, indices, g)


def evenly_distribute(g, input, value):
    """Gradient of full max()/min()/median(): split evenly among the elements that attain it; a NaN
    result is attained by every NaN (torch's evenly_distribute_backward)."""
    mask = input.isnan() if bool(value.isnan()) else input == value
    return torch.where(mask, g / mask.sum(), torch.zeros_like(input))


def amax_backward(g, input, result, dim, keepdim):
    r = unreduce(result, input, dim, keepdim)
    g = unreduce(g, input, dim, keepdim)
    mask = (input == r)
    count = unreduce(mask.sum(_norm_dims(dim, input.ndim) if input.ndim else None, keepdim=True)
                     if input.ndim else mask.sum(), input, dim, True)
    return torch.where(mask, g / count, torch.zeros_like(input))


def var_backward(g, input, dim, correction, keepdim):
    n = reduced_count(input, dim)
    c = 1 if correction is None else correction
    mean = input.mean(_norm_dims(dim, input.ndim), keepdim=True) if input.ndim else input
    g = unreduce(g, input, dim, keepdim)
    dof = n - c
    if dim is None and dof <= 0:
        # torch: 2 / (n - correction) is infinite; at the mean, infinity * 0 is NaN
        return g * torch.where(input == mean, torch.full_like(input, math.nan), torch.full_like(input, math.inf))
    scale = 2.0 / dof if dof != 0 else math.inf
    return g * scale * (input - mean)


def std_backward(g, input, result, dim, correction, keepdim):
    # zero where the deviation is zero (torch masks grad / (2 * std) there); the divisor is made
    # safe first so that double backward does not meet 0 * inf either
    zero = result == 0
    safe = torch.where(zero, torch.ones_like(result), result)
    gv = torch.where(zero, torch.zeros_like(result), g / (2 * safe))
    return var_backward(gv, input, dim, correction, keepdim)


def norm_backward(g, input, result, p, dim, keepdim):
    """torch's linalg_vector_norm_backward: no gradient for p=0, subgradient 0 at zeros."""
    p = 2.0 if p is None else float(p)
    if p == 0.0:
        return None
    r = unreduce(result, input, dim, keepdim)
    g = unreduce(g, input, dim, keepdim)
    if p == 1.0:
        return g * input.sign()
    zero = r == 0
    safe = torch.where(zero, torch.ones_like(r), r)
    if p == 2.0:
        return torch.where(zero, torch.zeros_like(input), g * input / safe)
    if math.isinf(p):
        mask = (input.abs() == r)
        count = mask.sum(_norm_dims(dim, input.ndim), keepdim=True) if input.ndim else mask.sum()
        return torch.where(mask, g * input.sign() / count, torch.zeros_like(input))
    if p < 1.0:
        nz = input != 0
        a = torch.where(nz, input.abs(), torch.ones_like(input))
        scaled = torch.where(nz, input.sign() * a.pow(p - 1), torch.zeros_like(input))
        return scaled * g * r.pow(1 - p)
    scaled = input.sign() * input.abs().pow(p - 1) if p < 2.0 else input * input.abs().pow(p - 2)
    return torch.where(zero, torch.zeros_like(input), scaled * (g / safe.pow(p - 1)))


def softmax_backward(g, result, dim):
    return result * (g - (g * result).sum(dim, keepdim=True))


def log_softmax_backward(g, result, dim):
    return g - result.exp() * g.sum(dim, keepdim=True)


def logsumexp_backward(g, input, result, dim, keepdim):
    return unreduce(g, input, dim, keepdim) * (input - unreduce(result, input, dim, keepdim)).exp()


def prod_backward(g, input, result, dim=None, keepdim=False):
    if input.ndim == 0:
        return g
    if dim is None:
        flat = input.reshape(-1)
        return prod_backward(g.reshape(1), flat, result.reshape(1), 0, True).reshape(input.shape)
    g = unreduce(g, input, dim, keepdim)
    # exclusive products from both sides: correct with zeros in the input
    n = input.shape[dim]
    ones = torch.ones_like(input.narrow(dim, 0, 1))
    left = torch.cat([ones, input.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    right = torch.cat([input.narrow(dim, 1, n - 1), ones], dim).flip(dim).cumprod(dim).flip(dim)
    return g * left * right


def cumsum_backward(g, dim):
    return g.flip(dim).cumsum(dim).flip(dim)


def cumprod_backward(g, input, result, dim):
    if input.numel() == 0 or input.ndim == 0:
        return g
    n = input.shape[dim]
    out = []
    # each input element's gradient: sum over later positions of grad * product without it
    for i in range(n):
        xi = input.narrow(dim, i, 1)
        before = result.narrow(dim, i - 1, 1) if i > 0 else torch.ones_like(xi)
        tail = input.narrow(dim, i + 1, n - i - 1)
        ones = torch.ones_like(xi)
        partial = torch.cat([ones, tail], dim).cumprod(dim) * before
        out.append((g.narrow(dim, i, n - i) * partial).sum(dim, keepdim=True))
    return torch.cat(out, dim)


def logcumsumexp_backward(g, input, result, dim):
    # d/dx_j = sum over i >= j of g_i * exp(x_j - r_i)
    if input.ndim == 0:
        return g
    n = input.shape[dim]
    parts = []
    for j in range(n):
        xj = input.narrow(dim, j, 1)
        gi = g.narrow(dim, j, n - j)
        ri = result.narrow(dim, j, n - j)
        parts.append((gi * (xj - ri).exp()).sum(dim, keepdim=True))
    return torch.cat(parts, dim)


def cummaxmin_backward(g, input, indices, dim):
    if input.ndim == 0:
        return g
    return torch.zeros_like(input).scatter_add(dim, indices, g)


def sort_backward(g, input, indices, dim):
    if input.ndim == 0:
        return g
    return torch.zeros_like(input).scatter(dim, indices, g)


def topk_backward(g, input, indices, dim):
    if input.ndim == 0:
        return g
    return torch.zeros_like(input).scatter(dim, indices, g)


def cat_backward(g, tensors, needs, dim):
    sizes = [t.shape for t in tensors]
    ref = next((s for s in sizes if len(s) != 1 or s[0] != 0), None)
    if ref is None:
        return [None if not need else torch.zeros(s, dtype=g.dtype, device=g.device) for s, need in zip(sizes, needs)]
    d = dim % len(ref)
    out, at = [], 0
    for s, need in zip(sizes, needs):
        if len(s) == 1 and s[0] == 0 and len(ref) != 1:
            out.append(torch.zeros(s, dtype=g.dtype, device=g.device) if need else None)
            continue
        out.append(g.narrow(d, at, s[d]) if need else None)
        at += s[d]
    return out


def stack_backward(g, n, dim):
    return list(g.unbind(dim if dim >= 0 else dim + g.ndim))


def unbind_backward(grads, input, dim):
    return torch.stack(list(grads), dim)


def split_backward(grads, input, dim):
    return torch.cat(list(grads), dim % max(input.ndim, 1))


def expand_backward(g, input):
    return sum_to(g, input.shape)


def permute_backward(g, dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d % len(dims)] = i
    return g.permute(inv)


def movedim_backward(g, source, destination):
    return g.movedim(destination, source)


def squeeze_backward(g, input):
    return g.reshape(input.shape)


def _pad_along(g, dim, before, after, size):
    """g with zeros put before and after it along dim (out of place, so double backward sees it)."""
    parts = []
    if before:
        s = list(g.shape)
        s[dim] = before
        parts.append(torch.zeros(s, dtype=g.dtype, device=g.device))
    parts.append(g)
    if after:
        s = list(g.shape)
        s[dim] = after
        parts.append(torch.zeros(s, dtype=g.dtype, device=g.device))
    return torch.cat(parts, dim) if len(parts) > 1 else g


def select_backward(g, input, dim, index):
    dim = dim % input.ndim
    n = input.shape[dim]
    index = index % n
    return _pad_along(g.unsqueeze(dim), dim, index, n - index - 1, n)


def narrow_backward(g, input, dim, start, length):
    dim = dim % input.ndim
    n = input.shape[dim]
    start = start % n if start < 0 else start
    return _pad_along(g, dim, start, n - start - length, n)


def diagonal_backward(g, input, offset, dim1, dim2):
    nd = input.ndim
    d1, d2 = dim1 % nd, dim2 % nd
    r = torch.diag_embed(g, offset, d1, d2)
    for d in (d1, d2):
        have, want = r.shape[d], input.shape[d]
        if have > want:  # diag_embed makes the square that holds the diagonal: cut the zero rows
            r = r.narrow(d, 0, want)
        elif have < want:
            r = _pad_along(r, d, 0, want - have, want)
    return r


def unfold_backward(g, input, dimension, size, step):
    if input.ndim == 0:
        return g.reshape(())
    r = torch.zeros_like(input)
    n = g.shape[dimension] if g.ndim else 1
    for i in range(n):
        piece = g.select(dimension, i).movedim(-1, dimension)
        r.narrow(dimension, i * step, size).add_(piece)
    return r


def as_strided_backward(g, input, size, stride, storage_offset):
    off = input.storage_offset() if storage_offset is None else storage_offset
    extent = _extent(input.shape, input.stride(), input.storage_offset())
    extent = max(extent, _extent(size, stride, off))
    lo = min(input.storage_offset(), off)
    flat = torch.zeros(extent - lo, dtype=g.dtype, device=g.device)
    flat.as_strided(size, stride, off - lo).add_(g)
    return flat.as_strided(input.shape, input.stride(), input.storage_offset() - lo).clone()


def _extent(size, stride, offset):
    if any(s == 0 for s in size):
        return offset
    return offset + 1 + sum((s - 1) * st for s, st in zip(size, stride))


def index_select_backward(g, input, dim, index):
    return torch.zeros_like(input).index_add(dim, index, g)


def gather_backward(g, input, dim, index):
    return torch.zeros_like(input).scatter_add(dim, index, g)


def masked_select_backward(g, input, mask):
    r = torch.zeros(torch.broadcast_shapes(input.shape, mask.shape), dtype=g.dtype, device=g.device)
    return sum_to(r.masked_scatter(mask.expand(r.shape), g), input.shape)


def take_backward(g, input, index):
    return torch.zeros_like(input).put(index, g, accumulate=True)


def repeat_backward(g, input, repeats):
    lead = len(repeats) - input.ndim
    shape = list(input.shape)
    if lead:
        g = g.sum(list(range(lead)))
    split = []
    for r, s in zip(repeats[lead:], shape):
        split += [r, s]
    g = g.reshape(split) if split else g
    return g.sum(list(range(0, 2 * len(shape), 2))) if shape else g


def roll_backward(g, shifts, dims):
    if not dims:
        return g.roll([-s for s in shifts])
    return g.roll([-s for s in shifts], dims)


def _is_constant_zero(x):
    if isinstance(x, torch.Tensor):
        return x.ndim == 0 and not x.requires_grad and x.item() == 0
    return x == 0


def pow_backward_self(g, input, exponent):
    if _is_constant_zero(exponent):  # a Python number arrives as a 0-d tensor
        return torch.zeros_like(input)
    if isinstance(exponent, torch.Tensor) and (exponent.ndim > 0 or exponent.requires_grad):
        return torch.where(exponent == 0, torch.zeros_like(g), g * exponent * input.pow(exponent - 1))
    return g * exponent * input.pow(exponent - 1)  # a constant known nonzero above: no mask needed


def pow_backward_exponent(g, input, result, exponent=None):
    """d(input ** exponent)/d exponent: result * log(input); 0 where input == 0 and exponent >= 0 (torch)."""
    zero = input == 0
    if exponent is not None:
        zero = zero & (exponent >= 0)
    return g * torch.where(zero, torch.zeros_like(result), result * input.log())


def float_power_base(input, exponent):
    """float_power computes in float64, or complex128 when either operand is complex: the base its formulas
    differentiate (a complex base keeps its imaginary part)."""
    complex_ = any(isinstance(v, torch.Tensor) and v.dtype.is_complex or isinstance(v, complex)
                   for v in (input, exponent))
    dtype = torch.complex128 if complex_ else torch.float64
    return input.to(dtype) if isinstance(input, torch.Tensor) else torch.tensor(input, dtype=dtype)


def clamp_backward(g, input, min, max):
    mask = torch.ones_like(input, dtype=torch.bool)
    if min is not None:
        mask = mask & (input >= min)
    if max is not None:
        mask = mask & (input <= max)
    return torch.where(mask, g, torch.zeros_like(g))


def div_mode_grad(g, other, rounding_mode):
    return g / other if rounding_mode is None else torch.zeros_like(g)


def div_mode_grad_other(g, input, other, rounding_mode):
    return -g * input / (other * other) if rounding_mode is None else torch.zeros_like(g)


def copysign_backward(g, input, result):
    zero = input == 0
    ratio = result / torch.where(zero, torch.ones_like(input), input)
    return g * torch.where(zero, torch.zeros_like(ratio), ratio)


def xlogy_dx(input, other):
    """d xlogy(input, other)/d input: log(other), 0 where input == 0 and other <= 0 (torch)."""
    if not isinstance(other, torch.Tensor):
        other = torch.tensor(other, dtype=torch.float64)
    return torch.where((input == 0) & (other <= 0), torch.zeros_like(other), other.log())


def fminmax_grad(g, input, other, op, which):
    """fmin/fmax: input wins where it compares favourably or other is NaN; no tie splitting (torch)."""
    wins = ((input >= other) if op == "max" else (input <= other)) | other.isnan()
    return torch.where(wins if which == 0 else ~wins, g, torch.zeros_like(g))


def minmax_grad(g, a, b, op):
    """maximum/minimum: the gradient goes to the winner, half to each on ties; a NaN on either
    side (the result is NaN) passes the gradient to both, as torch does."""
    loses = (a < b) if op == "max" else (a > b)
    return torch.where(loses, torch.zeros_like(g), torch.where(a == b, g / 2, g))


def logit_backward(g, input, eps):
    if eps is None:  # NaN outside [0, 1], like the forward (torch)
        outside = (input < 0) | (input > 1)
        return torch.where(outside, torch.full_like(input, math.nan), g / (input * (1 - input)))
    lo, hi = eps, 1 - eps
    inside = (input >= lo) & (input <= hi)
    return torch.where(inside, g / (input * (1 - input)), torch.zeros_like(g))


def correction_of(unbiased, correction):
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


def evenly_distribute_median(g, input, value):
    """median()/nanmedian() over all elements: torch splits the gradient evenly among the elements
    equal to the median (evenly_distribute_backward), as for max()/min()."""
    return evenly_distribute(g, input, value)


def nanmean_backward(g, input, dim, keepdim):
    """nansum(input) / count of non-NaN: like torch, an all-NaN slice gets NaN gradients (g / 0 * 0)."""
    keep = ~input.isnan()
    count = keep.sum(_norm_dims(dim, input.ndim), keepdim=True) if input.ndim else keep.sum()
    return unreduce(g, input, dim, keepdim) / count * keep


def trace_backward(g, input):
    r = torch.zeros_like(input)
    r.diagonal().fill_(1)
    return r * g


def fft_r2c_backward(g, dim, normalization, onesided, input):
    """The adjoint of _fft_r2c: the real part of the inverse c2c transform of the gradient, after the onesided half is
    put back in a zero spectrum of the input's size (its other entries got no gradient)."""
    if onesided:
        last = dim[-1] % input.ndim
        full = torch.zeros(input.shape[:last] + (input.shape[last],) + input.shape[last + 1:], dtype=g.dtype,
                           device=g.device)
        full.narrow(last, 0, g.shape[last]).copy_(g)
        g = full
    return torch.real(torch._fft_c2c(g, dim, normalization, False))


def fft_c2r_backward(g, dim, normalization):
    """The adjoint of _fft_c2r: the onesided r2c transform of the gradient, with the entries that stand for two
    conjugate points of the full spectrum (all but the first and, for an even length, the last) counted twice."""
    r = torch._fft_r2c(g, dim, normalization, True)
    last = dim[-1] % g.ndim
    twice = g.shape[last] - r.shape[last]
    if twice <= 0:
        return r
    w = torch.ones(r.shape[last], dtype=g.dtype, device=g.device)
    w[1:1 + twice] = 2
    shape = [1] * (r.ndim + 1)
    shape[last] = r.shape[last]
    # scaled through the real view: autograd records no complex product yet (Note [Complex outputs in autograd])
    return torch.view_as_complex(torch.view_as_real(r) * w.reshape(shape))


def recompute_vjp(fn, args, needs, grad):
    """Gradients of fn(*args) by recording a differentiable decomposition of it again."""
    tensors = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    create = torch.is_grad_enabled()
    with torch.enable_grad():
        live = list(args)
        for i in tensors:
            if not create or not live[i].requires_grad:
                live[i] = args[i].detach().requires_grad_(True)
        out = fn(*live)
        want = [i for k, i in enumerate(tensors) if needs[k]]
        gs = torch.autograd.grad((out,), [live[i] for i in want], (grad,), create_graph=create, allow_unused=True)
    res = [None] * len(args)
    for i, gi in zip(want, gs):
        res[i] = gi
    return [res[i] for i in tensors]


def index_source_grad(g, dim, index, source):
    r = g.index_select(dim, index)
    return r.reshape(source.shape) if source.ndim == 0 else r


def masked_scatter_source_grad(g, mask, source):
    picked = g.masked_select(mask)
    r = torch.zeros(source.numel(), dtype=g.dtype, device=g.device)
    r[:picked.numel()] = picked
    return r.reshape(source.shape)


def _index_key(indices):
    return tuple(indices) if isinstance(indices, (list, tuple)) else (indices,)


def index_put_zero(g, indices):
    r = g.clone()
    r[_index_key(indices)] = 0
    return r


def index_get(g, indices):
    return g[_index_key(indices)]


def _stack_like_backward(g, tensors, needs, dim, atleast):
    shaped = [atleast(t) for t in tensors]
    parts = cat_backward(g, shaped, needs, dim)
    return [p.reshape(t.shape) if p is not None else None for p, t in zip(parts, tensors)]


def hstack_backward(g, tensors, needs):
    dim = 0 if all(t.ndim <= 1 for t in tensors) else 1
    return _stack_like_backward(g, tensors, needs, dim, lambda t: t.reshape(1) if t.ndim == 0 else t)


def vstack_backward(g, tensors, needs):
    return _stack_like_backward(g, tensors, needs, 0, lambda t: t.reshape(1, -1) if t.ndim < 2 else t)


def dstack_backward(g, tensors, needs):
    def at3(t):
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        if t.ndim == 2:
            return t.unsqueeze(-1)
        return t
    return _stack_like_backward(g, tensors, needs, 2, at3)


def tile_repeats(input, dims):
    dims = list(dims)
    if len(dims) < input.ndim:
        dims = [1] * (input.ndim - len(dims)) + dims
    return dims


def repeat_interleave_backward(g, input, repeats, dim):
    if dim is None:
        flat = input.reshape(-1)
        return repeat_interleave_backward(g, flat, repeats, 0).reshape(input.shape)
    dim = dim % max(input.ndim, 1)
    n = input.shape[dim] if input.ndim else 1
    if isinstance(repeats, int):
        reps = torch.full((n,), repeats, dtype=torch.int64, device=g.device)
    else:
        reps = repeats.expand(n) if repeats.numel() == 1 else repeats
    idx = torch.arange(n, device=g.device).repeat_interleave(reps)
    return torch.zeros_like(input).index_add(dim, idx, g)


def diag_backward(g, input, diagonal):
    if input.ndim == 1:
        return g.diagonal(diagonal)
    return diagonal_backward(g, input, diagonal, 0, 1)


def scatter_reduce_backward(g, input, dim, index, src, reduce, include_self, result, which):
    """torch's scatter_reduce_backward: the gradient of input (which=0) or of src (which=1)."""
    zeros = torch.zeros_like
    if reduce == "sum":
        gi, gs = (g, None) if which == 0 else (None, g.gather(dim, index))
    elif reduce == "prod":
        if which == 0:
            masked_input = input.masked_fill(input == 0, 1.0)
            masked_result = masked_input.scatter_reduce(dim, index, src, "prod", include_self=include_self)
            gi = g * masked_result / masked_input
        else:
            src_zero = src == 0
            nzeros = zeros(input).scatter_add(dim, index, src_zero.to(input.dtype)).gather(dim, index)
            single = src_zero & (nzeros == 1)
            masked_src = src.masked_fill(single, 1.0)
            masked_src_result = input.scatter_reduce(dim, index, masked_src, "prod", include_self=include_self)
            gs = torch.where(single, (g * masked_src_result).gather(dim, index),
                             (g * result).gather(dim, index) / src.masked_fill(src_zero, 1.0))
    elif reduce == "mean":
        n = torch.ones_like(g) if include_self else zeros(g)
        n = n.scatter_add(dim, index, torch.ones_like(src))
        n = n.masked_fill(n == 0, 1.0)
        if which == 0:
            gi = g / n
        else:
            gs = g.gather(dim, index) / n.gather(dim, index)
    elif reduce in ("amax", "amin"):
        value = result.gather(dim, index)
        input_is_result = (input == result).to(input.dtype)
        src_is_result = (src == value).to(input.dtype)
        count = input_is_result.scatter_add(dim, index, src_is_result)
        distributed = g / count
        if which == 0:
            gi = input_is_result * distributed
        else:
            gs = src_is_result * distributed.gather(dim, index)
    else:
        raise NotImplementedError(f"the derivative of scatter_reduce with reduce={reduce!r} is not implemented")
    if which == 1:
        return gs
    if not include_self:
        gi = gi.scatter(dim, index, 0.0)
    return gi


def _index_accumulate_differentiable(shape, key, g):
    from .function import Function

    class IndexAccumulate(Function):
        @staticmethod
        def forward(ctx, g):
            r = torch.zeros(shape, dtype=g.dtype, device=g.device)
            _C._index_accumulate(r, key, g)
            return r

        @staticmethod
        def backward(ctx, gg):
            return gg[key]
    return IndexAccumulate.apply(g)


def getitem_backward(grads, results, needs, shape, key):
    """x[key]'s backward: the gradient added into zeros at key (repeated indices accumulate)."""
    g = grads[0]
    if torch.is_grad_enabled() and g.requires_grad:
        r = _index_accumulate_differentiable(shape, key, g)
    else:
        r = torch.zeros(shape, dtype=g.dtype, device=g.device)
        _C._index_accumulate(r, key, g)
    if _forward_ad._levels:  # the accumulation is no table op: forward AD over this backward needs its tangent
        _forward_ad.propagate(r, lambda t: getitem_backward((t,), None, None, shape, key)[0], [g])
    return (r,)


def setitem_backward(grads, results, needs, key, value_shape):
    """x[key] = v: x's gradient is zero where it was overwritten; v's is the gradient there."""
    g = grads[0]
    gx = None
    if needs[0]:
        gx = g.clone()
        gx[key] = 0
    gv = None
    if needs[1]:
        gv = sum_to(g[key], value_shape)
    return (gx, gv)


# ---- nodes made by the C recorder for in-place ops on views --------------------------------------

def copy_slices_backward(grads, results, needs, base_geo, view_geo, fn):
    """CopySlices: the base's gradient, with the view's slice routed through the in-place op."""
    grad = grads[0]
    (bsize, bstride, boff), (vsize, vstride, voff) = base_geo, view_geo
    lo = min(boff, voff)
    extent = max(_extent(bsize, bstride, boff), _extent(vsize, vstride, voff)) - lo
    flat = torch.zeros(extent, dtype=grad.dtype, device=grad.device)
    base = flat.as_strided(bsize, bstride, boff - lo)
    base.copy_(grad)
    piece = flat.as_strided(vsize, vstride, voff - lo)
    res = fn._apply((piece.clone(),))
    res = tuple(res)
    if res and res[0] is not None:
        piece.copy_(res[0])
    else:
        piece.zero_()
    return (base,) + res[1:]


def as_strided_view_backward(grads, results, needs, base_geo, view_geo):
    grad = grads[0]
    (bsize, bstride, boff), (vsize, vstride, voff) = base_geo, view_geo
    lo = min(boff, voff)
    extent = max(_extent(bsize, bstride, boff), _extent(vsize, vstride, voff)) - lo
    flat = torch.zeros(extent, dtype=grad.dtype, device=grad.device)
    flat.as_strided(vsize, vstride, voff - lo).add_(grad)
    return (flat.as_strided(bsize, bstride, boff - lo),)


# ---- anomaly mode ------------------------------------------------------------------------------

def creation_trace():
    return "".join(traceback.format_stack()[:-1])


def anomaly_note(name, trace):
    warnings.warn(f"Error detected in {name}. Traceback of forward call that caused the error:\n{trace}",
                  stacklevel=2)


# ---- compiling the table ------------------------------------------------------------------------

# ---- second derivatives of the fused activations (the backward kernels' own formulas) ----

def gelu_second_derivative(x, approximate):
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        t = (beta * (x + kappa * x * x * x)).tanh()
        du = beta * (1 + 3 * kappa * x * x)
        return (1 - t * t) * (du - x * t * du * du + 3 * beta * kappa * x * x)
    return (x * x * -0.5).exp() * (1.0 / math.sqrt(2 * math.pi)) * (2 - x * x)


def silu_backward_complex(grad, input):
    """silu's derivative for complex inputs (the silu_backward kernel is real only), reached only by silu_ (torch's
    autograd refuses the out-of-place form's complex output): grad * s (1 + x (1 - s)) with s = sigmoid(x), as
    torch's, which does not conjugate it."""
    s = input.sigmoid()
    return grad * (s * (1 + input * (1 - s)))


def silu_second_derivative(x):
    s = x.sigmoid()
    return s * (1 - s) * (2 + x * (1 - 2 * s))


def softplus_second_derivative(x, beta, threshold):
    s = (x * beta).sigmoid()
    return torch.where(x * beta > threshold, torch.zeros_like(x), s * (1 - s) * beta)


def _names(expr):
    return {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}


# Helpers that read only the shape/dtype of some arguments (argument positions).
_META_ARGS = {
    "unreduce": {1}, "reduced_count": {0}, "squeeze_backward": {1}, "select_backward": {1},
    "narrow_backward": {1}, "diagonal_backward": {1}, "unfold_backward": {1}, "index_select_backward": {1},
    "gather_backward": {1}, "take_backward": {1}, "repeat_backward": {1}, "cat_backward": {1},
    "expand_backward": {1}, "split_backward": {1}, "unbind_backward": {1}, "select_reduced": {1},
    "sort_backward": {1}, "topk_backward": {1}, "cummaxmin_backward": {1}, "tile_repeats": {0},
    "trace_backward": {1}, "fft_r2c_backward": {4}, "masked_select_backward": {1}, "repeat_interleave_backward": {1},
    "zeros_like": {0}, "sum_to": set(), "hstack_backward": {1}, "vstack_backward": {1}, "dstack_backward": {1},
}
_META_ATTRS = {"shape", "dtype", "ndim", "device"}
_META_METHODS = {"size", "dim", "numel"}


def _meta_only(exprs, name):
    """True when every use of `name` in the formulas reads only its metadata (shape, dtype):
    then the recorder saves a stand-in of that shape instead of the tensor (as torch saves sizes)."""
    for e in exprs:
        tree = ast.parse(e, mode="eval")
        parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and node.id == name):
                continue
            up = parents.get(node)
            if isinstance(up, ast.Attribute) and up.attr in _META_ATTRS:
                continue
            if isinstance(up, ast.Attribute) and up.attr in _META_METHODS and isinstance(parents.get(up), ast.Call):
                continue
            if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and node in up.args and \
                    up.args.index(node) in _META_ARGS.get(up.func.id, ()):
                continue
            return False
    return True


def derivative_not_implemented(what):
    """The formula of a parameter torch has no derivative for (zeta's and igamma's first argument): torch's error."""
    raise NotImplementedError(f"the derivative for '{what}' is not implemented.")


def _namespace():
    ns = {k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")}
    # table ops with a leading underscore (_softmax_backward_data, ...) are not star-exported, nor torch.special's
    # special_<name> ops (the pyctorch namespace leaves them out, as torch's does)
    ns.update({k: getattr(_C, k) for k in dir(_C) if (k.startswith("_") or k.startswith("special_"))
               and not k.startswith("__") and k not in ns})
    ns.update({k: v for k, v in globals().items() if not k.startswith("_") and callable(v)})
    # complex variants of the underscored table ops the formulas call (Note [Complex formula variants])
    ns["_pad_backward_complex"] = _pad_backward_complex
    ns["torch"] = torch
    ns["math"] = math
    ns["_any"] = any
    ns["_conj"] = _conj
    return ns


_NS = None


def _conj(x):
    """x.conj() of the complex variant of a formula (Note [Complex formula variants]): tensors and Python numbers."""
    if isinstance(x, torch.Tensor):
        return x.conj()
    return x.conjugate() if isinstance(x, complex) else x


class _Variant(ast.NodeTransformer):
    """Rewrites a formula for one variant: the real one drops every `.conj()`, the complex one calls `_conj(...)`
    instead (Python scalars such as alpha have no .conj()) and `<helper>_complex` where such a helper exists."""

    def __init__(self, is_complex):
        self.is_complex = is_complex
        self.changed = False

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "conj" and not node.args and not node.keywords:
            self.changed = True
            return f.value if not self.is_complex else ast.Call(ast.Name("_conj", ast.Load()), [f.value], [])
        if self.is_complex and isinstance(f, ast.Name) and f.id + "_complex" in _NS:
            self.changed = True
            node.func = ast.Name(f.id + "_complex", ast.Load())
        return node


def _variant(expr, is_complex):
    """(expr for the variant, whether it differs from the formula as written)."""
    global _NS
    if _NS is None:
        _NS = _namespace()
    v = _Variant(is_complex)
    tree = ast.fix_missing_locations(v.visit(ast.parse(expr, mode="eval")))
    return (ast.unparse(tree) if v.changed else expr), v.changed


# Note [Complex formula variants]: a formula is written once, in torch's convention for complex tensors (the
# conjugate Wirtinger derivative: `grad * other.conj()` for mul), and compiled twice. The real variant drops every
# `.conj()` (the identity on real tensors), so real gradients run the very code, and get the very values, they had
# before complex autograd; the complex variant keeps the conjugates and calls `<helper>_complex` for the helpers
# whose complex derivative differs in more than conjugates (pow, sgn, acosh). The recorder picks the complex
# variant for a node when one of its tensor inputs or outputs is complex (record.c). A real input of an op with a
# complex result gets a complex gradient from the formula and the engine keeps its real part (the cast of
# engine.c's validate), which is torch's handle_r_to_c.

def compile_op(node_name, params, codes, formulas):
    """One backward function for an op: see the module docstring. None: not differentiable.
    Returns (fn, saved, results read, meta, users, fn for complex tensors: Note [Complex formula variants], the
    parameters whose formulas read an output)."""
    global _NS
    if _NS is None:
        _NS = _namespace()
    if list(formulas) == ["non_differentiable"]:
        return None
    exprs = {}
    groups = []  # (targets, expr): one call gives the gradients of several parameters
    for f in formulas:
        target, sep, expr = f.partition(": ")
        targets = [t.strip() for t in target.split(",")]
        if not sep or any(t not in params for t in targets):
            raise RuntimeError(f"bad derivative formula for {node_name}: {f!r}")
        if len(targets) == 1:
            exprs[targets[0]] = expr.strip()
        else:
            groups.append((targets, " ".join(expr.split())))
    used = set()
    for e in list(exprs.values()) + [e for _, e in groups]:
        used |= _names(e)
    arg = {p: (p + "_" if keyword.iskeyword(p) else p) for p in params}
    for p in list(exprs):
        exprs[p] = " ".join(exprs[p].split())
    single_exprs = dict(exprs)
    lines = [f"def backward(grads, results, needs, {', '.join(arg[p] for p in params)}):"]
    if "grad" in used:
        lines.append("    grad = grads[0]")
    if "result" in used:
        lines.append("    result = results[0]")
    lines.append("    out = []")
    lines.append("    k = 0")
    ntensor = sum(c == "T" for c in codes)
    nlists = sum(c == "L" for c in codes)
    # Note [Grouped formulas]: "input, weight, bias: f(...)" computes the three gradients in one
    # call (a fused backward kernel); inside it `output_mask` lists which of them are needed, in order.
    edge = {}
    for p, c in zip(params, codes):
        if c == "T":
            edge[p] = len(edge)
        elif c == "L" and groups:
            raise RuntimeError(f"{node_name}: grouped formulas need Tensor parameters only")
    for gi, (targets, e) in enumerate(groups):
        if any(t not in edge for t in targets):
            raise RuntimeError(f"{node_name}: grouped formula targets must be Tensor parameters")
        lines.append(f"    output_mask = [{', '.join(f'not not needs[{edge[t]}]' for t in targets)}]")
        lines.append(f"    group{gi}_ = tuple({e}) if _any(output_mask) else ({'None, ' * len(targets)})")
        for j, t in enumerate(targets):
            exprs[t] = f"group{gi}_[{j}]"
    for p, c in zip(params, codes):
        if c == "T":
            e = exprs.get(p)
            lines.append(f"    out.append(({e}) if needs[k] else None)" if e else "    out.append(None)")
            lines.append("    k += 1")
        elif c == "L":
            if nlists != 1:
                raise RuntimeError(f"{node_name}: one Tensor[] parameter per op is supported")
            lines.append(f"    n_ = len(needs) - {ntensor}")
            e = exprs.get(p)
            if e:
                lines.append(f"    out.extend(({e}) if _any(needs[k:k + n_]) else [None] * n_)")
            else:
                lines.append("    out.extend([None] * n_)")
            lines.append("    k += n_")
    lines.append("    return out")
    src = "\n".join(lines)
    fn = _compile_variant(node_name, src, False)[0]
    fn_complex, changed = _compile_variant(node_name, src, True)
    if not changed:
        fn_complex = fn
    saved = tuple(i for i, p in enumerate(params) if codes[i] != "X" and p in used)
    every = [e for e in exprs.values() if not e.startswith("group")] + [e for _, e in groups]
    meta = tuple(i for i in saved if codes[i] in "TL" and _meta_only(every, params[i]))
    # users[k]: the parameters (a bit per position) whose gradient formula reads saved[k]; the
    # recorder saves a tensor only when one of them needs a gradient (torch saves `other` of
    # a * b only when a requires grad)
    readers = [(single, _names(e)) for single, e in single_exprs.items()]
    readers += [(t, _names(e)) for targets, e in groups for t in targets]
    users = tuple(sum(1 << params.index(t) for t, names in readers if params[i] in names) for i in saved)
    # the same for the outputs: the parameters whose formula reads one (pow's result, read by the exponent's
    # gradient only, is not saved when the exponent is a number, as torch's PowBackward0 does not save it)
    result_users = sum(1 << params.index(t) for t, names in readers if names & {"result", "results"})
    return fn, saved, _results_read(formulas, used), meta, users, fn_complex, result_users


def _compile_variant(node_name, src, is_complex):
    """The backward function of one variant (Note [Complex formula variants]) and whether it differs from src."""
    out, changed = [], False
    for line in src.split("\n"):
        # the formula expressions sit in the generated lines' parentheses: rewrite the statements whole
        body = line.lstrip()
        if body.startswith(("out.append(", "out.extend(", "group")):
            new, c = _variant(body, is_complex) if "=" not in body.split("(")[0] else _assign_variant(body, is_complex)
            changed |= c
            line = line[:len(line) - len(body)] + new
        out.append(line)
    ns = dict(_NS)
    exec(compile("\n".join(out), f"<backward of {node_name}>", "exec"), ns)
    fn = ns["backward"]
    fn.__name__ = node_name
    return fn, changed


def _assign_variant(stmt, is_complex):
    name, _, expr = stmt.partition(" = ")
    new, changed = _variant(expr, is_complex)
    return f"{name} = {new}", changed


def _results_read(formulas, used):
    """Bit i: the backward reads output i, which the recorder then saves (`result` is output 0, `results[i]` output
    i, `results` alone all of them). Only those are saved, as torch saves only what its formula names: batch
    norm's backward reads the mean and invstd, not the output an in-place ReLU may overwrite next."""
    text = " ".join(formulas)
    if re.search(r"\bresults\b(?!\[\d+\])", text):
        return 0xFFFFFFFF
    mask = 1 if "result" in used else 0
    for i in re.findall(r"\bresults\[(\d+)\]", text):
        mask |= 1 << int(i)
    return mask


# helpers of the normalization and embedding formulas (ops_norm.def)
from ._norm_formulas import *  # noqa: E402,F401,F403
# helpers of the SVD and matrix-norm formulas (ops_linalg.def)
from ._linalg_formulas import *  # noqa: E402,F401,F403
# helpers of the 3-d pooling, grid sampling and embedding bag formulas (ops_nn_extra.def)
from ._nn_extra_formulas import *  # noqa: E402,F401,F403
# helpers of the LAPACK-backed linalg formulas (ops_linalg.def, second part)
from ._linalg_lapack_formulas import *  # noqa: E402,F401,F403


# ---- helpers of the forward (JVP) formulas: PCT_FWGRAD lines ------------------------------------

def reduce_jvp(t, dim, keepdim):
    """Sums a tangent over the reduced dims of a reduction (dim None or empty: all of them)."""
    if t.ndim == 0:
        return t
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        dims = list(range(t.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    return t.sum(dims, keepdim=keepdim)


def gather_reduced(t, indices, dim, keepdim):
    """The tangent of max/min/median/mode/kthvalue along dim: the tangent at the picked positions."""
    if t.ndim == 0:
        return t.clone()
    if keepdim:
        return t.gather(dim, indices)
    return t.gather(dim, indices.unsqueeze(dim)).squeeze(dim)


def gather_same(t, indices, dim):
    """The tangent of sort/topk/cummax/cummin: the tangent at the positions the op picked."""
    if t.ndim == 0:
        return t.clone()
    return t.gather(dim, indices)


def layer_norm_jvp(input, input_t, weight, weight_t, bias, bias_t, normalized_shape, results):
    """Tangents of native_layer_norm's output, mean and rstd (the backward op reads the last two, so forward over
    reverse needs their true tangents)."""
    dims = list(range(input.ndim - len(normalized_shape), input.ndim))
    mean, rstd = results[1], results[2]
    xc = input - mean
    mean_t = input_t.mean(dims, keepdim=True)
    rstd_t = -(rstd ** 3) * (xc * (input_t - mean_t)).mean(dims, keepdim=True)
    out_t = (input_t - mean_t) * rstd + xc * rstd_t
    if weight is not None:
        out_t = out_t * weight + xc * rstd * weight_t
    if bias is not None:
        out_t = out_t + bias_t
    return [out_t, mean_t.reshape(mean.shape), rstd_t.reshape(rstd.shape)]


def _normalized_jvp(xc, x_t, stat_t_mean, rstd, dims):
    """Tangents of the centred input's statistics: (mean_t, rstd_t) with rstd = (avg(xc^2) + eps)^-1/2 over dims
    (stat_t_mean False: no mean is subtracted, as in RMS norm)."""
    mean_t = x_t.mean(dims, keepdim=True) if stat_t_mean else None
    centred_t = x_t - mean_t if stat_t_mean else x_t
    rstd_t = -(rstd ** 3) * (xc * centred_t).mean(dims, keepdim=True)
    return mean_t, centred_t, rstd_t


def rms_norm_jvp(input, input_t, weight, weight_t, normalized_shape, results):
    """Tangents of _fused_rms_norm's output and rstd (its backward op reads rstd: forward over reverse needs it)."""
    dims = list(range(input.ndim - len(normalized_shape), input.ndim))
    rstd = results[1]
    _, x_t, rstd_t = _normalized_jvp(input, input_t, False, rstd, dims)
    out_t = x_t * rstd + input * rstd_t
    if weight is not None:
        out_t = out_t * weight
        if weight_t is not None:
            out_t = out_t + input * rstd * weight_t
    return [out_t, rstd_t.reshape(rstd.shape)]


def group_norm_jvp(input, input_t, weight, weight_t, bias, bias_t, N, C, HxW, group, results):
    """Tangents of native_group_norm's output, mean and rstd (per sample and group)."""
    mean, rstd = results[1], results[2]
    xs, ts = input.reshape(N, group, -1), input_t.reshape(N, group, -1)
    m, r = mean.reshape(N, group, 1), rstd.reshape(N, group, 1)
    xc = xs - m
    mean_t, centred_t, rstd_t = _normalized_jvp(xc, ts, True, r, [-1])
    out_t = (centred_t * r + xc * rstd_t).reshape(N, C, -1)
    xhat = (xc * r).reshape(N, C, -1)
    if weight is not None:
        out_t = out_t * weight.reshape(1, C, 1)
        if weight_t is not None:
            out_t = out_t + xhat * weight_t.reshape(1, C, 1)
    if bias_t is not None:
        out_t = out_t + bias_t.reshape(1, C, 1)
    return [out_t.reshape(input.shape), mean_t.reshape(mean.shape), rstd_t.reshape(rstd.shape)]


def batch_norm_jvp(input, input_t, weight, weight_t, bias, bias_t, running_mean, running_var, training, eps,
                   results):
    """Tangents of native_batch_norm's output and, in training, of its saved mean and inverse std (per channel);
    in evaluation the statistics are the running ones, constants here (their outputs are empty)."""
    shape = [1, input.shape[1]] + [1] * (input.ndim - 2)
    red = [0] + list(range(2, input.ndim))
    if training:
        mean, inv = results[1].reshape(shape), results[2].reshape(shape)
        xc = input - mean
        mean_t, centred_t, inv_t = _normalized_jvp(xc, input_t, True, inv, red)
        out_t = centred_t * inv + xc * inv_t
        stats = [mean_t.reshape(results[1].shape), inv_t.reshape(results[2].shape)]
    else:
        inv = (running_var.reshape(shape) + eps).rsqrt()
        xc = input - running_mean.reshape(shape)
        out_t = input_t * inv
        stats = [torch.zeros_like(results[1]), torch.zeros_like(results[2])]
    if weight is not None:
        out_t = out_t * weight.reshape(shape)
        if weight_t is not None:
            out_t = out_t + xc * inv * weight_t.reshape(shape)
    if bias_t is not None:
        out_t = out_t + bias_t.reshape(shape)
    return [out_t] + stats


def cross_entropy_jvp(input, input_t, target, weight, reduction, ignore_index, label_smoothing, results):
    """Tangents of _cross_entropy_loss's loss (its backward formula at unit gradients, against the input's tangent:
    each loss term reads one sample) and of its log-sum-exp."""
    loss, lse = results[0], results[1]
    cdim = 1 if input.ndim > 1 else 0
    g = cross_entropy_grad((torch.ones_like(loss), None), results, input, target, weight, reduction, ignore_index,
                           label_smoothing)
    loss_t = (g * input_t).sum() if reduction != 0 else (g * input_t).sum(cdim)
    lse_t = (torch.softmax(input, cdim) * input_t).sum(cdim)
    return [loss_t, lse_t.reshape(lse.shape)]


def sgn_backward(grad, input, result):
    """sgn's derivative for real tensors: zero, as sign's (the complex one: sgn_backward_complex)."""
    return torch.zeros_like(grad)


def sgn_backward_complex(grad, input, result):
    """sgn(z) = z / |z| moves only along the circle: the part of grad orthogonal to sgn(z), over |z|; zero at z = 0
    (torch's sgn_backward)."""
    mag = input.abs()
    along = (grad * result.conj()).real
    safe = torch.where(mag == 0, torch.ones_like(mag), mag)
    return where_any(mag == 0, torch.zeros_like(grad), (grad - result * along) / safe)


def where_any(cond, a, b):
    """torch.where for the complex variants' helpers: a complex result made from the wheres of its real and imaginary
    parts (written before where had a complex kernel; it stays differentiable, for double backward)."""
    if not (a.dtype.is_complex or b.dtype.is_complex):
        return torch.where(cond, a, b)
    return torch.complex(torch.where(cond, a.real, b.real), torch.where(cond, _imag_or_zero(a), _imag_or_zero(b)))


def _imag_or_zero(x):
    return x.imag if x.dtype.is_complex else torch.zeros_like(x)


def _by_parts(fn, g, *args):
    """A helper linear in g, whose other arguments give only shapes, applied to a complex g part by part."""
    if not g.dtype.is_complex:
        return fn(g, *args)
    return torch.complex(fn(g.real, *args), fn(g.imag, *args))


def _pad_backward_complex(g, input_size, pad, mode=None):
    """pad's backward (the _pad_backward kernel is real only) for a complex gradient: linear in it, so by parts."""
    return _by_parts(_C._pad_backward, g, input_size, pad, mode)


def diagonal_backward_complex(g, input, offset, dim1, dim2):
    return _by_parts(diagonal_backward, g, input, offset, dim1, dim2)


def diag_backward_complex(g, input, diagonal):
    return _by_parts(diag_backward, g, input, diagonal)


def index_select_backward_complex(g, input, dim, index):
    if not g.dtype.is_complex:
        return index_select_backward(g, input, dim, index)
    z = torch.zeros(input.shape, dtype=g.real.dtype, device=g.device)
    return torch.complex(z.index_add(dim, index, g.real), z.index_add(dim, index, g.imag))


def logcumsumexp_backward_complex(g, input, result, dim):
    """torch's complex form: the exponentials conjugated (exp(conj z) = conj(exp z))."""
    return logcumsumexp_backward(g, input.conj(), result.conj(), dim)


def acosh_backward(grad, input):
    return grad * (input * input - 1).rsqrt()


def acosh_backward_complex(grad, input):
    """sqrt(z * z - 1) is not sqrt(z + 1) * sqrt(z - 1) off the real line: torch's complex formula takes the latter."""
    return grad * ((input + 1).rsqrt() * (input - 1).rsqrt()).conj()


def pow_backward_self_complex(g, input, exponent):
    """pow_backward_self for complex tensors: grad * conj(exponent * input ** (exponent - 1)), zero where the
    exponent is zero."""
    if _is_constant_zero(exponent):
        return torch.zeros_like(input)
    d = (exponent * input.pow(exponent - 1)).conj()
    if not isinstance(exponent, torch.Tensor):
        return g * d
    return where_any(exponent == 0, torch.zeros_like(g * d), g * d)


def pow_backward_exponent_complex(g, input, result, exponent=None):
    """d(input ** exponent)/d exponent for complex tensors: conj(result * log(input)) with input promoted to the
    result's dtype (log of a negative real is then finite); 0 where input == 0 and the exponent is real and >= 0."""
    x = input.to(result.dtype) if isinstance(input, torch.Tensor) else torch.tensor(input, dtype=result.dtype)
    zero = x == 0
    if exponent is not None:
        if exponent.dtype.is_complex:
            zero = zero & (exponent.imag == 0) & (exponent.real >= 0)
        else:
            zero = zero & (exponent >= 0)
    d = (result * x.log()).conj()
    return g * where_any(zero, torch.zeros_like(d), d)


def abs_backward(grad, input):
    """abs's derivative: sign(x) for real inputs; for complex ones (reached only through the ops of Note [Complex
    outputs in autograd]) the conjugate Wirtinger derivative grad * sgn(z) of a real function, as torch's."""
    if input.dtype.is_complex:
        return grad * input.sgn()
    return grad * input.sign()


def angle_backward(grad, input):
    """angle's derivative: zero for real inputs (0 or pi, piecewise constant); for complex ones (see abs_backward)
    grad * i z / |z|^2, zero at z = 0, as torch's."""
    if input.dtype.is_complex:
        mag2 = input.real * input.real + input.imag * input.imag
        safe = torch.where(mag2 == 0, torch.ones_like(mag2), mag2)
        d = grad / safe
        return torch.complex(-input.imag * d, input.real * d)
    return torch.zeros_like(grad)


def norm_backward_complex(g, input, result, p, dim, keepdim):
    """norm_backward for complex inputs (the norm of the moduli): sgn(z) takes the place of sign(x) and z of x, so
    every gradient is the real formula's times the phase of z (torch's linalg_vector_norm_backward)."""
    if not input.dtype.is_complex:
        return norm_backward(g, input, result, p, dim, keepdim)
    p = 2.0 if p is None else float(p)
    if p == 0.0:
        return None
    r = unreduce(result, input, dim, keepdim)
    g = unreduce(g, input, dim, keepdim)
    zero_c = torch.zeros_like(input)
    if p == 1.0:
        return g * input.sgn()
    zero = r == 0
    safe = torch.where(zero, torch.ones_like(r), r)
    if p == 2.0:
        return where_any(zero, zero_c, input * (g / safe))
    mag = input.abs()
    if math.isinf(p):
        mask = mag == r
        count = mask.sum(_norm_dims(dim, input.ndim), keepdim=True) if input.ndim else mask.sum()
        return where_any(mask, input.sgn() * (g / count), zero_c)
    if p < 1.0:
        nz = mag != 0
        a = torch.where(nz, mag, torch.ones_like(mag))
        scaled = where_any(nz, input.sgn() * a.pow(p - 1), zero_c)
        return scaled * (g * r.pow(1 - p))
    scaled = input.sgn() * mag.pow(p - 1) if p < 2.0 else input * mag.pow(p - 2)
    return where_any(zero, zero_c, scaled * (g / safe.pow(p - 1)))
