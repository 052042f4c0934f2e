"""skip_init (torch.nn.utils.skip_init): build a module without spending time or random numbers
on its initial values.

torch constructs the module on the meta device and materialises it with to_empty(), leaving the
parameters uninitialised. pyctorch has no meta device: the module is built on the CPU and the
global random state is restored afterwards, so the generator advances exactly as in torch (not at
all) and the caller overwrites the values, as torch's documentation requires.
"""
import inspect

import pyctorch as torch

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Instantiate module_cls(*args, **kwargs) leaving the global generator untouched; the
    class must accept a `device` argument, as torch requires."""
    if not issubclass(module_cls, torch.nn.Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    rng_state = torch.get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        torch.set_rng_state(rng_state)
