"""Adadelta, as torch.optim.Adadelta (torch's single-tensor step on pyctorch ops)."""
import pyctorch as torch

from .optimizer import (Optimizer, _check_hyperparameters, _closure_loss,
                        _new_param_state, _restore_group_defaults, _to_scalar)
from .optimizer import _use_grad_for_differentiable
from ._single_tensor import _check_functional_call, _reject_sparse_grad, _require_capturable_devices

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Adadelta: per-element step sizes from running averages of squared gradients and of squared
    updates (Zeiler, 2012). State per parameter: step, square_avg, acc_delta (torch's names)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_hyperparameters(lr)
        if not 0.0 <= rho <= 1.0:  # checked between lr and eps, as torch orders its checks
            raise ValueError(f"Invalid rho value: {rho}")
        _check_hyperparameters(0.0, ("epsilon value", eps), ("weight_decay value", weight_decay))  # lr done above
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _restore_group_defaults(self, {"foreach": None, "maximize": False, "differentiable": False,
                                       "capturable": False})

    def _init_group(self, group, params_with_grad, grads, square_avgs, acc_deltas, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            _reject_sparse_grad(p.grad, "Adadelta")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                _new_param_state(state, p, ("square_avg", "acc_delta"))
            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
            state_steps.append(state["step"])
        return False  # has_complex: pyctorch has no complex dtypes

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, square_avgs, acc_deltas, state_steps = [], [], [], [], []
            has_complex = self._init_group(group, params_with_grad, grads, square_avgs, acc_deltas, state_steps)
            adadelta(params_with_grad, grads, square_avgs, acc_deltas, state_steps, lr=group["lr"],
                     rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                     foreach=group["foreach"], maximize=group["maximize"],
                     differentiable=group["differentiable"], capturable=group["capturable"],
                     has_complex=has_complex)
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False, foreach=None,
             differentiable=False, has_complex=False, *, lr, rho, eps, weight_decay, maximize):
    """Functional Adadelta update, in place (torch.optim.adadelta.adadelta); foreach is accepted and
    the single-tensor loop runs."""
    _check_functional_call(state_steps, foreach, differentiable)
    if capturable and params:
        for p, s in zip(params, state_steps):
            _require_capturable_devices([p, s], "params and state_steps", supports_xla=False)
    lr = _to_scalar(lr)
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step += 1
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            delta = delta.clone()  # keep the graph's saved tensor out of the in-place ops below
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)
