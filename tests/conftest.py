"""Shared test helpers: the torch oracle (optional); the comparison of results lives in comparison.py."""

import os

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

# CUDA as this build and machine have it: the backend built (nvcc was found) or not, and a device usable or not.
CUDA_BUILT = pyctorch._C._cuda_built()
CUDA_USABLE = pyctorch.cuda.is_available()


def cuda_refusal():
    """(exception type, message pattern) of what needs a CUDA device where none can be used: torch's CPU-only build's
    AssertionError without the backend, torch's CUDA build's RuntimeError with it on a machine without a driver or GPU
    (the torch installed here as oracle is a CPU-only build: the second case is checked against its texts)."""
    if not CUDA_BUILT:
        return AssertionError, "not compiled with CUDA"
    return RuntimeError, "Found no NVIDIA driver on your system|No CUDA GPUs are available"


requires_no_cuda_device = pytest.mark.skipif(CUDA_USABLE, reason="a CUDA device is usable here: nothing refuses it")

# The one comparison of outcomes (tests/comparison.py), and its per-dtype tolerances.
from comparison import DTYPE_NAMES, TOL, assert_same, assert_same_outcome, outcome, to_numpy  # noqa: E402,F401


# tests/cuda needs a CUDA device: it runs where one is (PYCTORCH_TEST_CUDA=1 with a GPU, benchmarks/gpu_check.sh) and on
# the simulated device in a child process (test_cuda_simulated.py); the default run does not collect it.
collect_ignore = [] if os.environ.get("PYCTORCH_TEST_CUDA", "") not in ("", "0") else ["cuda"]


_DISTRIBUTED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed") + os.sep


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """The multi-process tests (tests/distributed) run in one pytest-xdist worker, one after the other as without
    xdist: each job binds ports found free a moment earlier (dist_helpers.free_port), which two jobs started side by
    side could both pick. First among the hooks: xdist's own turns the mark into the tests' group when it runs."""
    for item in items:
        if str(item.fspath).startswith(_DISTRIBUTED_DIR):
            item.add_marker(pytest.mark.xdist_group("distributed"))


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: the suite also runs without pytest-xdist
def pytest_xdist_make_scheduler(config, log):
    """Under `--dist loadgroup` (the default test command), work units of whole modules and groups, slowest first
    (tests/xdist_scheduling.py); xdist's own for any other --dist."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist_scheduling import ModuleOrGroupScheduling
    return ModuleOrGroupScheduling(config, log)
