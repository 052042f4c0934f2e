"""Build and version facts, at torch.version's place.

`__version__` is the torch API version pyctorch follows (what `torch.version.__version__`
reports under the torch alias, see Note [The torch alias] in pyctorch/as_torch.py);
`pyctorch_version` is this package's own version (also `pyctorch.__version__` when no
alias is installed). This build has no CUDA, HIP or XPU backend.
"""
from typing import Optional

from . import _PACKAGE_VERSION

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu", "pyctorch_version"]

__version__ = "2.13.0"
pyctorch_version = _PACKAGE_VERSION
debug = False
cuda: Optional[str] = None
git_version = "unknown"
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
