"""OpenBLAS kernel choice on AMD CPUs with AVX-512, made before the extension (and OpenBLAS) loads.

Debian's OpenBLAS (0.3.21, a DYNAMIC_ARCH build) does not recognise AMD Zen 4/5 and falls back to its
Haswell (AVX2) kernels. Those CPUs run the SkylakeX (AVX-512) kernels correctly and about twice as fast
(measured: float32 GEMM 38 -> 75 GFLOP/s on one core, tiny GPT training step 112 -> 58 ms). OpenBLAS
reads OPENBLAS_CORETYPE when it is loaded, so this runs before `pyctorch._C` is imported. A value the
user set is kept, and PYCTORCH_NO_AVX512=1 (the valgrind build) keeps the default.
"""
import os

_SKYLAKEX_FLAGS = {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}


def _cpu_info():
    """(vendor, flags) of the first CPU in /proc/cpuinfo; empty when unreadable."""
    vendor, flags = "", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "vendor_id":
                    vendor = value.strip()
                elif key == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    return vendor, flags


def select_openblas_kernels():
    if "OPENBLAS_CORETYPE" in os.environ or os.environ.get("PYCTORCH_NO_AVX512", "") not in ("", "0"):
        return
    vendor, flags = _cpu_info()
    if vendor == "AuthenticAMD" and _SKYLAKEX_FLAGS <= flags:
        os.environ["OPENBLAS_CORETYPE"] = "SKYLAKEX"
