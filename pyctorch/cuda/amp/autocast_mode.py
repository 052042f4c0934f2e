import warnings

from ...amp import autocast_mode

__all__ = ["autocast"]


class autocast(autocast_mode.autocast):
    """torch.cuda.amp.autocast(args...): deprecated; torch.amp.autocast("cuda", args...)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        if dtype is None:
            from ... import _C
            dtype = _C.float16
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
