"""The CUDA tests (tests/cuda) and the op-table tests on CUDA tensors, on pyctorch's simulated CUDA device (Note
[Simulated CUDA device] in csrc/cuda/cuda_driver.h): device memory the host cannot touch, streams, events, the caching
allocator and every op through the backend's paths, on a machine without a GPU. They run in a child process, since the
device is chosen when the backend loads. On a machine with a GPU, benchmarks/gpu_check.sh runs the same tests on it."""
import os
import subprocess
import sys

import pytest

from conftest import CUDA_BUILT, HAVE_TORCH

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_suite(args, devices=2, op_tests=False):
    """pytest args in a child on `devices` simulated GPUs; op_tests: the op-table tests' inputs on CUDA (torch's on
    the CPU, Note [Simulated CUDA device])."""
    env = dict(os.environ, PYCTORCH_SIMULATE_CUDA_DEVICES=str(devices), PYCTORCH_TEST_CUDA="1")
    if op_tests:
        env.update(PYCTORCH_TEST_DEVICE="cuda", PYCTORCH_TEST_TORCH_DEVICE="cpu")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", *args],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    tail = (r.stdout + r.stderr)[-6000:]
    assert r.returncode == 0, tail
    assert " passed" in tail and "error" not in tail.splitlines()[-1], tail


pytestmark = pytest.mark.skipif(not CUDA_BUILT, reason="the CUDA backend is not built (no nvcc)")


def test_cuda_suite_on_the_simulated_device():
    run_suite(["tests/cuda"])


@pytest.mark.skipif(not HAVE_TORCH, reason="the op tests compare with torch")
def test_op_table_on_the_simulated_device():
    """Every op of the table on CUDA tensors gives torch's (CPU) values, dtypes, shapes and errors. to_device's samples
    move results to the CPU on purpose, which the device check of a CUDA run cannot expect."""
    run_suite(["tests/test_ops.py"], devices=1, op_tests=True)


# The gradient tests in three children, which pytest-xdist's workers share out (one child took minutes alone); the
# last takes every test the first two do not name, but for the numerical checks (gradcheck, gradgradcheck): on CUDA
# tensors the first and second derivatives are compared with torch's (the first two children), which checks more
# than finite differences do, and the numerical checks, which evaluate each op many times through the fallback's
# copies, took a third of the suite's time on this device. They run on the CPU (test_autograd_ops.py).
GRADIENT_SHARDS = ["test_grad_vs_torch", "test_double_backward_vs_torch"]
GRADIENT_SHARDS.append("not (" + " or ".join(GRADIENT_SHARDS + ["test_gradcheck", "test_gradgradcheck"]) + ")")


@pytest.mark.skipif(not HAVE_TORCH, reason="the gradient tests compare with torch")
@pytest.mark.parametrize("tests", GRADIENT_SHARDS)
def test_gradients_on_the_simulated_device(tests):
    run_suite(["tests/test_autograd_ops.py", "-k", f"({tests}) and not to_device"], devices=1, op_tests=True)
