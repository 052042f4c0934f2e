"""Helpers of the backward formulas of csrc/aten/ops_nn_extra.def (3-d pooling, grid sampling,
embedding bag); imported into _formulas.py, whose namespace the formulas run in. Each is written
with ordinary operators, so double backward follows where the ops' formulas allow it."""
import pyctorch as torch

__all__ = ["pool3d_index_gather", "grid_sampler_grads", "grid_sampler_backward_grads", "embedding_bag_grads"]


def pool3d_index_gather(grad, indices):
    """The gradient of a (3-d) max pool's backward with respect to its grad_output: the gradient
    of grad_input read back at the saved flat indices of each plane."""
    return grad.flatten(-3).gather(-1, indices.flatten(-3)).view_as(indices)


def grid_sampler_grads(grad, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    fn = torch.grid_sampler_2d_backward if input.dim() == 4 else torch.grid_sampler_3d_backward
    gi, gg = fn(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                [int(bool(m)) for m in output_mask])
    return gi, gg


def _is_zero(t):
    return t is None or not bool(t.ne(0).any())


def grid_sampler_backward_grads(grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                                output_mask):
    """Double backward of grid sampling: grad_input = sampler^T(grad_output) is linear in grad_output, so
    its part with respect to grad_output is the sampler applied to the incoming gradient (all a penalty on
    the input's gradient needs). The other parts (grad_input with respect to the grid, grad_grid with respect
    to anything) are not implemented: they raise where they are needed and the incoming gradient is not 0."""
    g_in, g_grid = grads[0], grads[1]
    need_go, need_in, need_grid = output_mask
    if (need_go and not _is_zero(g_grid)) or (need_in and not _is_zero(g_grid)) or \
            (need_grid and not (_is_zero(g_in) and _is_zero(g_grid))):
        name = "grid_sampler_2d_backward" if input.dim() == 4 else "grid_sampler_3d_backward"
        raise RuntimeError(f"the derivative for '{name}' with respect to the grid (or of grad_grid) is not "
                           "implemented in pyctorch; only the input's gradient can be differentiated again, "
                           "with respect to grad_output")
    go = None
    if need_go:
        if g_in is None:
            go = torch.zeros_like(grad_output)
        else:
            fn = torch.grid_sampler_2d if input.dim() == 4 else torch.grid_sampler_3d
            go = fn(g_in, grid, interpolation_mode, padding_mode, align_corners)
    return go, None, None  # (zero: grad_input does not depend on the input, and here nothing asked for the rest)


def embedding_bag_grads(grad, weight, indices, offsets, offset2bag, bag_size, max_indices, scale_grad_by_freq, mode,
                        per_sample_weights, padding_idx, output_mask):
    """Gradients of _embedding_bag (torch's _embedding_bag_backward and
    _embedding_bag_per_sample_weights_backward) as index_add / scatter_add composites."""
    gw = gp = None
    ind = indices.reshape(-1)
    keep = None
    if padding_idx is not None and padding_idx >= 0:
        keep = (ind != padding_idx).to(grad.dtype).unsqueeze(1)
    if output_mask[0]:
        if mode == 2:  # max: each (bag, column) gradient goes to the row that won it
            valid = (max_indices >= 0).to(grad.dtype)
            gw = torch.zeros_like(weight).scatter_add(0, max_indices.clamp(min=0), grad * valid)
        else:
            rows = grad.index_select(0, offset2bag)
            if mode == 1:
                rows = rows / bag_size.index_select(0, offset2bag).clamp(min=1).to(grad.dtype).unsqueeze(1)
            if per_sample_weights is not None:
                rows = rows * per_sample_weights.unsqueeze(1)
            if keep is not None:
                rows = rows * keep
            if scale_grad_by_freq and ind.numel():
                # torch's CPU kernel divides the rows of the g-th distinct index (in sorted order) by the
                # count of sorted_indices[g] (not of that index itself); the same here, for equal gradients
                counts = torch.bincount(ind, minlength=weight.shape[0]).to(grad.dtype)
                _, group = torch.unique(ind, return_inverse=True)
                rows = rows / counts.index_select(0, ind.sort()[0].index_select(0, group)).unsqueeze(1)
            gw = torch.zeros_like(weight).index_add(0, ind, rows)
    if len(output_mask) > 1 and output_mask[1]:
        gp = (grad.index_select(0, offset2bag) * weight.index_select(0, ind)).sum(1)
        if keep is not None:
            gp = gp * keep.squeeze(1)
    return gw, gp
