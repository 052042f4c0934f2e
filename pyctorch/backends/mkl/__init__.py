"""torch.backends.mkl: pyctorch's GEMMs use OpenBLAS or a built-in kernel, never MKL."""
__all__ = ["is_available"]


def is_available():
    return False
