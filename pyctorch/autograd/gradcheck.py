"""gradcheck / gradgradcheck: analytical gradients against central finite differences."""
from .. import _C
from .grad_mode import no_grad, enable_grad
from ..functional import allclose

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    pass


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(out):
    return tuple(o for o in _tuple(out) if isinstance(o, _C.Tensor) and o.requires_grad)


def _numerical_jacobian(fn, inputs, wrt, eps):
    """J[i][j]: d outputs[j] / d inputs[wrt[i]] as a (numel_in, numel_out) float64 matrix."""
    with no_grad():
        outs = [o for o in _tuple(fn(*inputs)) if isinstance(o, _C.Tensor) and o.is_floating_point()]
    jac = []
    for i in wrt:
        x = inputs[i]
        cols = [_C.zeros((x.numel(), o.numel()), dtype=_C.float64) for o in outs]
        for k in range(x.numel()):
            idx = _unravel(k, x.shape)
            orig = x.data[idx].item()
            with no_grad():
                x.data[idx] = orig - eps
                lo = [o.detach().to(_C.float64).reshape(-1).clone() for o in _float_outs(fn(*inputs))]
                x.data[idx] = orig + eps
                hi = [o.detach().to(_C.float64).reshape(-1).clone() for o in _float_outs(fn(*inputs))]
                x.data[idx] = orig
            for c, a, b in zip(cols, lo, hi):
                c[k] = (b - a) / (2 * eps)
        jac.append(cols)
    return jac


def _float_outs(out):
    return [o for o in _tuple(out) if isinstance(o, _C.Tensor) and o.is_floating_point()]


def _unravel(k, shape):
    idx = []
    for s in reversed(shape):
        idx.append(k % s)
        k //= s
    return tuple(reversed(idx))


def _analytical_jacobian(fn, inputs, wrt):
    from . import grad as autograd_grad
    outs = _float_outs(fn(*inputs))
    jac = [[_C.zeros((inputs[i].numel(), o.numel()), dtype=_C.float64) for o in outs] for i in wrt]
    for j, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            go = _C.zeros(o.shape, dtype=o.dtype, device=o.device)
            go.view(-1)[k] = 1
            gs = autograd_grad((o,), tuple(inputs[i] for i in wrt), (go,), retain_graph=True, allow_unused=True)
            for n, g in enumerate(gs):
                if g is not None:
                    jac[n][j][:, k] = g.detach().to(_C.float64).reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when the analytical Jacobian of func matches the finite-difference one."""
    inputs = _tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i in wrt:
        if inputs[i].dtype not in (_C.float64,):
            import warnings
            warnings.warn("Input #%d requires gradient and is not a double precision floating point. This check "
                          "will likely fail if all the inputs are not of double precision floating point." % i)
    numerical = _numerical_jacobian(func, inputs, wrt, eps)
    analytical = _analytical_jacobian(func, inputs, wrt)
    for n, i in enumerate(wrt):
        for j, (a, b) in enumerate(zip(analytical[n], numerical[n])):
            if not allclose(a, b, rtol=rtol, atol=atol):
                msg = (f"Jacobian mismatch for output {j} with respect to input {i},\n"
                       f"numerical:{b}\nanalytical:{a}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the first derivative (computed with create_graph=True): checks double backward."""
    from . import grad as autograd_grad
    inputs = _tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*inputs))
        gen = _C.Generator().manual_seed(0)
        grad_outputs = tuple(_C.randn(o.shape, dtype=o.dtype, generator=gen).to(o.device).requires_grad_() for o in outs)
    grad_outputs = _tuple(grad_outputs)
    n_in = len(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():
            outs = _differentiable_outputs(func(*ins))
            gs = autograd_grad(outs, tuple(ins[i] for i in wrt), gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
