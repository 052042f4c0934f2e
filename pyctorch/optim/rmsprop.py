"""RMSprop, as torch.optim.RMSprop (torch's single-tensor step on pyctorch ops)."""
import pyctorch as torch

from .optimizer import Optimizer, _check_capturable, _get_scalar_dtype, _to_scalar, _use_grad_for_differentiable
from .optimizer import _closure_loss
from .optimizer import _check_hyperparameters, _restore_group_defaults

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_hyperparameters(lr, ("epsilon value", eps), ("momentum value", momentum), ("weight_decay value", weight_decay), ("alpha value", alpha))
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _restore_group_defaults(self, {"momentum": 0, "centered": False, "foreach": None, "maximize": False, "differentiable": False, "capturable": False})

    def _init_group(self, group, params_with_grad, grads, square_avgs, momentum_buffer_list, grad_avgs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.zeros((), dtype=_get_scalar_dtype())
                state["square_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                if group["centered"]:
                    state["grad_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            square_avgs.append(state["square_avg"])
            state_steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffer_list.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])
        return False  # has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps = [], [], [], [], [], []
            has_complex = self._init_group(group, params_with_grad, grads, square_avgs, momentum_buffer_list,
                                           grad_avgs, state_steps)
            rmsprop(params_with_grad, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
                    lr=group["lr"], alpha=group["alpha"], eps=group["eps"], weight_decay=group["weight_decay"],
                    momentum=group["momentum"], centered=group["centered"], foreach=group["foreach"],
                    maximize=group["maximize"], differentiable=group["differentiable"],
                    capturable=group["capturable"], has_complex=has_complex)
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, foreach=None, maximize=False,
            differentiable=False, capturable=False, has_complex=False, *, lr, alpha, eps, weight_decay, momentum,
            centered):
    """Functional RMSprop update, in place (torch.optim.rmsprop.rmsprop); foreach is accepted and
    the single-tensor loop runs."""
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    if foreach and differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        step = state_steps[i]
        if capturable:
            _check_capturable(param, step)
        grad = grads[i]
        grad = grad if not maximize else -grad
        square_avg = square_avgs[i]

        step += 1

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)

        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps) if differentiable else avg.add_(eps)

        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
