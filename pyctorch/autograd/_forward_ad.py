"""Forward-mode AD: dual levels, the tangent tables and the op hook (Note [Forward AD] in csrc/autograd/forward_ad.c).

A level is a table from id(primal) to (weak reference to the primal, tangent). The C binding calls `_hook` before
every op while a level exists; the hook looks the op's tensor arguments up in the live levels and, when one has a
tangent, returns a function that computes the result's tangents from the op's PCT_FWGRAD formula once the kernel
has run. Formulas run with their own level (and every level inside it) suspended: their ops propagate only the
tangents of the levels outside, which is what nests torch.func.jvp (the inner tangents get outer tangents).
"""
import ast
import keyword
import threading
import weakref

from .. import _C

__all__ = []


class _Level:
    __slots__ = ("table", "public", "__weakref__")

    def __init__(self, public):
        self.table = {}
        self.public = public  # made by enter_dual_level (torch.autograd.forward_ad), not by torch.func


_levels = []  # the live levels, outermost first; a level's number is its position
_tls = threading.local()  # .limit: only the levels below it propagate on this thread (None: all)


def _limit():
    return getattr(_tls, "limit", None)


class _propagating_below:
    """Within it, ops on this thread propagate the tangents of the levels numbered below `k` only (0: none)."""

    def __init__(self, k):
        self.k = k

    def __enter__(self):
        self.saved = _limit()
        k = self.k if self.saved is None else min(self.k, self.saved)
        _tls.limit = k
        self.was = _C._forward_ad_suspend(k == 0)

    def __exit__(self, *exc):
        _tls.limit = self.saved
        _C._forward_ad_suspend(self.was)


def push_level(public):
    lv = _Level(public)
    _levels.append(lv)
    if len(_levels) == 1:
        _C._set_forward_ad_hook(_hook, copy_tangents)
    return len(_levels) - 1


def pop_level(k):
    lv = _levels.pop(k)
    lv.table.clear()  # the tangents go with their level (and the cycles through the weakref callbacks)
    if not _levels:
        _C._set_forward_ad_hook(None, None)


def level_of(k):
    return _levels[k]


def get_tangent(t, lv):
    e = lv.table.get(id(t))
    if e is not None and e[0]() is t:
        return e[1]
    return None


def set_tangent(t, tangent, lv):
    key = id(t)
    table = lv.table
    if tangent is None:
        table.pop(key, None)
        return

    def drop(ref, key=key, table=table):
        e = table.get(key)
        if e is not None and e[0] is ref:
            del table[key]
    table[key] = (weakref.ref(t, drop), tangent)


def copy_tangents(src, dst):
    """dst gets src's tangents at every level this thread propagates (a detached variable made by a reverse
    transform keeps the tangents of the forward transforms around it)."""
    lim = _limit()
    for lv in (_levels if lim is None else _levels[:lim]):
        t = get_tangent(src, lv)
        if t is not None:
            set_tangent(dst, t, lv)
    return dst


def propagate(out, fn, inputs):
    """For computations that are not table ops (the C index accumulation of getitem's backward): out gets, at each
    live level where an input has a tangent, fn applied to the inputs' tangents (zeros for the others)."""
    import pyctorch as torch
    lim = _limit()
    levels = _levels if lim is None else _levels[:lim]
    for k, lv in enumerate(levels):
        ts = [get_tangent(x, lv) for x in inputs]
        if any(t is not None for t in ts):
            with _propagating_below(k):
                t = fn(*[torch.zeros_like(x) if t is None else t for x, t in zip(inputs, ts)])
            set_tangent(out, t, lv)
    return out


def _write_through_base(view, t, lv):
    """An in-place op changed `view`'s tangent to t: its base's tangent gets t at the view's place, and the view's
    tangent becomes that part of the base's (so the base and its other views see the write, as in torch)."""
    import pyctorch as torch
    base = view._base
    bt = get_tangent(base, lv)
    if bt is None or bt.stride() != base.stride():
        fresh = torch.empty_strided(base.shape, base.stride(), dtype=t.dtype, device=base.device)
        fresh.copy_(torch.zeros_like(base) if bt is None else bt)
        bt = fresh
        set_tangent(base, bt, lv)
    part = bt.as_strided(view.shape, view.stride(), bt.storage_offset() + view.storage_offset() - base.storage_offset())
    part.copy_(t)
    set_tangent(view, part, lv)


def alias_without_tangents(t, k=0):
    """A view of t without tangents at level k and inside it; the levels outside (below k) still see their tangents
    on it (unpack_dual's primal, make_dual's dual before its tangent is set)."""
    with _propagating_below(k):
        return t.view_as(t)


# ---- compiling the PCT_FWGRAD lines -------------------------------------------------------------

_INFO = {}
_NS = None
_MISSING = "missing"
_NONDIFF = "nondiff"
_COMPOSITE = "composite"


class _Rename(ast.NodeTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(self.new, node.ctx), node) if node.id == self.old else node


def _rename(expr, old, new):
    tree = _Rename(old, new).visit(ast.parse(expr, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))


def _names(expr):
    return {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}


def _namespace():
    global _NS
    if _NS is None:
        from . import _formulas
        _NS = dict(_formulas._namespace())
        _NS["_call_op"] = _call_op
        _NS["_fw_complex"] = _fw_complex
    return _NS


def _fw_complex(*tensors):
    """Whether an element-wise op's JVP takes its formula's complex variant: a complex result or input."""
    return any(isinstance(x, _C.Tensor) and x.dtype.is_complex for x in tensors)


def _call_op(op_index, values):
    """The op applied to `values` (one per parameter; auto_linear: the tangents in place of the primals)."""
    r = _C._call_op(op_index, tuple(values))
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _differentiable(params, codes, bw):
    """The parameters a backward formula is written for (grouped targets too): those that carry tangents."""
    out = set()
    for f in bw or ():
        target, sep, _ = f.partition(": ")
        if sep:
            out |= {t.strip() for t in target.split(",")}
    return {p for p, c in zip(params, codes) if p in out and c in "TL"}


def _compile(op_index):
    """(name, params, codes, jvp function or a marker, positions whose missing tangents become zeros)."""
    name, params, codes, fw, bw, implicit = _C._forward_ad_op(op_index)
    if implicit:
        return name, params, codes, _COMPOSITE, ()
    if fw is None or list(fw) == ["non_differentiable"]:
        return name, params, codes, (_NONDIFF if fw is not None or bw == ("non_differentiable",) else _MISSING), ()
    arg = {p: (p + "_" if keyword.iskeyword(p) else p) for p in params}
    diff = _differentiable(params, codes, bw)
    if len(fw) == 1 and fw[0].split(":")[0] == "from_backward":
        # "from_backward: a, b": only those inputs' tangents count (a fused backward op whose saved statistics
        # are functions of its input: the formula already differentiates through them)
        only = {p.strip() for p in fw[0].partition(":")[2].split(",") if p.strip()} or None
        return name, params, codes, _from_backward(name, params, codes, bw, only), tuple(range(len(params)))
    body = []
    if list(fw) == ["auto_element_wise"]:
        # the Jacobian is diagonal: the backward formula applied to each input's tangent, summed; inputs without a
        # tangent contribute nothing (no zeros are made for them). With complex tensors the backward formula gives
        # conj(f') times the gradient, so the tangent is conj(formula(conj(t))) (torch's auto_element_wise), taken
        # from the formulas' complex variant (Note [Complex formula variants]); a real result keeps its real part
        from . import _formulas
        tensors = [arg[p] for p, c in zip(params, codes) if c == "T"]
        body.append(f"    cx_ = _fw_complex(result, {', '.join(tensors)})")
        body.append("    acc_ = None")
        for f in bw or ():
            target, _, expr = f.partition(": ")
            target = target.strip()
            if target in diff and codes[params.index(target)] == "T":
                t = arg[target] + "_t"
                expr = " ".join(expr.split())
                term = _rename(_formulas._variant(expr, False)[0], "grad", t)
                term_c = _rename(_formulas._variant(expr, True)[0], "grad", f"_conj({t})")
                body.append(f"    if {t} is not None:")
                body.append(f"        term_ = ({term}) if not cx_ else _conj({term_c})")
                body.append("        acc_ = term_ if acc_ is None else acc_ + term_")
        body.append("    if cx_ and acc_ is not None and acc_.dtype.is_complex and not result.dtype.is_complex:")
        body.append("        acc_ = acc_.real")
        body.append("    return [acc_]")
        used = set()
    else:
        if list(fw) == ["auto_linear"]:
            values = ", ".join((arg[p] + "_t") if p in diff else ("None" if c == "X" else arg[p])
                               for p, c in zip(params, codes))
            fw = [f"results: _call_op({op_index}, [{values}])"]
        used = set()
        for f in fw[:1]:
            target, sep, expr = f.partition(": ")
            expr = " ".join(expr.split())
            used |= _names(expr)
            if target.strip() == "result":
                body.append(f"    return [{expr}]")
            elif target.strip() == "results":
                body.append(f"    return list({expr})")
            else:
                raise RuntimeError(f"bad forward formula for {name}: {f!r}")
    tangent_args = [arg[p] + "_t" for p, c in zip(params, codes) if c in "TL"]
    needed = tuple(i for i, (p, c) in enumerate(zip(params, codes)) if c in "TL" and arg[p] + "_t" in used)
    src = (f"def jvp(result, results, {', '.join(arg[p] for p in params)}, {', '.join(tangent_args)}):\n"
           + "\n".join(body))
    ns = dict(_namespace())
    exec(compile(src, f"<forward formula of {name}>", "exec"), ns)
    return name, params, codes, ns["jvp"], needed


def _from_backward(name, params, codes, bw, only=None):
    """The JVP of an op by transposing its backward formula, which is linear in the output gradients: with u the
    output gradients as variables, the formula gives J^T u, and the gradient of <J^T u, v> with respect to u is J v.
    It serves the ops whose forward formula would repeat a long backward one (convolution, pooling, norms, losses,
    linear algebra); it costs one formula call and one backward pass through it."""
    from . import _formulas
    import pyctorch as torch
    fn = _formulas.compile_op(name + "JvpTranspose", params, codes, list(bw))[0]
    tensor_codes = [c for c in codes if c in "TL"]
    tensor_names = [p for p, c in zip(params, codes) if c in "TL"]

    def jvp(result, results, *rest):
        primals, tans = rest[:len(params)], rest[len(params):]
        edge_tans = []
        for name_, p, c, t in zip(tensor_names, (p for p, c in zip(primals, codes) if c in "TL"), tensor_codes, tans):
            if only is not None and name_ not in only:
                t = None
            if c == "T":
                edge_tans.append(t)
            elif p is not None:
                edge_tans.extend(t if t is not None else [None] * len(p))
        needs = [t is not None for t in edge_tans]
        create = torch.is_grad_enabled()
        with torch.enable_grad():
            us = [torch.zeros_like(o).requires_grad_(True)
                  if _is_tensor(o) and (o.dtype.is_floating_point or o.dtype.is_complex) else None for o in results]
            gs = fn(tuple(us), tuple(results), needs, *primals)
            total = None
            for g, v in zip(gs, edge_tans):
                if g is not None and v is not None:
                    # g = J^H u: Re <v, J^H u> = Re <J v, u>, whose gradient in u (torch's convention for complex
                    # tensors) is J v; for real tensors this is sum(g * v)
                    term = (g * v.conj()).sum().real if g.dtype.is_complex or v.dtype.is_complex else (g * v).sum()
                    total = term if total is None else total + term
            live = [u for u in us if u is not None]
            if total is None or not total.requires_grad or not live:
                jv = [None] * len(live)
            else:
                jv = list(torch.autograd.grad(total, live, retain_graph=True, create_graph=create, allow_unused=True))
        out = []
        for u in us:
            if u is None:
                out.append(None)
            else:
                j = jv.pop(0)
                out.append(torch.zeros_like(u.detach()) if j is None else j)
        return out
    return jvp


def _info(op_index):
    i = _INFO.get(op_index)
    if i is None:
        i = _INFO[op_index] = _compile(op_index)
    return i


def _not_implemented(name):
    return NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not been implemented yet.\n"
        "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml "
        "so that we can prioritize its implementation or submit a PR adding the implementation to derivatives.yaml")


# ---- the hook -----------------------------------------------------------------------------------

def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def _arg_tangents(args, codes, lv):
    """Per argument: its tangent at lv (a list for a tensor list), or None; None overall when no tangent."""
    out = []
    found = False
    for a, c in zip(args, codes):
        if c == "L" and a is not None:
            ts = [get_tangent(x, lv) if _is_tensor(x) else None for x in a]
            found = found or any(t is not None for t in ts)
            out.append(ts)
        elif (c == "T" or c is None) and _is_tensor(a):
            t = get_tangent(a, lv)
            found = found or t is not None
            out.append(t)
        else:
            out.append(None)
    return out if found else None


def _zeros_for(primal, tangent):
    import pyctorch as torch
    if tangent is not None:
        return tangent
    if not _is_tensor(primal):
        return None
    return torch.zeros_like(primal)


def _attach(outs, tangents, lv):
    nodes = set()
    for o, t in zip(outs, tangents):
        if t is None or not _is_tensor(o) or not (o.dtype.is_floating_point or o.dtype.is_complex):
            continue
        if t.dtype.is_complex and not o.dtype.is_complex:
            t = t.real  # a real output of complex inputs (torch's handle_r_to_c)
        elif o.dtype.is_complex and not t.dtype.is_complex:
            t = t.to(o.dtype)
        if tuple(t.shape) != tuple(o.shape):
            t = t.expand(o.shape)
        set_tangent(o, t, lv)
        if o.grad_fn is not None:
            nodes.add(o.grad_fn)
    # the history-free aliases of the outputs that their node saved for backward get the tangents too (forward over
    # reverse: a formula reading `result` differentiates it)
    for n in nodes:
        for nr, alias in _C._forward_ad_saved_outputs(n):
            if nr < len(outs) and _is_tensor(outs[nr]):
                t = get_tangent(outs[nr], lv)
                if t is not None:
                    set_tangent(alias, t, lv)


def _outputs(result):
    if _is_tensor(result):
        return [result]
    if isinstance(result, (tuple, list)):
        return list(result)
    return []


def _hook(op_index, mode, args):
    lim = _limit()
    levels = _levels if lim is None else _levels[:lim]
    if op_index < 0:
        codes = ("T", None, "T") if op_index == -2 else ("T", None)
        name = "index_put_" if op_index == -2 else "index"
    else:
        name, params, codes, fn, needed = _info(op_index)
    found = []
    for k, lv in enumerate(levels):
        if lv.table:
            ts = _arg_tangents(args, codes, lv)
            if ts is not None:
                found.append((k, lv, ts))
    if not found:
        return None
    if op_index < 0:
        return _subscript_hook(op_index, args, found)
    if mode == 2:
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not support it because it is "
                                  "an out= function")
    if fn is _COMPOSITE or fn is _NONDIFF:
        return None
    if fn is _MISSING:
        raise _not_implemented(name)
    before = None
    if mode == 1:
        with _propagating_below(0):
            before = args[0].clone()

    def finish(result):
        outs = [args[0]] if mode == 1 else _outputs(result)
        primals = list(args)
        if mode == 1:
            primals[0] = before
        res0 = outs[0] if outs else None
        for k, lv, ts in found:
            with _propagating_below(k):
                tans = []
                for i, (p, c) in enumerate(zip(primals, codes)):
                    if c == "T":
                        tans.append(_zeros_for(p, ts[i]) if i in needed else ts[i])
                    elif c == "L":
                        tans.append(None if p is None else
                                    [_zeros_for(x, t) if i in needed else t for x, t in zip(p, ts[i])])
                got = fn(res0, outs, *primals, *tans)
                if mode == 1 and args[0]._base is not None and got and got[0] is not None \
                        and args[0].dtype.is_floating_point:
                    t = got[0] if tuple(got[0].shape) == tuple(args[0].shape) else got[0].expand(args[0].shape)
                    _write_through_base(args[0], t, lv)
                    continue
            _attach(outs, got, lv)
    return finish


def _subscript_hook(op_index, args, found):
    self = args[0]
    key = args[1]

    if op_index == -1:
        def finish(result):
            for k, lv, ts in found:
                with _propagating_below(k):
                    _attach([result], [ts[0][key]], lv)
        return finish
    value = args[2]

    def finish(result):
        for k, lv, ts in found:
            with _propagating_below(k):
                import pyctorch as torch
                t = torch.zeros_like(self) if ts[0] is None else ts[0].clone()
                vt = ts[2] if ts[2] is not None else 0
                t[key] = vt
                if self._base is not None:
                    _write_through_base(self, t, lv)
                    continue
            set_tangent(self, t, lv)
    return finish
