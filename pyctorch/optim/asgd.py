"""Averaged SGD, as torch.optim.ASGD (torch's single-tensor step on pyctorch ops)."""
import pyctorch as torch

from .optimizer import (Optimizer, _check_hyperparameters, _closure_loss,
                        _get_scalar_dtype, _get_value, _to_scalar)
from .optimizer import _use_grad_for_differentiable
from ._single_tensor import _check_functional_call, _reject_sparse_grad, _require_capturable_devices

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """SGD with a decaying step size eta and a running (Polyak) average `ax` of the iterates,
    averaging from step t0 on. State per parameter: step, eta, mu, ax (torch's names)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_hyperparameters(lr, ("weight_decay value", weight_decay))
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("foreach", None), ("maximize", False), ("differentiable", False),
                               ("capturable", False)):
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                for key in ("step", "eta", "mu") if len(p_state) else ():
                    if not torch.is_tensor(p_state[key]):
                        p_state[key] = torch.tensor(float(p_state[key]), dtype=_get_scalar_dtype())

    def _init_group(self, group, params_with_grad, grads, mus, axs, etas, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            _reject_sparse_grad(p.grad, "ASGD")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.zeros((), dtype=_get_scalar_dtype())
                # eta starts at lr, rounded to the scalar dtype as torch.as_tensor does
                state["eta"] = torch.as_tensor(_to_scalar(group["lr"]), dtype=_get_scalar_dtype()).clone().detach()
                state["mu"] = torch.ones((), dtype=_get_scalar_dtype())
                state["ax"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            mus.append(state["mu"])
            axs.append(state["ax"])
            etas.append(state["eta"])
            state_steps.append(state["step"])
        return False  # has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, mus, axs, etas, state_steps = [], [], [], [], [], []
            has_complex = self._init_group(group, params_with_grad, grads, mus, axs, etas, state_steps)
            asgd(params_with_grad, grads, axs, mus, etas, state_steps, lambd=group["lambd"], lr=group["lr"],
                 t0=group["t0"], alpha=group["alpha"], weight_decay=group["weight_decay"],
                 foreach=group["foreach"], maximize=group["maximize"], differentiable=group["differentiable"],
                 capturable=group["capturable"], has_complex=has_complex)
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, differentiable=False,
         capturable=False, has_complex=False, *, lambd, lr, t0, alpha, weight_decay):
    """Functional ASGD update, in place (torch.optim.asgd.asgd); foreach is accepted and the
    single-tensor loop runs."""
    _check_functional_call(state_steps, foreach, differentiable)
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        mu, ax, eta, step_t = mus[i], axs[i], etas[i], state_steps[i]
        if capturable:
            _require_capturable_devices([param, mu, eta, step_t], "params, mus, etas, and state_steps")
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = _get_value(eta)
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        step = _get_value(step_t)
        # the schedules are computed in Python floats, then stored in the 0-d state tensors
        eta.copy_(torch.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.copy_(torch.as_tensor(1 / max(1, step - t0)))
