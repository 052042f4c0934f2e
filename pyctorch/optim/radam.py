"""RAdam (rectified Adam), as torch.optim.RAdam (torch's single-tensor step)."""
import pyctorch as torch

from .optimizer import (Optimizer, _check_capturable, _get_value, _rdiv, _to_scalar,
                        _use_grad_for_differentiable)
from .optimizer import _check_hyperparameters, _closure_loss, _gather_group, _restore_group_defaults

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_hyperparameters(lr, ("epsilon value", eps), ("betas", betas), ("weight_decay value", weight_decay))
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
            "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _restore_group_defaults(self, {"foreach": None, "maximize": False, "differentiable": False, "decoupled_weight_decay": False, "capturable": False})

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps):
        return _gather_group(self, group, params_with_grad, grads,
                             (("exp_avg", exp_avgs), ("exp_avg_sq", exp_avg_sqs), ("step", state_steps)),
                             ("exp_avg", "exp_avg_sq"))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps)
            radam(params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                  foreach=group["foreach"], capturable=group["capturable"], differentiable=group["differentiable"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], has_complex=has_complex)
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False, foreach=None,
          differentiable=False, capturable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, eps):
    """Functional RAdam update, in place (torch.optim.radam.radam); foreach is accepted and the
    single-tensor loop runs."""
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    if foreach and differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        if capturable:
            _check_capturable(param, step_t)

        step_t += 1
        step = _get_value(step_t)

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        # the length of the approximated simple moving average (rho) decides whether the
        # variance is tractable enough for the adaptive (rectified) update
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2

        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            exp_avg_sq_sqrt = exp_avg_sq.sqrt()
            exp_avg_sq_sqrt = exp_avg_sq_sqrt.add(eps) if differentiable else exp_avg_sq_sqrt.add_(eps)
            adaptive_lr = _rdiv(bias_correction2 ** 0.5, exp_avg_sq_sqrt)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
