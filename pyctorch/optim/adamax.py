"""Adamax (Adam with the infinity norm), as torch.optim.Adamax (torch's single-tensor step)."""
import pyctorch as torch

from .optimizer import (Optimizer, _check_capturable, _get_value, _to_scalar,
                        _use_grad_for_differentiable)
from .optimizer import _check_hyperparameters, _closure_loss, _gather_group, _restore_group_defaults

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_hyperparameters(lr, ("epsilon value", eps), ("betas", betas), ("weight_decay value", weight_decay))
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _restore_group_defaults(self, {"foreach": None, "maximize": False, "differentiable": False, "capturable": False})

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_infs, state_steps):
        return _gather_group(self, group, params_with_grad, grads,
                             (("exp_avg", exp_avgs), ("exp_inf", exp_infs), ("step", state_steps)), ("exp_avg", "exp_inf"))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_infs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs, exp_infs, state_steps)
            adamax(params_with_grad, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"], beta1=beta1,
                   beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], foreach=group["foreach"],
                   maximize=group["maximize"], differentiable=group["differentiable"],
                   capturable=group["capturable"], has_complex=has_complex)
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, differentiable=False,
           capturable=False, has_complex=False, *, eps, beta1, beta2, lr, weight_decay):
    """Functional Adamax update, in place (torch.optim.adamax.adamax); foreach is accepted and the
    single-tensor loop runs."""
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    if foreach and differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        exp_avg = exp_avgs[i]
        exp_inf = exp_infs[i]
        step_t = state_steps[i]
        if capturable:
            _check_capturable(param, step_t)

        step_t += 1

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        exp_avg.lerp_(grad, 1 - beta1)
        if not differentiable:
            torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        else:
            # max over a stacked pair keeps a gradient for both sides
            norm_buf = torch.cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(torch.amax(norm_buf, 0, keepdim=False))

        clr = lr / (1 - beta1 ** _get_value(step_t))
        param.addcdiv_(exp_avg, exp_inf, value=-_get_value(clr))
