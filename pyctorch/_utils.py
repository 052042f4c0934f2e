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


def _rebuild_subclass(cls, rebuild, args, state):
    """A Tensor subclass's object: its values rebuilt as a tensor, then given the class and its __dict__."""
    from . import _C
    t = _C._as_subclass(rebuild(*args), cls)
    if state:
        t.__dict__.update(state)
    return t


def reduce_tensor(t):
    """__reduce_ex__ for tensors: values travel as a numpy copy (bfloat16 as raw int16 bits); a subclass's object
    also carries its class and __dict__ (as torch's _rebuild_from_type_v2)."""
    from . import _C
    if type(t) is not _C.Tensor:
        rebuild, args = reduce_tensor(_C._as_subclass(t, _C.Tensor).detach().requires_grad_(t.requires_grad))
        return (_rebuild_subclass, (type(t), rebuild, args, dict(getattr(t, "__dict__", None) or {})))
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
