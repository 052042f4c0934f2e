"""torch.backends.cpu: the vector instruction level pyctorch's kernels dispatch to on this CPU."""
__all__ = ["get_cpu_capability"]


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def get_cpu_capability():
    """'AVX512', 'AVX2' or 'DEFAULT' (x86-64): the best kernel variant pyctorch's runtime
    dispatch picks here (AVX-512F kernels, else AVX2+FMA kernels, else portable C)."""
    import platform
    if platform.machine().lower() not in ("x86_64", "amd64", "i686", "i386"):
        return "DEFAULT"
    flags = _cpu_flags()
    if "avx512f" in flags:
        return "AVX512"
    if "avx2" in flags and "fma" in flags:
        return "AVX2"
    return "DEFAULT"
