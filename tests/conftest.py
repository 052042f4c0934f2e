"""Shared test helpers: the torch oracle (optional); the comparison of results lives in comparison.py."""

import pytest

# pyctorch is whatever `import pyctorch` finds: `python -m pytest tests` in a source tree puts the working
# directory first (the in-place build: make test, make asan from its copy), while `pytest tests` after
# `pip install .` tests the installed package. Nothing here forces the source tree ahead of it.
import pyctorch  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:  # the comparisons skip; numpy-checked tests still run
    torch = None
    HAVE_TORCH = False

requires_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (oracle comparisons skip)")

# The one comparison of outcomes (tests/comparison.py), and its per-dtype tolerances.
from comparison import DTYPE_NAMES, TOL, assert_same, assert_same_outcome, outcome, to_numpy  # noqa: E402,F401
