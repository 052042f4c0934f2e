"""torch.func's autodiff transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, linearize.

Note [Transforms over the tape]
The reverse transforms run the function with grad mode on over inputs made into fresh autograd variables and ask the
engine for the gradients; an input that already requires grad (it comes from an outer transform, or the caller's
own graph) is not detached but aliased (a view of it), and the gradients are then taken with create_graph=True, so
the outer level differentiates through the inner one: grad(grad(f)), jacrev(jacrev(f)), and a torch.func.grad result
that the caller's backward() reaches, as in torch. jvp and jacfwd run on forward AD with a dual level of their own
(levels nest: Note [Forward AD]), so jacfwd(jacrev(f)) is forward-over-reverse as torch's hessian is. jacrev and jacfwd
take one vector-Jacobian (Jacobian-vector) product per output (input) element. Inside vmap the transforms work on
the physical tensors (Note [vmap batching rules]): `_variables` makes every differentiated input batched at each live
vmap level, and the autograd and forward-AD calls see the fully unwrapped tensors, their results rewrapped at the
inputs' levels.
"""
import functools

from .. import _C
from ..autograd import _forward_ad
from ..autograd.grad_mode import enable_grad
from ..utils._pytree import tree_flatten, tree_unflatten
from . import batched as _bt

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def _check_argnums(argnums, nargs):
    if isinstance(argnums, bool) or not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in argnums):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {argnums}")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        for a in argnums:
            _check_argnums(a, nargs)
        return
    if not -nargs <= argnums < nargs:
        raise RuntimeError(f"Got argnum={argnums}, but only {nargs} positional inputs")


def _diff_args(args, argnums):
    return tuple(args[a] for a in argnums) if isinstance(argnums, tuple) else args[argnums]


def _replace_args(args, argnums, new):
    args = list(args)
    if isinstance(argnums, tuple):
        for a, v in zip(argnums, new):
            args[a] = v
    else:
        args[argnums] = new
    return tuple(args)


def _check_leaves(leaves):
    for x in leaves:
        if not _is_tensor(x):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")


def _variables(leaves):
    """Fresh autograd variables for the inputs a reverse transform differentiates, and whether an outer level (or
    the caller's graph) differentiates through them (Note [Transforms over the tape])."""
    _check_leaves(leaves)
    outer = any(x.requires_grad for x in leaves)
    live = _bt.active_levels()
    with enable_grad():
        if live:  # per-sample gradients: every input batched at every live vmap level
            leaves = [_bt.promote(x, live) for x in leaves]
        made = [x.view_as(x) if x.requires_grad else
                _copy_tangents(x, x.detach().requires_grad_(True)) for x in leaves]
    return made, outer


def _copy_tangents(src, dst):
    if type(src) is _bt.BatchedTensor or type(dst) is _bt.BatchedTensor:
        _forward_ad.copy_tangents(_bt.full_phys(src), _bt.full_phys(dst))
        return dst
    return _forward_ad.copy_tangents(src, dst)


def _get_tangent(o, lv):
    if type(o) is _bt.BatchedTensor:
        t = _forward_ad.get_tangent(_bt.full_phys(o), lv)
        return None if t is None else _bt.rewrap(t, _bt.levels_of(o))
    return _forward_ad.get_tangent(o, lv)


def _alias_without_tangents(o, k):
    if type(o) is _bt.BatchedTensor:
        return _bt.rewrap(_forward_ad.alias_without_tangents(_bt.full_phys(o), k), _bt.levels_of(o))
    return _forward_ad.alias_without_tangents(o, k)


def _make_dual(p, t, k):
    from ..autograd.forward_ad import make_dual
    if type(p) is _bt.BatchedTensor or type(t) is _bt.BatchedTensor:
        levels = sorted(set(_bt.levels_of(p)) | set(_bt.levels_of(t)))
        dual = make_dual(_bt.full_phys(_bt.promote(p, levels)), _bt.full_phys(_bt.promote(t, levels)), level=k)
        return _bt.rewrap(dual, levels)
    return make_dual(p, t, level=k)


def _unwrap(tree, keep):
    """What a transform hands back: without history of its own level unless an outer level needs it."""
    if keep:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_copy_tangents(x, x.detach()) if _is_tensor(x) else x for x in leaves], spec)


def _gradients(outputs, inputs, grad_outputs, create):
    """autograd.grad over the outputs that have history (the others contribute nothing); zeros for unused inputs."""
    from .. import autograd
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if any(type(x) is _bt.BatchedTensor for x in list(outputs) + list(inputs) + list(grad_outputs)):
        return _batched_gradients(pairs, inputs, create)
    if pairs:
        gs = autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                           create_graph=create, allow_unused=True)
    else:
        gs = (None,) * len(inputs)
    return [_C.zeros_like(i) if g is None else g for g, i in zip(gs, inputs)]


def _batched_gradients(pairs, inputs, create):
    """_gradients inside vmap: autograd.grad on the fully unwrapped tensors (samples never interact through the
    batching rules, so these are per-sample gradients), results rewrapped at the inputs' levels. A cotangent batched
    at a level its output is not (vmap over a vjp_fn made outside) is looped over that level."""
    from .. import autograd
    for o, g in pairs:
        extra = set(_bt.levels_of(g)) - set(_bt.levels_of(o))
        if extra:
            lv = max(extra)
            if any(lv <= m for x in inputs for m in _bt.levels_of(x)):
                raise RuntimeError("vmap: a cotangent is batched at a vmap level below the one its vjp was made in")
            rows = []
            for b in range(_bt.level_info(lv).size):
                sel = [(oo, _select_level(gg, lv, b)) for oo, gg in pairs]
                rows.append(_batched_gradients(sel, inputs, create))
            return [_bt.wrap(_C.stack([r[j] for r in rows]), lv) for j in range(len(inputs))]
    if pairs:
        outs = [_bt.full_phys(o) for o, _ in pairs]
        gos = [_bt.full_phys(_bt.promote(g, _bt.levels_of(o))) for o, g in pairs]
        gs = autograd.grad(outs, [_bt.full_phys(i) for i in inputs], gos, retain_graph=True, create_graph=create,
                           allow_unused=True)
    else:
        gs = (None,) * len(inputs)
    return [_C.zeros_like(i) if g is None else _bt.rewrap(g, _bt.levels_of(i)) for g, i in zip(gs, inputs)]


def _select_level(x, lv, b):
    """Sample b of level lv of x (x unchanged if not batched at lv)."""
    levels = _bt.levels_of(x)
    if lv not in levels:
        return x
    full = _bt.full_phys(x).select(levels.index(lv), b)
    return _bt.rewrap(full, [m for m in levels if m != lv])


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient of func with respect to args[argnums], value of func); func returns a scalar tensor."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        leaves, spec = tree_flatten(_diff_args(args, argnums))
        made, outer = _variables(leaves)
        with enable_grad():
            out = func(*_replace_args(args, argnums, tree_unflatten(made, spec)), **kwargs)
            out, aux = _split_aux(out, has_aux, "grad_and_value(f)(*args)")
            if not _is_tensor(out):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = _gradients([out], made, [_C.ones_like(out)], outer)
        grads = _unwrap(tree_unflatten(grads, spec), outer)
        value = _unwrap(out, outer)
        if has_aux:
            return grads, (value, _unwrap(aux, outer))
        return grads, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of func (a scalar-valued function) with respect to args[argnums]."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, v = gv(*args, **kwargs)
        if has_aux:
            return g, v[1]
        return g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives the vector-Jacobian product per primal."""
    leaves, spec = tree_flatten(primals)
    made, outer = _variables(leaves)
    with enable_grad():
        out = func(*tree_unflatten(made, spec))
        out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
    out_leaves, out_spec = tree_flatten(out)
    for o in out_leaves:
        if not _is_tensor(o):
            raise RuntimeError("vjp(f, *primals): Expected f to be a function that has only tensors as outputs, got "
                               f"unsupported type {type(o)}")

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {ct_spec}, primal output: {out_spec}")
        for o, c in zip(out_leaves, ct_leaves):
            if _is_tensor(c) and tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has a "
                                   f"shape of {o.shape}.")
        create = outer if create_graph is None else create_graph
        with enable_grad():
            grads = _gradients(out_leaves, made, ct_leaves, create)
        return _unwrap(tree_unflatten(grads, spec), create)
    value = _unwrap(out, outer)
    if has_aux:
        return value, vjp_fn, _unwrap(aux, outer)
    return value, vjp_fn


def _jvp_check(primals, tangents):
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to call "
                           "f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {p_spec} and tangents with structure {t_spec}")
    _check_leaves(p_leaves)
    _check_leaves(t_leaves)
    return p_leaves, t_leaves, p_spec


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with tangents), by forward-mode AD."""
    p_leaves, t_leaves, spec = _jvp_check(primals, tangents)
    k = _forward_ad.push_level(False)
    try:
        duals = [_make_dual(p, t, k) for p, t in zip(p_leaves, t_leaves)]
        out = func(*tree_unflatten(duals, spec))
        out, aux = _split_aux(out, has_aux, "jvp(f, primals, tangents)")
        out_leaves, out_spec = tree_flatten(out)
        lv = _forward_ad.level_of(k)
        primal_out, tangent_out = [], []
        for o in out_leaves:
            if not _is_tensor(o):
                raise RuntimeError("jvp(f, primals, tangents): expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            t = _get_tangent(o, lv)
            primal_out.append(_alias_without_tangents(o, k))
            tangent_out.append(_C.zeros_like(o) if t is None else t)
        if has_aux:
            aux_leaves, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([_alias_without_tangents(a, k) if _is_tensor(a) else a
                                  for a in aux_leaves], aux_spec)
    finally:
        _forward_ad.pop_level(k)
    result = (tree_unflatten(primal_out, out_spec), tree_unflatten(tangent_out, out_spec))
    return result + (aux,) if has_aux else result


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at primals."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return out, jvp_fn


def _jacobian_tree(out_leaves, out_spec, blocks, in_spec, argnums):
    """blocks[i][j]: d out_leaves[i] / d input leaf j, shaped out.shape + in.shape; arranged as torch arranges them:
    the outputs' structure, each leaf holding the inputs' structure."""
    per_out = [tree_unflatten(row, in_spec) for row in blocks]
    return tree_unflatten(per_out, out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func with respect to args[argnums] by reverse mode, one vector-Jacobian product per output
    element."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        leaves, in_spec = tree_flatten(_diff_args(args, argnums))
        made, outer = _variables(leaves)
        with enable_grad():
            out = func(*_replace_args(args, argnums, tree_unflatten(made, in_spec)), **kwargs)
            out, aux = _split_aux(out, has_aux, "jacrev(f, ...)(*args)")
            out_leaves, out_spec = tree_flatten(out)
            for o in out_leaves:
                if not _is_tensor(o):
                    raise RuntimeError("jacrev(f, ...)(*args): Expected f to be a function that has only tensors as "
                                       f"outputs, got unsupported type {type(o)}")
            blocks = []
            for o in out_leaves:
                n = o.numel()
                rows = []
                for i in range(n):
                    e = _C.zeros(n, dtype=o.dtype, device=o.device)
                    e[i] = 1
                    rows.append(_gradients([o], made, [e.reshape(o.shape)], outer))
                blocks.append([
                    (_C.stack([r[j] for r in rows]) if rows else
                     _C.zeros((0,) + tuple(x.shape), dtype=x.dtype, device=x.device)).reshape(
                        tuple(o.shape) + tuple(x.shape))
                    for j, x in enumerate(made)])
        jac = _unwrap(_jacobian_tree(out_leaves, out_spec, blocks, in_spec, argnums), outer)
        if has_aux:
            return jac, _unwrap(aux, outer)
        return jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of func with respect to args[argnums] by forward mode, one Jacobian-vector product per input
    element."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        leaves, in_spec = tree_flatten(_diff_args(args, argnums))
        _check_leaves(leaves)

        def f(*diff):
            return func(*_replace_args(args, argnums, tree_unflatten(list(diff), in_spec)), **kwargs)
        cols = []  # per input leaf: per element, the tangents of every output leaf
        out_leaves = out_spec = aux = None
        for j, x in enumerate(leaves):
            per_elem = []
            for i in range(x.numel()):
                ts = [_C.zeros_like(y) for y in leaves]
                e = _C.zeros(x.numel(), dtype=x.dtype, device=x.device)
                e[i] = 1
                ts[j] = e.reshape(x.shape)
                r = jvp(f, tuple(leaves), tuple(ts), has_aux=has_aux)
                if has_aux:
                    out, tan, aux = r
                    out, _ = out, None
                else:
                    out, tan = r
                if out_leaves is None:
                    out_leaves, out_spec = tree_flatten(out)
                per_elem.append(tree_flatten(tan)[0])
            cols.append(per_elem)
        if out_leaves is None:  # every input is empty: one call for the outputs' shapes
            out = f(*leaves)
            if has_aux:
                out, aux = _split_aux(out, True, "jacfwd(f, ...)(*args)")
            out_leaves, out_spec = tree_flatten(out)
        blocks = []
        for k, o in enumerate(out_leaves):
            row = []
            for j, x in enumerate(leaves):
                if cols[j]:
                    col = _C.stack([c[k] for c in cols[j]], -1)
                else:
                    col = _C.zeros(tuple(o.shape) + (0,), dtype=o.dtype, device=o.device)
                row.append(col.reshape(tuple(o.shape) + tuple(x.shape)))
            blocks.append(row)
        jac = _jacobian_tree(out_leaves, out_spec, blocks, in_spec, argnums)
        if has_aux:
            return jac, aux
        return jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of func with respect to args[argnums]: jacfwd(jacrev(func)), forward over reverse as torch."""
    return jacfwd(jacrev(func, argnums), argnums)
