"""torch.func's remaining transforms and helpers: rearrange (einops patterns), functionalize, debug_unwrap and
replace_all_batch_norm_modules_.

Note [Eager functionalize]: torch.func.functionalize replaces a function's in-place ops on intermediates by their
out-of-place forms, which matters to a tracer; run eagerly, the functionalized function returns what the function
returns and mutates its inputs as the function does (torch copies such mutations back at the end). pyctorch runs
functions eagerly (no functionalized tracing yet), so functionalize runs the function as it is; with
either remove=, outputs that alias an input are returned as copies, as they are in torch (its outputs are new
tensors).
"""
import functools
import keyword

from .. import _C


# ---- rearrange: einops patterns --------------------------------------------------------------------------------

class _Axis:
    """One elementary axis of a pattern: a name, an anonymous length (a number), or an ellipsis dim."""

    def __init__(self, name, length=None):
        self.name, self.length = name, length


def _parse_side(text, side):
    """[[axis, ...] per dim] of one side of a pattern; '...' is kept as the axis named '...'."""
    groups, current, tokens = [], None, text.replace("(", " ( ").replace(")", " ) ").split()
    bracketed = set()
    names = set()
    for tok in tokens:
        if tok == "(":
            if current is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError("Brackets are not balanced")
            groups.append(current)
            bracketed.add(len(groups) - 1)
            current = None
        else:
            if tok == "...":
                axis = _Axis("...")
            elif tok.isdigit():
                if int(tok) != 1:
                    raise ValueError(f"Non-unitary anonymous axes are not supported in rearrange (exception is "
                                     f"length 1): {tok}")
                axis = _Axis(None, int(tok))
            elif tok.isidentifier() and not keyword.iskeyword(tok):
                axis = _Axis(tok)
            else:
                raise ValueError(f"Invalid axis identifier: {tok}")
            if axis.name is not None:
                if axis.name in names:
                    raise ValueError(f"Indexing expression contains duplicate dimension \"{axis.name}\"")
                names.add(axis.name)
            if current is None:
                groups.append([axis])
            else:
                current.append(axis)
    if current is not None:
        raise ValueError("Brackets are not balanced")
    if sum(1 for g in groups for a in g if a.name == "...") > 1:
        raise ValueError("Pattern may contain only one ellipsis")
    return [(g, k in bracketed) for k, g in enumerate(groups)]


def _named(groups):
    return {a.name for g, _ in groups for a in g if a.name is not None}


def rearrange(tensor, pattern, **axes_lengths):
    """Reorders, merges and splits the dims of tensor (or of a sequence of tensors stacked along a new first dim)
    as the einops pattern "left -> right" says."""
    if isinstance(tensor, (list, tuple)):
        tensor = _C.stack(list(tensor))
    if "->" not in pattern:
        raise ValueError("Pattern must contain '->'")
    left_text, right_text = pattern.split("->")
    left, right = _parse_side(left_text, "left"), _parse_side(right_text, "right")
    if _named(left) != _named(right):
        diff = _named(left) ^ _named(right)
        raise ValueError(f"Identifiers only on one side of expression (should be on both): {sorted(diff)}")
    for name in axes_lengths:
        if name not in _named(left):
            raise ValueError(f"Identifier {name} is not used in the pattern")
    has_ellipsis = any(a.name == "..." for g, _ in left for a in g)
    n_fixed = len(left) - (1 if has_ellipsis else 0)
    if (tensor.dim() < n_fixed) if has_ellipsis else (tensor.dim() != n_fixed):
        raise ValueError(f"Wrong shape: expected {'at least ' if has_ellipsis else ''}{n_fixed} dims, got "
                         f"{tensor.dim()}-dim tensor")
    n_ellipsis = tensor.dim() - n_fixed
    lengths = dict(axes_lengths)
    elementary = []  # the left side's elementary axes, in order: (name, length)
    dim = 0
    for group, bracketed in left:
        if not bracketed and len(group) == 1 and group[0].name == "...":
            for k in range(n_ellipsis):
                elementary.append((f"...{k}", tensor.shape[dim]))
                dim += 1
            continue
        if any(a.name == "..." for a in group):
            raise ValueError("Ellipsis inside parenthesis in the left side is not allowed")
        size = tensor.shape[dim]
        known, unknown = 1, [a for a in group if a.name is not None and a.name not in lengths]
        for a in group:
            known *= a.length if a.name is None else lengths.get(a.name, 1)
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {{{', '.join(a.name for a in unknown)}}}")
        if unknown:
            if known == 0 or size % known:
                raise ValueError(f"Shape mismatch, can't divide axis of length {size} in chunks of {known}")
            lengths[unknown[0].name] = size // known
        elif known != size:
            raise ValueError(f"Shape mismatch, {size} != {known}")
        for a in group:
            if a.name is not None:
                elementary.append((a.name, lengths[a.name]))
        dim += 1
    order = {name: k for k, (name, _) in enumerate(elementary)}
    split = tensor.reshape([length for _, length in elementary])
    perm, out_shape = [], []
    for group, bracketed in right:
        size = 1
        for a in group:
            if a.name == "...":
                names = [f"...{k}" for k in range(n_ellipsis)]
            elif a.name is None:
                names = []
            else:
                names = [a.name]
            for name in names:
                perm.append(order[name])
                size *= elementary[order[name]][1]
        if not bracketed and len(group) == 1 and group[0].name == "...":
            out_shape.extend(elementary[order[f"...{k}"]][1] for k in range(n_ellipsis))
        else:
            out_shape.append(size)
    return split.permute(perm).reshape(out_shape)


# ---- functionalize, debug_unwrap, batch norm without running stats -------------------------------------------------

def _aliases_input(out, inputs):
    if not isinstance(out, _C.Tensor):
        return False
    ptr = out.untyped_storage().data_ptr()
    return any(isinstance(x, _C.Tensor) and x.untyped_storage().data_ptr() == ptr for x in inputs)


def functionalize(func, *, remove="mutations"):
    """func without in-place ops on intermediates (Note [Eager functionalize]: eagerly, the same results)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators "
                           "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        from ..utils import _pytree
        result = func(*args, **kwargs)
        inputs = _pytree.tree_leaves((args, kwargs))
        return _pytree.tree_map(lambda o: o.clone() if _aliases_input(o, inputs) else o, result)
    return wrapped


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under vmap's wrapper: a BatchedTensor's physical tensor (its batch dim first; with recurse, through
    every level), anything else as it is (grad and jvp run on plain tensors over the tape)."""
    from .batched import BatchedTensor
    while type(tensor) is BatchedTensor:
        tensor = tensor._phys
        if not recurse:
            break
    return tensor


def replace_all_batch_norm_modules_(root):
    """Every batch norm module of root (root included) set to use batch statistics: running_mean and running_var
    None, track_running_stats False. Returns root."""
    from ..nn.modules.batchnorm import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
