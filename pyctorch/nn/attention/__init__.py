"""torch.nn.attention: the SDPA backend selector and flex_attention's import surface.

pyctorch's scaled_dot_product_attention has one CPU implementation (torch's MATH backend numbers), so
`sdpa_kernel` records the backends asked for (read back by `_cur_sdpa_kernel_backends`) and selects
nothing else.
"""
import contextlib
from enum import IntEnum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(IntEnum):
    """The scaled_dot_product_attention backends, with torch's values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_backends = [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
             SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]


def _cur_sdpa_kernel_backends(with_priority=False):
    return list(_backends)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, `backends` (one SDPBackend or a list) are the enabled ones."""
    global _backends
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for b in chosen:
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend")
    previous, _backends = _backends, chosen
    try:
        yield {}
    finally:
        _backends = previous
