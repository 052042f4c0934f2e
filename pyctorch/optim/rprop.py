"""Resilient backpropagation, as torch.optim.Rprop (torch's single-tensor step on pyctorch ops)."""
import pyctorch as torch

from .optimizer import (Optimizer, _check_hyperparameters, _closure_loss,
                        _new_param_state, _restore_group_defaults, _to_scalar)
from .optimizer import _use_grad_for_differentiable
from ._single_tensor import _check_functional_call, _reject_sparse_grad, _require_capturable_devices

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Rprop: each element keeps its own step size, grown by etas[1] while its gradient keeps its
    sign and shrunk by etas[0] when the sign flips; only the gradient's sign moves the parameter.
    State per parameter: step, prev, step_size (torch's names)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        _check_hyperparameters(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _restore_group_defaults(self, {"foreach": None, "maximize": False, "differentiable": False,
                                       "capturable": False})

    def _init_group(self, group, params, grads, prevs, step_sizes, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            _reject_sparse_grad(p.grad, "Rprop")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                _new_param_state(state, p, ("prev",))
                state["step_size"] = torch.full_like(p.grad, _to_scalar(group["lr"]))
            prevs.append(state["prev"])
            step_sizes.append(state["step_size"])
            state_steps.append(state["step"])
        return False  # has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, prevs, step_sizes, state_steps = [], [], [], [], []
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            has_complex = self._init_group(group, params, grads, prevs, step_sizes, state_steps)
            rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                  step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus, foreach=group["foreach"],
                  maximize=group["maximize"], differentiable=group["differentiable"],
                  capturable=group["capturable"], has_complex=has_complex)
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False, maximize=False,
          differentiable=False, has_complex=False, *, step_size_min, step_size_max, etaminus, etaplus):
    """Functional Rprop update, in place (torch.optim.rprop.rprop); foreach is accepted and the
    single-tensor loop runs."""
    _check_functional_call(state_steps, foreach, differentiable)
    for param, grad, prev, step_size, step in zip(params, grads, prevs, step_sizes, state_steps):
        grad = grad if not maximize else -grad
        if capturable:
            _require_capturable_devices([param, step], "params and state_steps")
        step += 1
        sign = grad.mul(prev.clone() if differentiable else prev).sign()
        # the sign of grad*prev becomes the factor for the step size: grow, shrink or keep
        sign = torch.where(sign.gt(0), etaplus, torch.where(sign.lt(0), etaminus, torch.ones_like(sign)))
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        # after a sign flip the element does not move this step and forgets its gradient
        grad = torch.where(sign.eq(etaminus), 0.0, grad)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
