"""torch.accelerator for a pyctorch build with no accelerator: what torch's CPU-only build answers.

Queries say there is none (`is_available()` False, `current_accelerator()` None, `device_count()` 0);
everything that needs a device raises torch's RuntimeError.
"""

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "current_device_idx",
           "set_device_index", "set_device_idx", "device_index", "synchronize", "current_stream", "set_stream",
           "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "memory_stats", "reset_peak_memory_stats", "reset_accumulated_memory_stats", "get_memory_info",
           "get_device_capability"]

_NONE = "Cannot access accelerator device when none is available."


def is_available():
    """False: no accelerator in this build."""
    return False


def current_accelerator(check_available=False):
    """None: no accelerator in this build."""
    return None


def device_count():
    return 0


def _no_accelerator(*args, **kwargs):
    raise RuntimeError(_NONE)


current_device_index = current_device_idx = set_device_index = set_device_idx = _no_accelerator
synchronize = current_stream = set_stream = empty_cache = get_memory_info = get_device_capability = _no_accelerator
memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _no_accelerator
memory_stats = reset_peak_memory_stats = reset_accumulated_memory_stats = _no_accelerator


class device_index:
    """Sets the accelerator's device index inside the block; None is a no-op, an index needs a device."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            raise RuntimeError(_NONE)

    def __exit__(self, *exc):
        return False
