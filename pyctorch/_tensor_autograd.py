"""Tensor methods of the autograd API that are thin Python over _C (attached by pyctorch/_tensor.py)."""
from . import _C


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor with respect to the graph's leaves (accumulated in .grad)."""
    from .autograd import backward as _backward
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self, hook):
    """hook(grad) -> Tensor or None runs when this tensor's gradient is computed; returns a handle."""
    return _C._register_tensor_hook(self, hook)


def register_post_accumulate_grad_hook(self, hook):
    """hook(tensor) runs after a leaf's .grad has been accumulated; returns a handle."""
    return _C._register_post_accumulate_grad_hook(self, hook)


def retain_grad(self):
    """Keeps .grad for a non-leaf tensor after backward."""
    _C._retain_grad(self)


TENSOR_METHODS = {
    "backward": backward,
    "register_hook": register_hook,
    "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "retain_grad": retain_grad,
}
