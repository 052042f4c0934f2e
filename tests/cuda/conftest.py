"""tests/cuda: the CUDA backend on a device (a GPU, or the simulated device of test_cuda_simulated.py)."""
import pytest

import pyctorch

if not pyctorch.cuda.is_available():
    pytest.skip("no usable CUDA device (run on a GPU, or through tests/test_cuda_simulated.py)", allow_module_level=True)

SIMULATED = pyctorch.cuda.get_device_name(0) == "pyctorch simulated CUDA device"
