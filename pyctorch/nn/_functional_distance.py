"""torch.nn.functional: cosine_similarity, pairwise_distance, normalize, and one_hot.

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import pyctorch as torch


def _vector_norm_clamped(x, dim, eps):
    n = torch.linalg.vector_norm(x, 2, dim=dim, keepdim=True)
    with torch.no_grad():
        clamped = n.clamp(min=eps)
    return n + (clamped - n).detach()  # the value of torch's no-grad clamp_min_, its gradient unclamped


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    shape = torch.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)
    common = torch.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        from .._composites import _cpp
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_cpp(common)}")
    if x1.dtype != x2.dtype:
        x1, x2 = x1.to(common), x2.to(common)
    return ((x1 / _vector_norm_clamped(x1, dim, eps)) * (x2 / _vector_norm_clamped(x2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    dim = -1 if max(x1.dim(), x2.dim()) > 0 else 0
    return torch.norm(x1 - x2 + eps, p, dim, keepdim)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != torch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = int(tensor.max())
        if num_classes == -1:
            num_classes = top + 1
        elif num_classes <= top:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = torch.zeros(tuple(tensor.shape) + (num_classes,), dtype=torch.int64)
    return out.scatter(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom if out is None else torch.div(input, denom, out=out)
