"""torch.nn.functional: the losses (mse, l1, huber, smooth_l1, nll, cross_entropy, binary
cross entropy, kl_div, cosine_embedding) and their reduction helpers.

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import pyctorch as torch
from . import _reduction as _Reduction


def _warn_target_size(input, target):
    if target.size() != input.size():
        import warnings
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _loss_operands(input, target, bool_target=False):
    """input and target as torch's pointwise losses see them: broadcast to one shape (so a 0-d target promotes as a
    tensor); for mse_loss (bool_target), a bool target in the result dtype (its kernel takes it, l1_loss's refuses)."""
    if input.shape != target.shape:
        input, target = torch.broadcast_tensors(input, target)
    if bool_target and target.dtype == torch.bool and input.dtype != torch.bool:
        target = target.to(torch.result_type(input, target))
    return input, target


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_target_size(input, target)
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    input, target = _loss_operands(input, target, bool_target=True)
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _warn_target_size(input, target)
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    input, target = _loss_operands(input, target)
    return _reduce((input - target).abs(), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _warn_target_size(input, target)
    input, target = _loss_operands(input, target)
    d = (input - target).abs()
    loss = torch.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_target_size(input, target)
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    input, target = _loss_operands(input, target)
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = torch.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def _class_dim_last(x):
    # (N, C, d1, ...) -> (N * d1 * ..., C)
    if x.ndim <= 2:
        return x.reshape(-1, x.shape[-1]) if x.ndim == 2 else x.reshape(1, -1)
    return x.movedim(1, -1).reshape(-1, x.shape[1])


def _check_class_target(input, target, weight):
    """torch's checks of a class-index target for nll_loss / cross_entropy, in its order (Note [nll target
    checks]: batch size, target rank or shape, dtype, then sizes and weight, as torch's nll_loss_nd and kernels)."""
    d = input.dim()
    if d < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {d})")
    if d != 1 and input.size(0) != (target.size(0) if target.dim() else 0):
        raise ValueError(f"Expected input batch_size ({input.size(0)}) to match target batch_size "
                         f"({target.size(0) if target.dim() else 0}).")
    if d == 3 or d > 4:
        expect = [input.size(0)] + list(input.shape[2:])
        if list(target.shape) != expect:
            raise RuntimeError(f"Expected target size {expect}, got {list(target.shape)}")
    if d <= 2 and target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if d == 4 and target.dim() != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    if target.dtype not in (torch.int64, torch.uint8):
        from .._composites import _cpp
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_cpp(target.dtype)}")
    if d > 2 and target.dtype != torch.int64:  # torch's spatial kernel (nll_loss2d) takes Long only
        raise RuntimeError("expected scalar type Long but found Byte")
    if d == 1 and target.dim() == 1 and target.size(0) != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.size(0)}")
    if d == 4 and (target.size(0) != input.size(0) or list(target.shape[1:]) != list(input.shape[2:])):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    classes = input.size(0 if d == 1 else 1)
    if weight is not None and (weight.numel() != classes or (d <= 2 and weight.dim() != 1)):
        if d <= 2:
            raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                               f"got weight tensor of shape: {list(weight.shape)}")
        raise RuntimeError("weight tensor should be defined either for all or no classes")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    _check_class_target(input, target, weight)
    out_shape = target.shape if input.dim() > 1 else ()
    logp = _class_dim_last(input)
    t = target.reshape(-1).long()
    valid = t != ignore_index
    safe = torch.where(valid, t, torch.zeros_like(t))
    if bool(((safe < 0) | (safe >= logp.shape[1])).any()):
        bad = int(safe[(safe < 0) | (safe >= logp.shape[1])][0])
        raise IndexError(f"Target {bad} is out of bounds.")
    picked = -logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = weight[safe] if weight is not None else torch.ones_like(picked)
    w = torch.where(valid, w, torch.zeros_like(w))
    loss = picked * w
    if reduction == "none":
        return loss.reshape(out_shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if input.shape != target.shape:  # class indices: the fused kernel (cpu/cross_entropy.c)
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
        if input.dim() == 0:  # torch's log_softmax over the class dim 1 of a 0-d input, before the target checks
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
        _check_class_target(input, target, weight)
        return _cross_entropy_indices(input, target, weight, ignore_index, reduction, max(label_smoothing, 0.0))
    # the same shape: class probabilities
    if not target.is_floating_point():
        from .._composites import _cpp
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_cpp(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    logp = input.log_softmax(class_dim)
    t = target
    if label_smoothing > 0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
        t = t * (1 - label_smoothing) + (label_smoothing / n_classes if n_classes else float("nan"))
    prod = logp * t
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_dim] = n_classes
        prod = prod * weight.reshape(shape)
    loss = -prod.sum(class_dim)
    if reduction == "mean":  # torch divides by numel / classes: NaN for an empty batch or no classes
        return loss.sum() / (input.numel() / n_classes if n_classes else float("nan"))
    return _reduce(loss, reduction)


def _check_unit_range(input, target):
    """binary_cross_entropy's per-element check (torch's kernel: input then target at the first bad element)."""
    bad_in = ~((input >= 0) & (input <= 1))
    bad_t = ~((target >= 0) & (target <= 1))
    bad = (bad_in | bad_t).reshape(-1)
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        which = "input" if bool(bad_in.reshape(-1)[first]) else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if target.dtype != input.dtype:  # torch's kernel takes the target in the input's dtype only
        from .._composites import _cpp
        raise RuntimeError(f"Found dtype {_cpp(target.dtype)} but expected {_cpp(input.dtype)}")
    with torch.no_grad():
        _check_unit_range(input, target)
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        shape = torch.broadcast_shapes(loss.shape, weight.shape)
        if shape != loss.shape:  # torch scales the loss in place by the weight
            raise RuntimeError(f"output with shape {list(loss.shape)} doesn't match the broadcast shape {list(shape)}")
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    _Reduction.get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    if target.dtype == torch.bool:  # torch's formula computes 1 - target first
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if not target.is_floating_point():  # and then writes into a tensor of the target's dtype
        from .._composites import _cpp
        raise RuntimeError(f"result type {_cpp(torch.promote_types(input.dtype, target.dtype))} can't be cast to the "
                           f"desired output type {_cpp(target.dtype)}")
    # log(1 + exp(-|x|)) + max(x, 0) - x * t, with pos_weight scaling the positive term
    log_sig_neg = (-input.abs()).exp().log1p() + (-input).clamp(min=0)  # -log(sigmoid(x))
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * log_sig_neg
    else:
        loss = (1 - target) * input + log_sig_neg
    if weight is not None:
        shape = torch.broadcast_shapes(loss.shape, weight.shape)
        if shape != loss.shape:  # torch scales the loss in place by the weight
            raise RuntimeError(f"output with shape {list(loss.shape)} doesn't match the broadcast shape {list(shape)}")
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        reduction = _Reduction.legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        import warnings
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    if not input.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = torch.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _Reduction.resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() not in (1, 2):
        raise RuntimeError(f"cosine_embedding_loss: expected 1D or 2D inputs of one rank, got {input1.dim()}D and "
                           f"{input2.dim()}D")
    eps = 1e-12
    dim = input1.dim() - 1
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zeros = torch.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp(min=0)
    loss = torch.where(target == 1, pos, zeros) + torch.where(target == -1, neg, zeros)
    return _reduce(loss, reduction)


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _cross_entropy_indices(input, target, weight, ignore_index, reduction, label_smoothing):
    """cross_entropy with class-index targets (already checked by _check_class_target): log_softmax + nll in one
    fused op over (rows, C)."""
    r = _REDUCTIONS[reduction]
    if input.ndim == 1:
        x, t = input.unsqueeze(0), target.reshape(1)
    elif input.ndim == 2:
        x, t = input, target
    else:
        x, t = input.movedim(1, -1).reshape(-1, input.shape[1]), target.reshape(-1)
    loss = torch._C._cross_entropy_loss(x, t, weight, r, ignore_index, float(label_smoothing))[0]
    if r == 0:
        return loss.reshape(target.shape if input.ndim > 1 else ())
    return loss
