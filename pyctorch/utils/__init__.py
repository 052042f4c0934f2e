"""pyctorch.utils: hooks, checkpointing, data loading and TensorBoard logging (utils.data and
utils.tensorboard load on first use)."""
from . import hooks  # noqa: F401
from . import checkpoint  # noqa: F401


def __getattr__(name):
    # utils.data loads on first use: it imports multiprocessing, kept out of `import pyctorch`;
    # utils.tensorboard imports the tensorboard package (and protobuf), an optional dependency
    if name in ("data", "dlpack", "tensorboard", "_pytree", "cpp_extension"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'pyctorch.utils' has no attribute '{name}'")
