"""torch.nn.DataParallel and torch.nn.parallel.data_parallel. pyctorch has no CUDA backend, and
torch's DataParallel without a GPU (no available device type) is a pass-through: it keeps the module
as `module` (so state_dict keys are prefixed 'module.'), sets device_ids to [] and forward calls the
module. The same here; scattering over several GPUs is left for a CUDA backend."""
import pyctorch as torch
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _available_device_type():
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available():
        return "cuda"
    return None


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if _available_device_type() is None:
            self.module = module
            self.device_ids = []
            return
        raise NotImplementedError("DataParallel over CUDA devices is not supported by pyctorch yet")

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        raise NotImplementedError("DataParallel over CUDA devices is not supported by pyctorch yet")


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if _available_device_type() is None:
        raise RuntimeError("device type could not be determined")
    raise NotImplementedError("data_parallel over CUDA devices is not supported by pyctorch yet")
