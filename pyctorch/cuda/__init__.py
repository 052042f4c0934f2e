"""torch.cuda for a build without the CUDA backend: nothing is available, seeding is a no-op,
and torch.cuda.amp holds the deprecated autocast / GradScaler aliases (which disable themselves,
as torch's do without CUDA). A CUDA backend replaces this module."""
from . import amp  # noqa: F401

__all__ = ["is_available", "device_count", "is_bf16_supported", "manual_seed", "manual_seed_all", "amp"]


def is_available():
    return False


def device_count():
    return 0


def is_bf16_supported(including_emulation=True):
    return False


def manual_seed(seed):
    """No CUDA generators to seed."""


def manual_seed_all(seed):
    """No CUDA generators to seed."""
