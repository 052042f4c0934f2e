"""torch.backends.cuda: whether the CUDA backend was built, and its switches.

`matmul.allow_tf32` mirrors torch.get_float32_matmul_precision() as in torch (True <=> not
'highest'); it and the fp16/bf16 reduced-precision-reduction flags reach the CUDA backend's cuBLAS
calls (the CPU computes float32 products in float32 whatever they say). The scaled-dot-product-attention
backend switches are stored and read back; pyctorch's CPU attention is one kernel whatever they say.
"""
import contextlib

__all__ = ["is_built", "matmul", "cuBLASModule", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp", "sdp_kernel",
           "preferred_linalg_library", "preferred_blas_library"]


def is_built():
    """Whether pyctorch was built with its CUDA backend (nvcc was found); whether a GPU is usable is
    torch.cuda.is_available()'s question."""
    from ... import _C
    return _C._cuda_built()


class cuBLASModule:
    """The `torch.backends.cuda.matmul` object: known flags only."""

    _flags = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
              "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation")

    def __init__(self):
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True,
                                             "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        if name == "allow_tf32":
            from ..._dropin import get_float32_matmul_precision
            return get_float32_matmul_precision() != "highest"
        if name in cuBLASModule._flags:
            return self._values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            from ..._dropin import set_float32_matmul_precision
            set_float32_matmul_precision("high" if value else "highest")
            return
        if name in cuBLASModule._flags:
            self._values[name] = bool(value) if not isinstance(value, tuple) else value
            from ..._dropin import _push_matmul_settings
            _push_matmul_settings()
            return
        raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated in torch (use torch.nn.attention.sdpa_kernel); sets the switches for a block."""
    saved = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math),
                mem_efficient=bool(enable_mem_efficient), cudnn=bool(enable_cudnn))
    try:
        yield
    finally:
        _sdp.update(saved)


def preferred_linalg_library(backend=None):
    """No CUDA linear-algebra libraries exist here: nothing to choose, returns None."""
    return None


def preferred_blas_library(backend=None):
    return None
