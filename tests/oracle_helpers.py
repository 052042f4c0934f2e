"""Oracle helpers shared by test_indexing.py and test_join.py: run the same code with torch and
pyctorch (`lib` is the module) and compare results (nested sequences, dtypes, shapes, values) or
exception types."""
import warnings

import numpy as np
import pytest

import pyctorch as pt

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def to_np(x):
    if str(x.dtype).endswith("bfloat16"):
        x = x.float()
    if hasattr(x, "detach"):
        x = x.detach()
    return x.numpy()


def assert_same(got, exp, path="result"):
    if isinstance(exp, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{path}: expected a sequence, got {type(got)}"
        assert len(got) == len(exp), f"{path}: length {len(got)} != {len(exp)}"
        for i, (g, e) in enumerate(zip(got, exp)):
            assert_same(g, e, f"{path}[{i}]")
        return
    if not hasattr(exp, "shape"):
        assert got == exp, f"{path}: {got!r} != {exp!r}"
        return
    assert isinstance(got, pt.Tensor), f"{path}: expected a Tensor, got {type(got)}"
    assert str(got.dtype) == str(exp.dtype), f"{path}: dtype {got.dtype} != {exp.dtype}"
    assert tuple(got.shape) == tuple(exp.shape), f"{path}: shape {tuple(got.shape)} != {tuple(exp.shape)}"
    np.testing.assert_array_equal(to_np(got), to_np(exp), err_msg=path)


def same(torch, f):
    """Runs f(lib) with lib = torch and lib = pyctorch; results or exception types must agree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exp, exp_exc = f(torch), None
        except Exception as e:  # noqa: BLE001 - any torch error is the expectation
            exp, exp_exc = None, e
        try:
            got = f(pt)
        except Exception as e:  # noqa: BLE001
            if exp_exc is None:
                raise
            assert type(e) is type(exp_exc), f"pyctorch {type(e).__name__}: {e}\n torch {type(exp_exc).__name__}: {exp_exc}"
            return
    if exp_exc is not None:
        raise AssertionError(f"torch raised {type(exp_exc).__name__}: {exp_exc}; pyctorch returned {got!r}")
    assert_same(got, exp)


