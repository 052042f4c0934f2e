"""torch.func.vmap.

Note [vmap batching rules]
vmap runs `func` once on BatchedTensors (pyctorch/_functorch/batched.py): a Tensor subclass whose own tensor is a
shell with the LOGICAL shape (a detached alias of one sample, so shape/dtype/device/ndim read right with no work),
holding `_phys`, the physical tensor with the batch dim moved to the front, and `_level`, the vmap nesting level.
Every op reaches BatchedTensor.__torch_function__ (Note [Torch function check]); batching_rules.dispatch takes the
highest level among the arguments, unwraps only the arguments of that level to their physical tensors, applies the
op's rule and wraps the results at that level (a physical tensor may itself be a BatchedTensor of a lower level: the
calls on it unwrap that level in turn, which is how nested vmaps compose). The rules come by category from the op
table (`_C._op_table()`), not per op:
  * pointwise (kind unary/binary, and where/clamp/addcmul/lerp/... and the arithmetic dunders): batched arguments
    get size-1 dims after the batch dim up to the call's largest logical rank, so broadcasting aligns; an in-place
    op needs its self batched when another argument is (torch's error otherwise);
  * ops with dim arguments over one tensor input (reductions, softmax, cumsum, sort, topk, squeeze, transpose,
    select, narrow, split, unbind, flatten, diagonal, ...), found by binding the call to the op's schema: the
    non-negative logical dims move up by one (negative ones already count from the end), omitted dims with a
    non-negative default are passed shifted, dim=None of a full reduction reduces a [B, numel] view over dim 1;
  * shape ops by their size arguments (view/reshape/expand/permute/repeat/t; their in-place forms change the
    physical tensor and re-point the shell), as_strided with each sample's offsets counted from its start, basic
    indexing and indexing with adjacent unbatched advanced indices (a full slice first), batched index tensors (an
    arange(B) index for a batched self; the index dims moved where torch's indexing puts them; integer indices
    select first, as in torch), cat/stack (unbatched tensors expanded), the matmul family through matmul's
    broadcasting (a batched 1-d operand is made a matrix and squeezed back), einsum (a new letter for the batch),
    the *_like factories and conversions on the physical tensor, ops over the trailing dims (linalg, tril/triu) on
    the physical tensor as it is, spatial ops and convolution with the batch folded into N (a batched filter:
    the samples become groups), embedding with batched indices, cross_entropy's rows folded into one call;
  * functions written in Python (nn.functional, ...) decompose: their ops come back here one by one; one that
    validates by reading values (a data-dependent error) runs as a whole per sample instead;
  * everything else: the labelled per-sample fallback (batching_rules.per_sample), which warns once per op as
    torch's fallback does, calls the op on each sample's views and stacks.
Calls whose results depend on the values (.item(), bool(t), nonzero, masked_select, ...) raise torch's errors.
Random ops follow `randomness`: 'error' raises (for ops without tensor inputs: when the generator's state moved),
'different' draws with the physical shape (factories without tensor inputs are caught by a TorchFunctionMode that
prepends the batch size), 'same' draws the logical shape once.
Composition (eager_transforms.py): samples never interact through the rules, so autograd and forward AD on the
fully unwrapped physical tensors give per-sample derivatives; the transforms unwrap around autograd.grad and the
forward-AD calls and rewrap the results at the inputs' levels, and inside vmap they first make every differentiated
input batched at all live levels (expanded views), so a gradient is per sample even with respect to an input the
vmap does not map.

Note [vmap by samples]
The older strategy is kept as `vmap_by_samples`: it runs `func` once per index of the mapped dimension on the slices
of the inputs and stacks the results; the per-op fallback above is the same idea for one op.
"""
import functools

from .. import _C
from ..utils._pytree import tree_flatten, tree_unflatten
from .batched import wrap, is_batched, push_level, pop_level, level_info

__all__ = ["vmap", "vmap_by_samples"]


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
    if isinstance(dims, (tuple, list)) and len(spec.children()) == len(dims) and type(dims) is spec.type:
        out = []
        for d, child in zip(dims, spec.children()):
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


def _check_options(randomness, chunk_size):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")


def vmap_by_samples(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap by running func per sample and stacking (Note [vmap by samples])."""
    _check_options(randomness, chunk_size)

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


# ---------------------------------------------------------------- vmap over BatchedTensors

class _DifferentRandomness:
    """A TorchFunctionMode (made on first use) for randomness='different': the random factories that take no tensor
    (rand, randn, randint, normal with a size) draw one sample per batch index."""
    _cls = None

    @classmethod
    def make(cls, level):
        if cls._cls is None:
            from ..overrides import TorchFunctionMode

            class Mode(TorchFunctionMode):
                def __init__(self, level):
                    super().__init__()
                    self.level = level

                def __torch_function__(self, func, types, args=(), kwargs=None):
                    kwargs = kwargs or {}
                    name = getattr(func, "__name__", "")
                    if name in ("rand", "randn", "randint", "normal") and type(func).__name__ == "builtin_function":
                        r = _batched_factory(func, name, args, kwargs, self.level)
                        if r is not NotImplemented:
                            return r
                    return func(*args, **kwargs)
            cls._cls = Mode
        return cls._cls(level)


def _batched_factory(func, name, args, kwargs, level):
    size = level_info(level).size
    a, k = list(args), dict(kwargs)
    if "size" in k:
        k["size"] = (size,) + tuple(k["size"])
    elif name in ("rand", "randn"):
        if any(isinstance(x, _C.Tensor) for x in a):
            return NotImplemented
        dims = tuple(a[0]) if len(a) == 1 and isinstance(a[0], (list, tuple)) else tuple(a)
        a = [(size,) + dims]
    elif name in ("randint", "normal") and a and isinstance(a[-1], (list, tuple)):
        a[-1] = (size,) + tuple(a[-1])
    else:
        return NotImplemented
    return wrap(func(*a, **k), level)


def _flatten_out_dims(out_dims, spec, func):
    if out_dims is None or isinstance(out_dims, int):
        return [out_dims] * spec.num_leaves
    return _broadcast_dims(out_dims if not isinstance(out_dims, list) else tuple(out_dims), spec, func, "out_dims")


def _unwrap_outputs(out, out_dims, func, level, size):
    leaves, spec = tree_flatten(out)
    dims = _flatten_out_dims(out_dims, spec, func)
    res = []
    for x, d in zip(leaves, dims):
        if is_batched(x, level):
            if d is None:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when "
                                 "out_dim is None")
            res.append(x._phys.movedim(0, d))
        elif d is None:
            res.append(x)
        elif not _is_tensor(x):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(x)}. Did you mean to set out_dims= to None for output?")
        else:  # an output that does not depend on the batch: the same value for every sample
            e = x.unsqueeze(d)
            sizes = list(e.shape)
            sizes[d if d >= 0 else d + e.dim()] = size
            res.append(e.expand(sizes))
    return tree_unflatten(res, spec)


def _run(func, leaves, spec, dims, size, kwargs, out_dims, randomness):
    level = push_level(size, randomness)
    try:
        start = _rng_state() if randomness == "error" else None
        inputs = [x if d is None else wrap(x.movedim(d, 0), level) for x, d in zip(leaves, dims)]
        if randomness == "different":
            with _DifferentRandomness.make(level):
                out = func(*tree_unflatten(inputs, spec), **kwargs)
        else:
            out = func(*tree_unflatten(inputs, spec), **kwargs)
        if randomness == "error" and not _equal_state(start, _rng_state()):
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                               "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                               "operation out of vmap")
        return _unwrap_outputs(out, out_dims, func, level, size)
    finally:
        pop_level(level)


def _concat_chunks(chunks, out_dims, func):
    leaves0, spec = tree_flatten(chunks[0])
    dims = _flatten_out_dims(out_dims, spec, func)
    cols = [tree_flatten(c)[0] for c in chunks]
    out = []
    for j, d in enumerate(dims):
        if d is None:
            out.append(cols[0][j])
        else:
            out.append(_C.cat([c[j] for c in cols], d))
    return tree_unflatten(out, spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a dimension of its inputs: vmap(f)(x)[i] == f(x[i]), computed once on batched tensors with
    per-op batching rules (Note [vmap batching rules])."""
    _check_options(randomness, chunk_size)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        leaves, spec, dims, size = _check_in_dims(in_dims, args, func)
        if chunk_size is None or chunk_size >= size:
            return _run(func, leaves, spec, dims, size, kwargs, out_dims, randomness)
        chunks = []
        start = _rng_state() if randomness == "same" else None
        for lo in range(0, size, chunk_size):
            n = min(chunk_size, size - lo)
            if randomness == "same":
                _set_rng_state(start)
            part = [x if d is None else x.narrow(d, lo, n) for x, d in zip(leaves, dims)]
            chunks.append(_run(func, part, spec, dims, n, kwargs, out_dims, randomness))
        return _concat_chunks(chunks, out_dims, func)
    return wrapped
