"""torch.backends for pyctorch: the flags scripts set, stored and readable, with honest answers.

pyctorch computes on the CPU with its own kernels, OpenBLAS and (when built with it) OpenMP;
it has no cuDNN, CUDA, MPS, oneDNN (mkldnn) or MKL, and each submodule's is_available() says
so. Flags such as cudnn.benchmark or cuda.matmul.allow_tf32 steer nothing here; they keep
the values scripts give them so that code reading them back behaves as under torch.
"""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
