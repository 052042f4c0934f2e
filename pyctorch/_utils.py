"""Small shared helpers: tensor pickling for the C core, gradient zeroing for Module and Optimizer."""


def _rebuild_tensor(array, requires_grad):
    from . import _C
    t = _C.from_numpy(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_bfloat16(array, shape, requires_grad):
    from . import _C
    t = _C.from_numpy(array).view(_C.bfloat16).reshape(shape)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(t):
    """__reduce_ex__ for tensors: values travel as a numpy copy (bfloat16 as raw int16 bits)."""
    from . import _C
    data = t.detach()
    if data.dtype == _C.bfloat16:
        bits = data.contiguous().view(_C.int16).numpy().copy()
        return (_rebuild_bfloat16, (bits.reshape(-1), tuple(data.shape), t.requires_grad))
    return (_rebuild_tensor, (data.numpy().copy(), t.requires_grad))


def zero_grads(tensors, set_to_none=True):
    """Module.zero_grad / Optimizer.zero_grad: drop each .grad, or zero it in place (detached)."""
    for p in tensors:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if p.grad.grad_fn is not None:
            p.grad.detach_()
        else:
            p.grad.requires_grad_(False)
        p.grad.zero_()
