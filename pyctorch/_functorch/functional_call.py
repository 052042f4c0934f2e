"""torch.func.functional_call and stack_module_state."""
from .. import _C
from ..nn.utils.stateless import _functional_call as functional_call

__all__ = ["functional_call", "stack_module_state"]


def stack_module_state(models):
    """(params, buffers): each model's parameters and buffers stacked along a new first dimension, by name, for
    vmap over an ensemble with functional_call. Stacked parameters are new leaves (requires_grad as the models')."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        names = [n for n, _ in named(models[0])]
        out = {}
        for name in names:
            tensors = [dict(named(m))[name] for m in models]
            flags = {t.requires_grad for t in tensors}
            if len(flags) != 1:
                raise RuntimeError("Expected all tensors to have the same requires_grad (all or none), "
                                   f"got a mix for {name}")
            s = _C.stack([t.detach() for t in tensors])
            out[name] = s.requires_grad_(True) if flags.pop() else s
        return out
    return (stacked(lambda m: list(m.named_parameters())), stacked(lambda m: list(m.named_buffers())))
