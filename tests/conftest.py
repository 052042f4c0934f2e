"""Shared test helpers: the torch oracle (optional) and comparison of results."""

import numpy as np
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

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]

# Tolerances per dtype for value comparisons (torch's assert_close defaults, a bit looser for transcendental ops).
TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def to_numpy(t):
    """A float64/int/bool numpy copy of a pyctorch or torch tensor (bfloat16 widened)."""
    name = str(t.dtype).split(".")[1]
    if name in ("bfloat16", "float16"):
        return np.array(t.float().tolist(), dtype=np.float64)
    return np.array(t.tolist(), dtype=np.dtype(name if name != "bool" else np.bool_))


def assert_same(p, t, rtol=None, atol=None):
    """p (pyctorch) equals t (torch): dtype, shape and values (NaN == NaN)."""
    pn, tn = str(p.dtype).split(".")[1], str(t.dtype).split(".")[1]
    assert pn == tn, f"dtype {pn} != torch {tn}"
    assert tuple(p.shape) == tuple(t.shape), f"shape {tuple(p.shape)} != torch {tuple(t.shape)}"
    a, b = to_numpy(p), to_numpy(t)
    if pn in TOL:
        r, at = TOL[pn]
        np.testing.assert_allclose(a, b, rtol=rtol or r, atol=atol or at, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)
