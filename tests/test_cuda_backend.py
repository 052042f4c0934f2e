"""The CUDA backend as a machine without a GPU sees it (Note [Lazy CUDA] in csrc/aten/cuda_api.h): it is compiled
where nvcc is found, importing pyctorch loads none of it, and without a driver every use refuses as torch's CUDA build
does. The backend's behaviour on a device is tested by tests/cuda, on the simulated device here
(test_cuda_simulated.py) and on a real GPU by benchmarks/gpu_check.sh."""
import os
import shutil
import subprocess
import sys

import pytest

import pyctorch
from conftest import CUDA_BUILT, CUDA_USABLE, cuda_refusal

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NVCC = shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")
# what the child processes below run: this interpreter on this checkout, no simulated device
CHILD_ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYCTORCH_SIMULATE_CUDA")}


def run_child(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=CHILD_ENV, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


@pytest.mark.skipif(not NVCC or os.environ.get("PYCTORCH_NO_CUDA", "") not in ("", "0"),
                    reason="no nvcc on this machine (or PYCTORCH_NO_CUDA): the build is CPU-only by design")
def test_the_backend_is_compiled_where_nvcc_is():
    assert CUDA_BUILT, "nvcc is here but pyctorch/_C_cuda.so was not built"
    assert pyctorch._C._build_info()["cuda"] is True
    assert pyctorch.backends.cuda.is_built()


def test_import_loads_no_cuda():
    """import pyctorch (and seeding, and the memory counters of an unused backend) opens neither the backend's library
    nor the CUDA runtime; the first real use does."""
    out = run_child("import pyctorch as torch\n"
                    "torch.manual_seed(0); torch.cuda.manual_seed_all(0); torch.cuda.memory_allocated()\n"
                    "maps = open('/proc/self/maps').read()\n"
                    "print(torch._C._cuda_loaded(), '_C_cuda' in maps, 'libcuda.so' in maps)\n"
                    "torch.cuda.is_available()\n"
                    "print(torch._C._cuda_loaded() == torch._C._cuda_built())\n")
    assert out.split("\n")[:2] == ["False False False", "True"]


@pytest.mark.skipif(CUDA_USABLE, reason="a CUDA device is usable here: nothing refuses it")
def test_without_a_device_cuda_refuses_like_torch():
    refusal, message = cuda_refusal()
    assert pyctorch.cuda.is_available() is False
    assert pyctorch.cuda.device_count() == 0
    assert pyctorch.cuda.memory_allocated() == 0 and pyctorch.cuda.memory_stats() == {}
    for make in (lambda: pyctorch.zeros(2, device="cuda"), lambda: pyctorch.ones(2).to("cuda"),
                 lambda: pyctorch.ones(2).cuda(), lambda: pyctorch.tensor([1.0], device="cuda:0"),
                 lambda: pyctorch.randn(2, device="cuda"), pyctorch.cuda.current_device, pyctorch.cuda.synchronize,
                 lambda: pyctorch.cuda.get_device_name(0), pyctorch.cuda.Stream):
        with pytest.raises(refusal, match=message):
            make()
    assert pyctorch.ones(2).is_pinned() is False


@pytest.mark.skipif(not CUDA_BUILT or CUDA_USABLE, reason="needs the CUDA backend built, and no device (torch's CUDA "
                                                            "build without a driver)")
def test_without_a_driver_the_errors_are_torchs():
    with pytest.raises(RuntimeError) as e:
        pyctorch.zeros(1, device="cuda")
    assert str(e.value) == ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
                            "installed a driver from http://www.nvidia.com/Download/index.aspx")
    with pyctorch.cuda.device(None), pyctorch.cuda.stream(None):  # None selects nothing, as in torch
        pass
    assert pyctorch.cuda.is_initialized() is False
