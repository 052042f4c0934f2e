"""torch.nn.functional: layer_norm, rms_norm, group_norm, batch_norm, instance_norm, embedding.

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import pyctorch as torch


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return torch.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return torch.rms_norm(input, normalized_shape, weight, eps)


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    n = 1
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size(torch.Size([input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:])))
    return torch.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if training:
        _verify_batch_size(input.shape)
    return torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        _verify_spatial_size(input.shape)
    return torch.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if sparse and weight.requires_grad and torch.is_grad_enabled():
        raise NotImplementedError("pyctorch: sparse gradients are not supported; F.embedding(sparse=True) (and "
                                  "nn.Embedding(sparse=True)) would need torch.sparse tensors. Use sparse=False.")
    if max_norm is not None:
        # torch renormalizes the looked-up rows in place first, without recording it
        input = input.contiguous()
        with torch.no_grad():
            torch.embedding_renorm_(weight, input, max_norm, norm_type)
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
