"""pyctorch: the PyTorch API, implemented in C.

`import pyctorch as torch` gives tensors, operators and (as they land) autograd,
nn, optim and data loading that behave like torch's. The heavy lifting is in the
C extension pyctorch._C; this package re-exports it and adds the thin Python parts.
"""
from . import _openblas_env
_openblas_env.select_openblas_kernels()  # before OpenBLAS loads with _C
from . import _C  # noqa: E402
from . import _C_python_attrs  # noqa: E402
_C_python_attrs.install(_C)  # torch._C's private Python-level helpers (_log_api_usage_once, ...)
from ._C import *  # noqa: F401,F403  (tensor, dtypes, every operator of the op table)
from ._C import Tensor, Size, device, dtype  # noqa: F401
from .storage import UntypedStorage  # noqa: F401,E402  (the Python subclass of _C.StorageBase)
from ._C import OutOfMemoryError  # noqa: F401  (torch.OutOfMemoryError: the caching allocator's)
# torch.special's ops are special_<name> in the table (ops_special.def); torch keeps those names out of its namespace
for _name in [_n for _n in globals() if _n.startswith("special_")]:
    del globals()[_name]
from ._C import _softmax_backward_data, _log_softmax_backward_data  # noqa: F401
from ._C import _fused_adam_, _fused_adamw_, _fused_sgd_, _fused_adagrad_  # noqa: F401
from ._dtype_info import finfo, iinfo  # noqa: F401
from . import _layouts
from ._layouts import (strided, contiguous_format, preserve_format, channels_last, channels_last_3d,  # noqa: F401
                       layout, memory_format)
from .functional import *  # noqa: F401,F403
from . import random  # noqa: F401
from . import linalg  # noqa: F401
from ._C import _fft_c2c, _fft_r2c, _fft_c2r  # noqa: F401,E402  (torch.fft's primitives)
from .random import manual_seed, seed, initial_seed, get_rng_state, set_rng_state  # noqa: F401
from . import _tensor  # noqa: F401,E402  (the Tensor class's methods written in Python, attached in one place)
from . import autograd  # noqa: F401
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                                 is_inference_mode_enabled)
from . import utils  # noqa: F401
from . import nn  # noqa: F401
from .nn.functional import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: F401
                            conv_transpose3d)
from . import optim  # noqa: F401
from . import serialization  # noqa: F401
from .serialization import save, load  # noqa: F401
from ._zip_container import PyTorchFileReader, PyTorchFileWriter  # noqa: F401
from ._asarray import asarray  # noqa: F401,E402

# The one version string of the package (pyproject.toml reads it; pyctorch.version.pyctorch_version is it).
_PACKAGE_VERSION = "0.1.0"
__version__ = _PACKAGE_VERSION


from ._C import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # noqa: F401,E402
from ._composites import *  # noqa: F401,F403,E402  (torch.diff, cdist, quantile, ...)
from ._linalg_functions import *  # noqa: F401,F403,E402  (torch.inverse, logdet, qr, lu_unpack, ...)
from ._legacy import *  # noqa: F401,F403,E402  (FloatTensor & co.)
from . import _legacy  # noqa: E402
from . import storage  # noqa: E402
from .storage import TypedStorage, is_storage  # noqa: F401,E402
globals().update(storage.LEGACY_CLASSES)  # torch.FloatStorage & co.
from . import fft  # noqa: F401,E402  (torch.fft: composites over _fft_c2c/_fft_r2c/_fft_c2r)
from ._sparse_coo import sparse_coo  # noqa: F401,E402  (sparse COO tensors: pyctorch/_sparse_coo.py)
from ._sparse_ops import sparse_coo_tensor, smm, sspaddmm, resize_as_sparse_  # noqa: F401,E402
from . import sparse  # noqa: F401,E402  (torch.sparse)
from ._stft import stft, istft  # noqa: F401,E402
globals().update(_legacy.inplace_functions(globals()))  # torch.sin_ & co.
from . import overrides  # noqa: E402
overrides._install()  # the __torch_function__ protocol: Tensor's default handler, the Python functions' check
from math import inf, nan, pi, e  # noqa: F401,E402
newaxis = None

# Loaded on first use, keeping `import pyctorch` fast: submodules torch imports eagerly (multiprocessing pulls
# in the multiprocessing package), the drop-in flag functions of _dropin.py, the printing helpers.
_LAZY_MODULES = frozenset({"multiprocessing", "testing", "cuda", "backends", "version", "torch_version", "as_torch",
                           "profiler", "amp", "cpu", "special", "distributed", "futures", "func", "jit",
                           "hub", "distributions", "ops", "_ops", "compiler", "_dynamo", "fx", "accelerator",
                           "library", "export", "onnx"})
_DROPIN_FUNCTIONS = frozenset({
    "compile", "get_num_interop_threads", "set_num_interop_threads", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "set_default_device", "get_default_device", "equal", "is_complex", "ravel",
    "_assert"})
_PRINT_HELPERS = frozenset({"set_printoptions", "get_printoptions", "printoptions"})


def __getattr__(name):
    if name in _LAZY_MODULES:
        import importlib
        return importlib.import_module("." + name, __name__)
    if name in _DROPIN_FUNCTIONS:
        from . import _dropin
        value = globals()[name] = overrides._wrap_function(name, getattr(_dropin, name))
        return value
    if name == "autocast":
        from .amp import autocast
        return autocast
    if name in _PRINT_HELPERS:
        from . import _tensor_str
        return getattr(_tensor_str, name)
    if name in ("ScriptModule", "ScriptFunction"):  # torch re-exports torch._C's script classes at the top
        from . import jit
        return getattr(jit, name)
    raise AttributeError(f"module 'pyctorch' has no attribute '{name}'")


def install_as_torch(torchvision=None):
    """Make `import torch` resolve to pyctorch in this process (see pyctorch.as_torch); torchvision=True
    also serves `import torchvision` from pyctorch's subset of it."""
    from .as_torch import install_as_torch as install
    return install(torchvision=torchvision)
