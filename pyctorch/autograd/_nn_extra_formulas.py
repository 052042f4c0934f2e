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


# Note [Grid sampler double backward]: the second derivatives of grid sampling come from a composite of the
# same math in table ops (grid_sample_composite: torch's unnormalize / padding maps, floor-detached corner
# positions, the same weights), differentiated twice by autograd: with L = <grad_output, sample(input, grid)>,
# grad_input = dL/dinput and grad_grid = dL/dgrid, the gradients of <grads[0], grad_input> + <grads[1], grad_grid>
# with respect to (grad_output, input, grid). The values are second order only (the copies are detached).
def _gs_unnormalize(c, size, align):
    return ((c + 1) / 2) * (size - 1) if align else ((c + 1) * size - 1) / 2


def _gs_reflect(x, twice_low, twice_high):
    if twice_low == twice_high:
        return torch.zeros_like(x)
    mn, span = twice_low / 2, (twice_high - twice_low) / 2
    x = (x - mn).abs()
    extra = torch.fmod(x, span)
    flips = torch.floor(x / span)
    return torch.where(torch.fmod(flips, 2) == 0, extra + mn, span - extra + mn)


def _gs_coords(x, size, pad, align):
    if pad == 1:
        x = x.clamp(0, size - 1)
    elif pad == 2:
        x = _gs_reflect(x, 0, 2 * (size - 1)) if align else _gs_reflect(x, -1, 2 * size - 1)
        x = x.clamp(0, size - 1)
    return x


def _gs_read(flat, sizes, pos, valid):
    """flat (N, C, P) read at integer positions pos[k] (N, Q) per dim (x first); 0 where not valid."""
    idx = None
    for k in range(len(pos) - 1, -1, -1):
        size = sizes[len(sizes) - 1 - k]
        p = pos[k].clamp(0, size - 1)
        idx = p if idx is None else idx * size + p
    n, c = flat.shape[0], flat.shape[1]
    v = flat.gather(2, idx.unsqueeze(1).expand(n, c, idx.shape[1]))
    return v * valid.unsqueeze(1).to(flat.dtype)


def grid_sample_composite(input, grid, mode, pad, align):
    """torch's grid sampling written with differentiable table ops (the double backward of grid_sampler)."""
    nd = grid.shape[-1]
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])          # (D,) H, W
    out_sp = list(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    g = grid.reshape(n, -1, nd)
    src = []
    for k in range(nd):
        size = sizes[nd - 1 - k]
        u = _gs_unnormalize(g[..., k], size, align)
        src.append(u if mode == 2 else _gs_coords(u, size, pad, align))
    if mode == 1:
        pos = [torch.round(s).detach().to(torch.int64) for s in src]
        valid = None
        for k in range(nd):
            ok = (pos[k] >= 0) & (pos[k] < sizes[nd - 1 - k])
            valid = ok if valid is None else valid & ok
        out = _gs_read(flat, sizes, pos, valid)
    elif mode == 0:
        f = [torch.floor(s).detach() for s in src]
        out = None
        for cn in range(1 << nd):
            w, pos, valid = None, [], None
            for k in range(nd):
                hi = (cn >> k) & 1
                part = (src[k] - f[k]) if hi else (f[k] + 1 - src[k])
                w = part if w is None else w * part
                p = f[k].to(torch.int64) + hi
                pos.append(p)
                ok = (p >= 0) & (p < sizes[nd - 1 - k])
                valid = ok if valid is None else valid & ok
            term = _gs_read(flat, sizes, pos, valid) * w.unsqueeze(1)
            out = term if out is None else out + term
    else:  # bicubic (2-d)
        A = -0.75
        fx, fy = torch.floor(src[0]).detach(), torch.floor(src[1]).detach()
        tx, ty = src[0] - fx, src[1] - fy

        def coeffs(t):
            x1, x2 = t, 1 - t
            return [((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A,
                    ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1,
                    ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1,
                    ((A * (x2 + 1) - 5 * A) * (x2 + 1) + 8 * A) * (x2 + 1) - 4 * A]
        cx, cy = coeffs(tx), coeffs(ty)
        out = None
        for j in range(4):
            row = None
            for i in range(4):
                px = _gs_coords(fx - 1 + i, sizes[1], pad, align).detach()
                py = _gs_coords(fy - 1 + j, sizes[0], pad, align).detach()
                ix, iy = px.to(torch.int64), py.to(torch.int64)
                valid = (ix >= 0) & (ix < sizes[1]) & (iy >= 0) & (iy < sizes[0]) & (px > -1) & (py > -1)
                term = _gs_read(flat, sizes, [ix, iy], valid) * cx[i].unsqueeze(1)
                row = term if row is None else row + term
            term = row * cy[j].unsqueeze(1)
            out = term if out is None else out + term
    return out.reshape([n, c] + out_sp)


def grid_sampler_backward_grads(grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                                output_mask):
    g_in, g_grid = grads[0], grads[1]
    with torch.enable_grad():
        go = grad_output.detach().requires_grad_()
        x = input.detach().requires_grad_()
        g = grid.detach().requires_grad_()
        out = grid_sample_composite(x, g, interpolation_mode, padding_mode, align_corners)
        gi, gg = torch.autograd.grad(out, (x, g), go, create_graph=True, allow_unused=True)
        s = None
        for first, inc in ((gi, g_in), (gg, g_grid)):
            if first is not None and inc is not None and first.requires_grad:
                term = (first * inc.detach()).sum()
                s = term if s is None else s + term
        if s is None:
            return None, None, None
        want = [t for t, m in zip((go, x, g), output_mask) if m]
        got = iter(torch.autograd.grad(s, want, allow_unused=True))
    # unconnected parts (nearest): torch gives the grid a zero gradient and the input none
    res = [next(got) if m else None for m in output_mask]
    if output_mask[2] and res[2] is None:
        res[2] = torch.zeros_like(grid)
    return tuple(res)


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
