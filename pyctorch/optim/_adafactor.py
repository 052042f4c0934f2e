"""Adafactor, as torch.optim.Adafactor (torch keeps it in torch/optim/_adafactor.py; torch's
single-tensor step on pyctorch ops).

A matrix-shaped parameter (dim > 1) keeps factored second moments, one row and one column vector
of mean squared gradients over the last two dimensions, whose outer product divided by the row
mean estimates the full variance; vectors keep a full `variance` like Adam.
"""
import pyctorch as torch

from .optimizer import Optimizer, _closure_loss, _get_scalar_dtype, _to_scalar
from ._single_tensor import _reject_sparse_grad

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, 2018) in torch's variant: relative step sizes
    rho_t = min(lr, 1/sqrt(t)) scaled by the parameter's RMS, beta2_t = 1 - t**beta2_decay, and
    updates clipped to an RMS of d. State per parameter: step, then row_var/col_var (dim > 1) or
    variance (torch's names)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not torch.is_tensor(p_state["step"]):
                    p_state["step"] = torch.tensor(float(p_state["step"]), dtype=_get_scalar_dtype())

    def _init_group(self, group, params_with_grad, grads, row_vars, col_vars, variances, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            _reject_sparse_grad(p.grad, "Adafactor")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.tensor(0.0, dtype=_get_scalar_dtype())
                if p.grad.dim() > 1:
                    state["row_var"] = p.grad.new_zeros(_with_size(p.grad.shape, -1, 1))
                    state["col_var"] = p.grad.new_zeros(_with_size(p.grad.shape, -2, 1))
                else:
                    state["variance"] = torch.zeros_like(p.grad, memory_format=torch.preserve_format)
            row_vars.append(state.get("row_var", None))
            col_vars.append(state.get("col_var", None))
            variances.append(state.get("variance", None))
            state_steps.append(state["step"])
        return False  # has_complex

    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        with torch.no_grad():
            for group in self.param_groups:
                params_with_grad, grads, row_vars, col_vars, variances, state_steps = [], [], [], [], [], []
                eps1, eps2 = group["eps"]
                has_complex = self._init_group(group, params_with_grad, grads, row_vars, col_vars, variances,
                                               state_steps)
                adafactor(params_with_grad, grads, row_vars, col_vars, variances, state_steps, d=group["d"],
                          lr=group["lr"], beta2_decay=group["beta2_decay"], weight_decay=group["weight_decay"],
                          eps1=eps1, eps2=eps2, foreach=group["foreach"], maximize=group["maximize"],
                          grad_scale=getattr(self, "grad_scale", None), found_inf=getattr(self, "found_inf", None),
                          has_complex=has_complex)
        return loss


def _with_size(shape, dim, size):
    shape = list(shape)
    shape[dim] = size
    return shape


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None, grad_scale=None,
              found_inf=None, has_complex=False, *, d, lr, beta2_decay, weight_decay, eps1, eps2, maximize):
    """Functional Adafactor update, in place (torch.optim._adafactor.adafactor); foreach is accepted
    and the single-tensor loop runs."""
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("`state_steps` argument must contain a list of singleton tensors")
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t = state_steps[i]
        if eps1 is None:
            eps1 = torch.finfo(param.dtype).eps
        step_t += 1
        step = step_t.item()
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            row_var, col_var = row_vars[i], col_vars[i]
            row_var.lerp_(torch.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1)), one_minus_beta2_t)
            col_var.lerp_(torch.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2)), one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = variances[i]
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denom)
