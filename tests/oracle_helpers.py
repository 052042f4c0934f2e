"""Oracle helpers shared by test_indexing.py and test_join.py: run the same code with torch and
pyctorch (`lib` is the module) and compare the outcomes with the one comparison (comparison.py),
exactly: indexing and joining copy values, they do not compute them."""
import pytest

import pyctorch as pt
from comparison import DTYPE_NAMES as DTYPES, assert_same, assert_same_outcome  # noqa: F401


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def same(torch, f):
    """Runs f(lib) with lib = torch and lib = pyctorch; results (exactly) or exception types must agree."""
    assert_same_outcome(lambda: f(pt), lambda: f(torch), exact=True)
