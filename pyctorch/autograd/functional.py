"""torch.autograd.functional: vjp, jvp, jacobian, hessian (built on grad with create_graph)."""
from .. import _C
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _tuple(x):
    return (tuple(x), True) if isinstance(x, (tuple, list)) else ((x,), False)


def _prepare(inputs, create_graph):
    return tuple(i.detach().requires_grad_(True) if not create_graph or not i.requires_grad else i.view_as(i)
                 for i in inputs)


def _grad(outputs, inputs, grad_outputs, create_graph):
    from . import grad
    outs = [o for o in outputs if o.requires_grad]
    gos = [g for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not outs:
        return tuple(None for _ in inputs)
    return grad(outs, inputs, gos, create_graph=create_graph, retain_graph=True, allow_unused=True)


def _fill(grads, inputs):
    return tuple(_C.zeros_like(i) if g is None else g for g, i in zip(grads, inputs))


def _out(x, strict_detach, create_graph):
    return x if create_graph else tuple(t.detach() for t in x)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    inputs, tup = _tuple(inputs)
    with enable_grad():
        ins = _prepare(inputs, create_graph)
        outputs, out_tup = _tuple(func(*ins))
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            v = (_C.ones_like(outputs[0]),)
        else:
            v, _ = _tuple(v)
        grads = _fill(_grad(outputs, ins, v, create_graph), ins)
    outputs = _out(outputs, strict, create_graph)
    grads = _out(grads, strict, create_graph)
    return (outputs if out_tup else outputs[0]), (grads if tup else grads[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by the double-backward trick."""
    inputs, tup = _tuple(inputs)
    with enable_grad():
        ins = _prepare(inputs, create_graph)
        outputs, out_tup = _tuple(func(*ins))
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            v = (_C.ones_like(ins[0]),)
        else:
            v, _ = _tuple(v)
        dummies = tuple(_C.zeros_like(o).requires_grad_(True) for o in outputs)
        g = _fill(_grad(outputs, ins, dummies, True), ins)
        from . import grad
        pairs = [(gi, vi) for gi, vi in zip(g, v) if gi.requires_grad]
        if pairs:
            jv = grad([p[0] for p in pairs], dummies, [p[1] for p in pairs], create_graph=create_graph,
                      retain_graph=True, allow_unused=True)
        else:
            jv = (None,) * len(dummies)
        jv = _fill(jv, outputs)
    outputs = _out(outputs, strict, create_graph)
    jv = _out(jv, strict, create_graph)
    return (outputs if out_tup else outputs[0]), (jv if out_tup else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs; nested tuples mirror torch's layout."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy='
                                      '"forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
        return _jacobian_forward(func, inputs, strict)
    inputs, tup = _tuple(inputs)
    from . import grad
    with enable_grad():
        ins = _prepare(inputs, create_graph)
        outputs, out_tup = _tuple(func(*ins))
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                                   "supported together. Please either set `strict=False` or `vectorize=False`.")
            result = _jacobian_batched(outputs, ins, create_graph)
        else:
            result = _jacobian_rows(outputs, ins, create_graph)
    if not out_tup and not tup:
        return result[0][0]
    if not out_tup:
        return result[0]
    if not tup:
        return tuple(r[0] for r in result)
    return tuple(result)


def _jacobian_forward(func, inputs, strict):
    """jacobian(strategy="forward-mode"): true forward-mode AD, one Jacobian-vector product per input element
    (torch.func.jacfwd), in jacobian's layout."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    from ..func import jacfwd
    inputs, tup = _tuple(inputs)
    ins = tuple(i.detach() for i in inputs)
    probe = {}

    def f(*a):
        out = func(*a)
        probe["tuple"] = isinstance(out, (tuple, list))
        return tuple(out) if probe["tuple"] else out
    jac = jacfwd(f, argnums=tuple(range(len(ins))))(*ins)
    if probe["tuple"]:
        return tuple(r if tup else r[0] for r in jac)
    return jac if tup else jac[0]


def _jacobian_batched(outputs, ins, create_graph):
    """jacobian(vectorize=True), as torch computes it: one grad(is_grads_batched=True) call whose batch is the
    standard basis of all outputs' elements, split per output afterwards."""
    numels = [o.numel() for o in outputs]
    total = sum(numels)
    basis, start = [], 0
    for o, n in zip(outputs, numels):
        b = _C.zeros((total, n), dtype=o.dtype, device=o.device)
        b[start:start + n].diagonal().fill_(1)
        basis.append(b)
        start += n
    flat = tuple(o.reshape(-1) for o in outputs)
    keep = [k for k, o in enumerate(flat) if o.requires_grad]
    if keep:
        from . import grad
        per_in = grad([flat[k] for k in keep], ins, [basis[k] for k in keep], retain_graph=create_graph,
                      create_graph=create_graph, allow_unused=True, is_grads_batched=True)
    else:
        per_in = (None,) * len(ins)
    per_in = [_C.zeros_like(i).expand((total,) + tuple(i.shape)) if g is None else g for g, i in zip(per_in, ins)]
    result = []
    for k, o in enumerate(outputs):
        row = []
        for g, i in zip(per_in, ins):
            j = g.split(numels, dim=0)[k].view(tuple(o.shape) + tuple(i.shape))
            row.append(j if create_graph else j.detach())
        result.append(tuple(row))
    return result


def _jacobian_rows(outputs, ins, create_graph):
    """jacobian(vectorize=False): one grad call per element of each output."""
    from . import grad
    result = []
    for o in outputs:
        rows = [[] for _ in ins]
        flat = o.reshape(-1)
        for k in range(flat.numel()):
            if o.requires_grad:
                gs = grad((flat[k],), ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
            else:
                gs = (None,) * len(ins)
            for n, (g, i) in enumerate(zip(gs, ins)):
                rows[n].append(_C.zeros_like(i) if g is None else g)
        per_in = []
        for n, i in enumerate(ins):
            j = _C.stack(rows[n]) if rows[n] else _C.zeros((0,) + tuple(i.shape), dtype=i.dtype)
            j = j.reshape(tuple(o.shape) + tuple(i.shape))
            per_in.append(j if create_graph else j.detach())
        result.append(tuple(per_in))
    return result


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs."""
    inputs, tup = _tuple(inputs)
    if outer_jacobian_strategy == "forward-mode" and vectorize and not create_graph:
        # forward over reverse, as torch (its checks of the other combinations are jacobian's, below)
        from ..func import jacfwd, jacrev
        argnums = tuple(range(len(inputs)))

        def scalar(*a):
            out = func(*a)
            if out.numel() != 1:
                raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                                   "element")
            return out.reshape(())
        res = jacfwd(jacrev(scalar, argnums), argnums)(*(i.detach() for i in inputs))
        return res if tup else res[0][0]

    def jac_func(*ins):
        from . import grad
        out = func(*ins)
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        gs = grad((out.reshape(()),), ins, create_graph=True, allow_unused=True)
        return tuple(_C.zeros_like(i) if g is None else g for g, i in zip(gs, ins))

    res = jacobian(jac_func, inputs if tup else inputs[0], create_graph=create_graph, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    if not tup:
        return res[0] if isinstance(res, tuple) else res
    return res


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    inputs_t, tup = _tuple(inputs)
    with enable_grad():
        ins = _prepare(inputs_t, create_graph)
        out = func(*ins)
        from . import grad
        gs = _fill(grad((out,), ins, create_graph=True, allow_unused=True), ins)
        v, _ = _tuple(v)
        res = _fill(grad(gs, ins, v, create_graph=create_graph, allow_unused=True), ins)
    res = _out(res, strict, create_graph)
    return (out if create_graph else out.detach()), (res if tup else res[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """For twice-differentiable scalar functions H is symmetric, so hvp equals vhp."""
    return vhp(func, inputs, v, create_graph, strict)
