"""NAdam (Adam with Nesterov momentum), as torch.optim.NAdam (torch's single-tensor step)."""
import pyctorch as torch

from .optimizer import (Optimizer, _check_capturable, _get_value, _rdiv, _to_scalar,
                        _use_grad_for_differentiable)
from .optimizer import _check_hyperparameters, _closure_loss, _gather_group, _restore_group_defaults

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_hyperparameters(lr, ("epsilon value", eps), ("betas", betas), ("weight_decay value", weight_decay), ("momentum_decay value", momentum_decay))
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _restore_group_defaults(self, {"maximize": False, "foreach": None, "capturable": False, "differentiable": False, "decoupled_weight_decay": False}, tensor_state=('step', 'mu_product'))

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps):
        # step and mu_product are 0-d tensors; mu_product's rounding to their dtype is part of the numbers
        return _gather_group(self, group, params_with_grad, grads,
                             (("exp_avg", exp_avgs), ("exp_avg_sq", exp_avg_sqs), ("mu_product", mu_products),
                              ("step", state_steps)), ("exp_avg", "exp_avg_sq"), (("mu_product", 1.0),))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps = [], [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products,
                                           state_steps)
            nadam(params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                  eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], foreach=group["foreach"],
                  capturable=group["capturable"], differentiable=group["differentiable"], has_complex=has_complex)
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, decoupled_weight_decay=False,
          foreach=None, capturable=False, differentiable=False, has_complex=False, maximize=False, *, beta1, beta2,
          lr, weight_decay, momentum_decay, eps):
    """Functional NAdam update, in place (torch.optim.nadam.nadam); foreach is accepted and the
    single-tensor loop runs."""
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    if not all(isinstance(t, torch.Tensor) for t in mu_products):
        raise RuntimeError("API has changed, `mu_products` argument must contain a list of singleton tensors")
    if foreach and differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        mu_product = mu_products[i]
        step_t = state_steps[i]
        if capturable:
            _check_capturable(param, mu_product, step_t, what="params, mu_products and state_steps")

        step_t += 1
        step = _get_value(step_t)
        bias_correction2 = 1 - beta2 ** step

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        # the momentum coefficients of this step and the next (Dozat's schedule)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product *= mu

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()

        if differentiable:
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * _rdiv(-lr * (1.0 - mu), 1.0 - mu_product)
            exp_avg = exp_avg * _rdiv(-lr * mu_next, 1.0 - mu_product_next)
            param.addcdiv_(grad, denom)
            param.addcdiv_(exp_avg, denom)
        else:
            mu_product_value = _get_value(mu_product)
            mu_product_next = mu_product_value * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom, value=_get_value(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
            param.addcdiv_(exp_avg, denom, value=_get_value(-lr * mu_next / (1.0 - mu_product_next)))
