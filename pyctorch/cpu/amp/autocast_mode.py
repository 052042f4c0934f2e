import warnings

from ... import _C
from ...amp import autocast_mode

__all__ = ["autocast"]


class autocast(autocast_mode.autocast):
    """torch.cpu.amp.autocast(args...): deprecated; torch.amp.autocast("cpu", args...)."""

    def __init__(self, enabled=True, dtype=_C.bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
