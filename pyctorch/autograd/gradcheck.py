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


# Note [Complex gradcheck]: as torch's gradcheck, a complex tensor counts as two real ones, its real and imaginary
# parts: the Jacobian checked is the real one, a row per real input coordinate (x then y of each element) and a
# column per real output coordinate (u then v). The analytical column of u is the gradient for grad_output 1, that of
# v for grad_output 1j (torch's convention: the gradient of a real L is dL/dx + i dL/dy), read as [Re, Im] pairs.

def _is_diff_tensor(o):
    return isinstance(o, _C.Tensor) and (o.is_floating_point() or o.is_complex())


def _real_flat(t):
    """t's real coordinates as a flat float64 vector (a complex element gives its real, then imaginary part)."""
    t = t.detach()
    if t.is_complex():
        t = _C.view_as_real(t.contiguous())
    return t.to(_C.float64).reshape(-1).clone()


def _real_numel(t):
    return t.numel() * (2 if t.is_complex() else 1)


def _numerical_jacobian(fn, inputs, wrt, eps):
    """J[i][j]: d outputs[j] / d inputs[wrt[i]] as a (real numel in, real numel out) float64 matrix."""
    with no_grad():
        outs = _float_outs(fn(*inputs))
    jac = []
    for i in wrt:
        x = inputs[i]
        cols = [_C.zeros((_real_numel(x), _real_numel(o)), dtype=_C.float64) for o in outs]
        steps = (eps, eps * 1j) if x.is_complex() else (eps,)
        for k in range(x.numel()):
            idx = _unravel(k, x.shape)
            orig = x.data[idx].item()
            for s, step in enumerate(steps):
                with no_grad():
                    x.data[idx] = orig - step
                    lo = [_real_flat(o) for o in _float_outs(fn(*inputs))]
                    x.data[idx] = orig + step
                    hi = [_real_flat(o) for o in _float_outs(fn(*inputs))]
                    x.data[idx] = orig
                for c, a, b in zip(cols, lo, hi):
                    c[k * len(steps) + s] = (b - a) / (2 * eps)
        jac.append(cols)
    return jac


def _float_outs(out):
    return [o for o in _tuple(out) if _is_diff_tensor(o)]


def _unravel(k, shape):
    idx = []
    for s in reversed(shape):
        idx.append(k % s)
        k //= s
    return tuple(reversed(idx))


def _analytical_jacobian(fn, inputs, wrt):
    from . import grad as autograd_grad
    outs = _float_outs(fn(*inputs))
    jac = [[_C.zeros((_real_numel(inputs[i]), _real_numel(o)), dtype=_C.float64) for o in outs] for i in wrt]
    for j, o in enumerate(outs):
        if not o.requires_grad:
            continue
        units = (1, 1j) if o.is_complex() else (1,)
        for k in range(o.numel()):
            for s, unit in enumerate(units):
                go = _C.zeros(o.shape, dtype=o.dtype, device=o.device)
                go.view(-1)[k] = unit
                gs = autograd_grad((o,), tuple(inputs[i] for i in wrt), (go,), retain_graph=True, allow_unused=True)
                for n, g in enumerate(gs):
                    if g is not None:
                        jac[n][j][:, k * len(units) + s] = _real_flat(g)
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
        if inputs[i].dtype not in (_C.float64, _C.complex128):
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


def _random_like(o, gen):
    """Random grad_outputs for o: normal values, a normal real and imaginary part for a complex o."""
    if o.is_complex():
        real = o.dtype.to_real()
        r = _C.randn(o.shape, dtype=real, generator=gen)
        i = _C.randn(o.shape, dtype=real, generator=gen)
        return _C.view_as_complex(_C.stack([r, i], -1)).to(o.device)
    return _C.randn(o.shape, dtype=o.dtype, generator=gen).to(o.device)


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
        grad_outputs = tuple(_random_like(o, gen).requires_grad_() for o in outs)
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
