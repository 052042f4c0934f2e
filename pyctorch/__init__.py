"""pyctorch: the PyTorch API, implemented in C.

`import pyctorch as torch` gives tensors, operators and (as they land) autograd,
nn, optim and data loading that behave like torch's. The heavy lifting is in the
C extension pyctorch._C; this package re-exports it and adds the thin Python parts.
"""
from . import _C
from ._C import *  # noqa: F401,F403  (tensor, dtypes, every operator of the op table)
from ._C import Tensor, Size, device, dtype  # noqa: F401
from ._C import _softmax_backward_data, _log_softmax_backward_data  # noqa: F401
from ._C import _fused_adam_, _fused_adamw_, _fused_sgd_, _fused_adagrad_  # noqa: F401
from ._dtype_info import finfo, iinfo  # noqa: F401
from . import _layouts
from ._layouts import strided, contiguous_format, preserve_format, channels_last  # noqa: F401
from .functional import *  # noqa: F401,F403
from . import random  # noqa: F401
from . import linalg  # noqa: F401
from .random import manual_seed, seed, initial_seed, get_rng_state, set_rng_state  # noqa: F401
from . import _tensor_autograd  # noqa: F401  (Tensor.backward, register_hook, retain_grad)
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

__version__ = "0.1.0"


def __getattr__(name):
    # printing helpers load on first use, keeping `import pyctorch` fast
    if name in ("set_printoptions", "get_printoptions", "printoptions"):
        from . import _tensor_str
        return getattr(_tensor_str, name)
    raise AttributeError(f"module 'pyctorch' has no attribute '{name}'")


# ---- profiler and mixed precision (issue 6): torch.profiler, torch.amp, torch.cpu, torch.cuda
# and torch.autocast load on first use (torch.autograd.profiler too: pyctorch/autograd) ----
from ._C import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # noqa: E402,F401


def _issue6_getattr(name, _previous=__getattr__):
    import importlib
    if name in ("profiler", "amp", "cpu", "cuda"):
        return importlib.import_module("." + name, __name__)
    if name == "autocast":
        return importlib.import_module(".amp", __name__).autocast
    return _previous(name)


__getattr__ = _issue6_getattr
