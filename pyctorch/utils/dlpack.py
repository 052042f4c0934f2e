"""torch.utils.dlpack: exchange tensors with other libraries through DLPack capsules.

`to_dlpack(t)` gives the legacy capsule interface (`t.__dlpack__()`); `from_dlpack` takes a
capsule or any object with `__dlpack__`. The memory is shared, not copied. While a capsule
(or a consumer's array made from it) lives, the tensor's storage counts it as an export, so
`resize_` and `share_memory_` refuse to move the memory under it.
"""
import enum

from .. import _C

__all__ = ["to_dlpack", "from_dlpack", "DLDeviceType"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device type codes (dlpack.h)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor):
    """to_dlpack(tensor) -> PyCapsule: a DLPack capsule sharing the tensor's memory."""
    if not isinstance(tensor, _C.Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    return tensor.__dlpack__()


def from_dlpack(ext_tensor):
    """from_dlpack(ext_tensor) -> Tensor: a tensor sharing the memory of a DLPack capsule or of an object
    with `__dlpack__` (a NumPy array, another framework's tensor)."""
    return _C.from_dlpack(ext_tensor)
