"""Backward-formula helpers of the normalization and embedding ops (csrc/aten/ops_norm.def).

The forward ops (native_layer_norm, _fused_rms_norm, native_group_norm, native_batch_norm) get
their input/weight/bias gradients from one call of the fused backward kernel (Note [Grouped
formulas] in _formulas.py). Their saved statistics (mean, rstd...) are outputs too: a gradient
that reaches them (double backward does, through the backward kernel's own inputs) is added by
the chain rule through the statistics' definitions.

The fused backward ops are differentiated through a composite of ordinary ops that computes the
same math (`_vjp`), so double backward works and stays differentiable itself.
"""
import pyctorch as torch

__all__ = ["layer_norm_grads", "layer_norm_backward_grads", "rms_norm_grads", "rms_norm_backward_grads",
           "group_norm_grads", "group_norm_backward_grads", "batch_norm_grads", "batch_norm_backward_grads",
           "embedding_backward_grad_output", "cross_entropy_grad", "cross_entropy_backward_grads"]


# Set by torch.compile's backward tracer (Note [AOT backward] in pyctorch/_inductor/aot.py) while it records a
# backward: a function telling from a gradient's origin whether it can contribute, since its values may differ in the
# runs the recorded graph serves (a gradient is linear in the output gradients, so computing with zeros is only
# slower than skipping); None otherwise.
structural_nonzero = None


def _nonzero(g):
    """Whether a gradient can contribute (a meta tensor has no values to look at: it may)."""
    if g is None or g.numel() == 0:
        return False
    if g.device.type == "meta":
        return True
    if structural_nonzero is not None:
        return structural_nonzero(g)
    return bool(g.any())


def _vjp(fn, primals, cotangents, needs):
    """The vector-Jacobian products of fn (a composite returning a tuple) at primals, one per
    primal (None where not needed): partial derivatives, each primal taken as independent.
    Recorded when grad mode is on (create_graph): a primal with history enters as a clone, so the
    results stay functions of the real inputs (higher derivatives work) while the gradient
    captured at the clone excludes paths through the other primals' histories (a saved mean or
    logsumexp is itself a function of the input)."""
    create = torch.is_grad_enabled()
    with torch.enable_grad():
        xs = []
        for p, n in zip(primals, needs):
            if p is None or not n:
                xs.append(p)
            elif create and p.requires_grad:
                xs.append(p.clone())
            else:
                xs.append(p.detach().requires_grad_())
        outs = fn(*xs)
    pairs = [(o, c) for o, c in zip(outs, cotangents)
             if o is not None and c is not None and o.requires_grad]
    wrt = [i for i, (x, n) in enumerate(zip(xs, needs)) if n and x is not None]
    res = [None] * len(primals)
    if not pairs or not wrt:
        return res
    gs = torch.autograd.grad([o for o, _ in pairs], [xs[i] for i in wrt], [c for _, c in pairs],
                             allow_unused=True, create_graph=create)
    for i, g in zip(wrt, gs):
        res[i] = g
    return res


def _norm_dims(input, normalized_shape):
    n = len(normalized_shape)
    return list(range(input.ndim - n, input.ndim)), list(range(input.ndim - n))


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---- layer norm and RMS norm ----------------------------------------------------------------------

def _row_norm_composite(g, x, mean, rstd, w, dims, batch):
    """grad_input, grad_weight, grad_bias of layer norm (mean None: RMS norm) in plain ops."""
    xhat = (x - mean) * rstd if mean is not None else x * rstd
    gw = g * w if w is not None else g
    inner = gw - xhat * (gw * xhat).mean(dims, keepdim=True)
    if mean is not None:
        inner = inner - gw.mean(dims, keepdim=True)
    gi = rstd * inner
    gweight = (g * xhat).sum(batch) if batch else g * xhat
    gbias = g.sum(batch) if batch else g
    return gi, gweight, gbias


def layer_norm_grads(grads, mean, rstd, input, normalized_shape, weight, bias, output_mask):
    gi, gw, gb = torch.native_layer_norm_backward(grads[0], input, normalized_shape, mean, rstd, weight, bias,
                                                  list(output_mask))
    if output_mask[0] and (_nonzero(grads[1]) or _nonzero(grads[2])):
        # mean = avg(x), rstd = (avg((x - mean)^2) + eps)^-1/2 over the normalized dims
        d = _numel(normalized_shape)
        gi = gi + grads[1] / d - grads[2] * rstd.pow(3) * (input - mean) / d
    return gi, gw, gb


def layer_norm_backward_grads(grads, grad_out, input, normalized_shape, mean, rstd, weight, output_mask):
    dims, batch = _norm_dims(input, normalized_shape)

    def f(g, x, m, r, w):
        return _row_norm_composite(g, x, m, r, w, dims, batch)
    return _vjp(f, (grad_out, input, mean, rstd, weight), grads, output_mask)


def rms_norm_grads(grads, rstd, input, normalized_shape, weight, output_mask):
    gi, gw = torch._C._fused_rms_norm_backward(grads[0], input, normalized_shape, rstd, weight, list(output_mask))
    if output_mask[0] and _nonzero(grads[1]):
        # rstd = (avg(x^2) + eps)^-1/2
        gi = gi - grads[1] * rstd.pow(3) * input / _numel(normalized_shape)
    return gi, gw


def rms_norm_backward_grads(grads, grad_out, input, normalized_shape, rstd, weight, output_mask):
    dims, batch = _norm_dims(input, normalized_shape)

    def f(g, x, r, w):
        gi, gw, _ = _row_norm_composite(g, x, None, r, w, dims, batch)
        return gi, gw
    return _vjp(f, (grad_out, input, rstd, weight), grads, output_mask)


# ---- group norm -----------------------------------------------------------------------------------

def _group_norm_composite(g, x, mean, rstd, w, N, C, HxW, group):
    xs, gs = x.reshape(N, group, -1), g.reshape(N, group, -1)
    m, r = mean.reshape(N, group, 1), rstd.reshape(N, group, 1)
    xhat = (xs - m) * r
    gw = (g.reshape(N, C, -1) * w.reshape(1, C, 1)).reshape(N, group, -1) if w is not None else gs
    gi = r * (gw - gw.mean(-1, keepdim=True) - xhat * (gw * xhat).mean(-1, keepdim=True))
    gweight = gbias = None
    if w is not None:
        gweight = (gs * xhat).reshape(N, C, -1).sum((0, 2))
        gbias = g.reshape(N, C, -1).sum((0, 2))
    return gi.reshape(x.shape), gweight, gbias


def group_norm_grads(grads, mean, rstd, input, weight, N, C, HxW, group, output_mask):
    gi, gw, gb = torch.native_group_norm_backward(grads[0], input, mean, rstd, weight, N, C, HxW, group,
                                                  list(output_mask))
    if output_mask[0] and (_nonzero(grads[1]) or _nonzero(grads[2])):
        k = (C // group) * HxW
        xs = input.reshape(N, group, -1)
        m, r = mean.reshape(N, group, 1), rstd.reshape(N, group, 1)
        extra = grads[1].reshape(N, group, 1) / k - grads[2].reshape(N, group, 1) * r.pow(3) * (xs - m) / k
        gi = gi + extra.reshape(input.shape)
    return gi, gw, gb


def group_norm_backward_grads(grads, grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    def f(g, x, m, r, w):
        return _group_norm_composite(g, x, m, r, w, N, C, HxW, group)
    return _vjp(f, (grad_out, input, mean, rstd, weight), grads, output_mask)


# ---- batch norm -----------------------------------------------------------------------------------

def _channel_shape(x):
    return [1, x.shape[1]] + [1] * (x.ndim - 2), [0] + list(range(2, x.ndim))


def _batch_norm_composite(g, x, w, running_mean, running_var, save_mean, save_invstd, train, eps):
    shape, red = _channel_shape(x)
    if train:
        mean, inv = save_mean.reshape(shape), save_invstd.reshape(shape)
    else:
        mean, inv = running_mean.reshape(shape), (running_var.reshape(shape) + eps).rsqrt()
    xhat = (x - mean) * inv
    scale = inv * w.reshape(shape) if w is not None else inv
    if train:
        gi = scale * (g - g.mean(red, keepdim=True) - xhat * (g * xhat).mean(red, keepdim=True))
    else:
        gi = g * scale
    return gi, (g * xhat).sum(red), g.sum(red)


def batch_norm_grads(grads, save_mean, save_invstd, input, weight, running_mean, running_var, training, eps, output_mask):
    gi, gw, gb = torch.native_batch_norm_backward(grads[0], input, weight, running_mean, running_var, save_mean,
                                                  save_invstd, training, eps, list(output_mask))
    if output_mask[0] and training and (_nonzero(grads[1]) or _nonzero(grads[2])):
        # save_mean = avg(x), save_invstd = (avg((x - mean)^2) + eps)^-1/2 over all but the channel dim
        shape, _ = _channel_shape(input)
        m = input.numel() // max(input.shape[1], 1)
        mean, inv = save_mean.reshape(shape), save_invstd.reshape(shape)
        gi = gi + grads[1].reshape(shape) / m - grads[2].reshape(shape) * inv.pow(3) * (input - mean) / m
    return gi, gw, gb


def batch_norm_backward_grads(grads, grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
                              train, eps, output_mask):
    def f(g, x, w, sm, si):
        return _batch_norm_composite(g, x, w, running_mean, running_var, sm, si, train, eps)
    return _vjp(f, (grad_out, input, weight, save_mean, save_invstd), grads, output_mask)


# ---- embedding ------------------------------------------------------------------------------------

def embedding_backward_grad_output(grad, indices, padding_idx, scale_grad_by_freq):
    """The gradient of embedding_dense_backward with respect to grad_output: the rows of `grad`
    picked by the indices, scaled as the backward scaled them (zero for padding_idx)."""
    out = torch.embedding(grad, indices)
    if padding_idx < 0 and not scale_grad_by_freq:
        return out
    scale = torch.ones(indices.shape, dtype=grad.dtype, device=grad.device)
    if padding_idx >= 0:
        scale = scale * (indices != padding_idx).to(grad.dtype)
    if scale_grad_by_freq:
        flat = indices.reshape(-1).long()
        ones = torch.ones(flat.shape, dtype=grad.dtype, device=grad.device)
        counts = torch.zeros(grad.shape[0], dtype=grad.dtype, device=grad.device).index_add(0, flat, ones)
        scale = scale / counts[indices.long()]
    return out * scale.unsqueeze(-1)


# ---- cross entropy (class indices) ------------------------------------------------------------------

def cross_entropy_grad(grads, results, input, target, weight, reduction, ignore_index, label_smoothing):
    lse = results[1]
    gi = torch._C._cross_entropy_loss_backward(grads[0], input, target, weight, reduction, ignore_index,
                                               label_smoothing, lse)
    if _nonzero(grads[1]):  # lse = logsumexp(x) per row
        gi = gi + grads[1].unsqueeze(1) * (input - lse.unsqueeze(1)).exp()
    return gi


def _cross_entropy_backward_composite(go, x, lse, target, weight, reduction, ignore_index, eps):
    n, c = x.shape
    valid = target != ignore_index
    safe = torch.where(valid, target, torch.zeros_like(target))
    w = weight.to(x.dtype) if weight is not None else torch.ones(c, dtype=x.dtype, device=x.device)
    wt = w[safe] * valid.to(x.dtype)
    if reduction == 0:
        coef = go
    elif reduction == 2:
        coef = go.expand(n)
    else:
        coef = go.expand(n) / wt.sum()
    coef = coef * valid.to(x.dtype)
    p = (x - lse.unsqueeze(1)).exp()
    onehot = torch.zeros_like(x).scatter(1, safe.unsqueeze(1), 1.0)
    val = (p * ((1 - eps) * wt + eps / c * w.sum()).unsqueeze(1) - (eps / c) * w.unsqueeze(0)
           - (1 - eps) * wt.unsqueeze(1) * onehot)
    return (coef.unsqueeze(1) * val,)


def cross_entropy_backward_grads(grads, grad_output, input, target, weight, reduction, ignore_index, label_smoothing,
                                 lse, output_mask):
    def f(go, x, l):
        return _cross_entropy_backward_composite(go, x, l, target, weight, reduction, ignore_index, label_smoothing)
    return _vjp(f, (grad_output, input, lse), grads, output_mask)
