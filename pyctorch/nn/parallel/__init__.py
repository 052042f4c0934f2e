"""torch.nn.parallel: DistributedDataParallel (distributed.py; loaded, with pyctorch.distributed,
on first use so that `import pyctorch` does not pay for it) and DataParallel (data_parallel.py)."""
import importlib

from .data_parallel import DataParallel, data_parallel  # noqa: F401

__all__ = ["DistributedDataParallel", "DataParallel", "data_parallel"]


def __getattr__(name):
    if name in ("DistributedDataParallel", "distributed"):
        module = importlib.import_module(".distributed", __name__)
        return module if name == "distributed" else module.DistributedDataParallel
    raise AttributeError(f"module 'pyctorch.nn.parallel' has no attribute '{name}'")
