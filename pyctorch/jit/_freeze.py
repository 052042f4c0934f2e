"""freeze / optimize_for_inference: with eager TorchScript there are no graph passes to run
(Note [Eager TorchScript]), so these check torch's preconditions and return the module itself."""
import warnings


def _check_module(mod, fn_name):
    from ..nn import Module
    if not isinstance(mod, Module):
        raise RuntimeError(f"{fn_name} expects a ScriptModule as input. "
                           "Please use torch.jit.script or torch.jit.trace to script your 'nn.Module'.")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Return `mod` (which must be in eval mode, as torch requires); nothing is inlined or constant-folded."""
    warnings.warn("`torch.jit.freeze` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    _check_module(mod, "Freezing")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    return None


def optimize_for_inference(mod, other_methods=None):
    """Put `mod` in eval mode (torch freezes it, which needs eval) and return it."""
    warnings.warn("`torch.jit.optimize_for_inference` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    _check_module(mod, "optimize_for_inference")
    if mod.training:
        mod.eval()
    return mod
