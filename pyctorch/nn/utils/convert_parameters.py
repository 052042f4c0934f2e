"""Flattening parameters into one vector and back (torch.nn.utils.convert_parameters)."""
import pyctorch as torch

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter, flattened, in order."""
    return torch.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of `vec` into the parameters' data (in order)."""
    if not isinstance(vec, torch.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
