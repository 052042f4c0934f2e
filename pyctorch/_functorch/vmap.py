"""torch.func.vmap.

Note [vmap by samples]
pyctorch has no batched tensor type and no per-op batching rules yet, so vmap is the fallback torch itself keeps for
ops without a rule: it runs `func` once per index of the mapped dimension on the slices of the batched inputs (views,
no copies) and stacks the results along out_dims. Everything else follows torch: the in_dims/out_dims trees and their
checks and messages, chunk_size, the randomness modes ('error' refuses a function that draws random numbers, 'same'
gives every sample the same draws, 'different' independent ones), nesting, and composition with the other transforms
(vmap(grad(f)) gives per-sample gradients). What differs: a function is free to branch on its sample's values and to
call .item(), which torch's vmap refuses, and the cost grows with the batch size.
"""
import functools

from .. import _C
from ..utils._pytree import tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _name(func):
    return getattr(func, "__name__", repr(func))


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def _broadcast_dims(dims, spec, func, what):
    """One in_dim per leaf of the inputs whose structure is `spec` (an int or None for a whole subtree)."""
    if dims is None or isinstance(dims, int):
        return [dims] * spec.num_leaves
    dleaves, dspec = tree_flatten(dims, is_leaf=lambda x: x is None)
    if dspec == spec:
        return dleaves
    # an int or None stands for every leaf of the subtree at its position
    if isinstance(dims, (tuple, list)) and len(spec.children_specs) == len(dims) and type(dims) is spec.type:
        out = []
        for d, child in zip(dims, spec.children_specs):
            out.extend(_broadcast_dims(d, child, func, what))
        return out
    raise ValueError(f"vmap({_name(func)}, {what}=..., ...)(<inputs>): {what} is not compatible with the structure of "
                     f"`inputs`. {what} has structure {tree_flatten(dims)[1]} but inputs has structure {spec}.")


def _check_in_dims(in_dims, args, func):
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    leaves, spec = tree_flatten(args)
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    dims = _broadcast_dims(in_dims if isinstance(in_dims, int) else tuple(in_dims), spec, func, "in_dims")
    sizes = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if not _is_tensor(leaf):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             f"the input is of type {type(leaf)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        if not -leaf.ndim <= d < leaf.ndim:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                             f"but that input is a Tensor of dimensionality {leaf.ndim} so expected in_dim to satisfy "
                             f"-{leaf.ndim} <= in_dim < {leaf.ndim}.")
        sizes.append(leaf.shape[d])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be batched "
                         "(in_dims must not all be None).")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return leaves, spec, dims, sizes[0]


def _stack_outputs(rows, out_dims, func, size):
    """rows: one output tree per sample; stacked leaf by leaf along out_dims."""
    leaves0, spec = tree_flatten(rows[0])
    if out_dims is None or isinstance(out_dims, int):
        dims = [out_dims] * len(leaves0)
    else:
        dims = _broadcast_dims(out_dims if not isinstance(out_dims, list) else tuple(out_dims), spec, func, "out_dims")
    cols = [tree_flatten(r)[0] for r in rows]
    out = []
    for j, d in enumerate(dims):
        col = [c[j] for c in cols]
        if d is None:
            out.append(col[0])
            continue
        if not all(_is_tensor(x) for x in col):
            bad = next(x for x in col if not _is_tensor(x))
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(bad)}. Did you mean to set out_dims= to None for output?")
        out.append(_C.stack(col, d))
    return tree_unflatten(out, spec)


def _check_out_dims(out_dims, func):
    if out_dims is None or isinstance(out_dims, int):
        return
    if isinstance(out_dims, (tuple, list)):
        leaves = tree_flatten(out_dims, is_leaf=lambda x: x is None)[0]
        if all(x is None or isinstance(x, int) for x in leaves):
            return
    raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims must be an int, None or a "
                     f"python collection of ints representing where in the outputs the vmapped dimension should "
                     f"appear.")


def _rng_state():
    import pyctorch
    return pyctorch.get_rng_state()


def _set_rng_state(s):
    import pyctorch
    pyctorch.set_rng_state(s)


def _equal_state(a, b):
    return bool((a == b).all())


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a dimension of its inputs: vmap(f)(x)[i] == f(x[i]) (Note [vmap by samples])."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        leaves, spec, dims, size = _check_in_dims(in_dims, args, func)
        rows = []
        start = _rng_state()
        for b in range(size):
            if randomness == "same" and b:
                _set_rng_state(start)
            sample = [x if d is None else x.select(d, b) for x, d in zip(leaves, dims)]
            rows.append(func(*tree_unflatten(sample, spec), **kwargs))
            if b == 0 and randomness == "error" and not _equal_state(start, _rng_state()):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        if size == 0:
            raise ValueError("vmap: the mapped dimension has size 0; pyctorch's vmap runs the function per sample "
                             "(Note [vmap by samples]) and cannot infer the output of an empty batch")
        return _stack_outputs(rows, out_dims, func, size)
    return wrapped
