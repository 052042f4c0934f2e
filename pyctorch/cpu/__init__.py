"""torch.cpu: the CPU device module (what torch.cuda is for GPUs), and torch.cpu.amp."""
from . import amp  # noqa: F401

__all__ = ["is_available", "synchronize", "current_device", "device_count", "amp"]


def is_available():
    return True


def synchronize(device=None):
    """CPU work is synchronous: nothing to wait for."""


def current_device():
    return "cpu"


def device_count():
    return 1
