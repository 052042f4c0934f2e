"""torch.sparse: operations on sparse COO tensors (pyctorch/_sparse_coo.py, _sparse_build.py, _sparse_ops.py)."""
from .. import _sparse_ops

__all__ = ["addmm", "mm", "sum", "softmax", "log_softmax"]


def mm(mat1, mat2, reduce=None):
    """mat1 @ mat2 where mat1 is sparse COO (mat2 sparse or dense); differentiable in both."""
    return _sparse_ops.mm(mat1, mat2, reduce=reduce)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2), mat dense and mat1 sparse."""
    return _sparse_ops.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's values over dim (all of them by default): a dense tensor when every sparse
    dimension is summed, else a coalesced sparse one."""
    return _sparse_ops.sparse_sum(input, dim, dtype=dtype)


def softmax(input, dim, *, dtype=None):
    """softmax over dim where the unspecified entries count as -inf (they stay unspecified)."""
    return _sparse_ops.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax over dim where the unspecified entries count as -inf (they stay unspecified)."""
    return _sparse_ops.log_softmax(input, dim, dtype=dtype)
