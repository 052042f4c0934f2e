"""Turn whatever a user logs (a pyctorch tensor, a numpy array, a Python or numpy number) into a numpy array."""
import numbers

import numpy as np


def make_np(value):
    """A numpy array for `value`; a number becomes a 1-element array, as torch's writer does."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (numbers.Number, np.generic)):
        return np.array([value])
    import pyctorch  # already loaded by whoever imported this package; deferred to keep the import graph flat
    if isinstance(value, pyctorch.Tensor):
        if value.dtype == pyctorch.bfloat16:
            # numpy has no bfloat16; float16 is what torch's writer converts to as well
            value = value.to(pyctorch.float16)
        return value.detach().cpu().numpy()
    raise NotImplementedError(f"cannot log a {type(value).__name__}: pass a pyctorch tensor, a numpy array or a number")
