"""torch.backends.openmp: whether this pyctorch build was compiled with OpenMP."""
__all__ = ["is_available"]


def is_available():
    from ... import _C
    return bool(_C._build_info().get("openmp", False))
