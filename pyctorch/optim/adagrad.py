"""Adagrad, as torch.optim.Adagrad.

The default step (and fused=True, and foreach=True) runs the fused C kernel _fused_adagrad_ over a
whole param group with torch's for-loop numbers (Note [Fused optimizer numerics]); foreach=False,
differentiable=True and tensor hyperparameters take the single-tensor Python loop.
"""
import pyctorch as torch
from pyctorch import _C

from .optimizer import (Optimizer, _bump_steps, _c_step_supported, _device_dtype_check_for_fused,
                        _get_scalar_dtype, _get_value, _group_by_dtype, _to_scalar, _use_grad_for_differentiable)
from .optimizer import _closure_loss
from .optimizer import _check_hyperparameters, _restore_group_defaults

__all__ = ["Adagrad", "adagrad"]


def _new_step(fused):
    return (torch.zeros((), dtype=_get_scalar_dtype(is_fused=fused)) if fused
            else torch.tensor(0.0, dtype=_get_scalar_dtype()))


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_hyperparameters(lr, ("lr_decay value", lr_decay), ("weight_decay value", weight_decay), ("initial_accumulator_value value", initial_accumulator_value), ("epsilon value", eps))
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
            self._need_device_dtype_check_for_fused = True
            self._step_supports_amp_scaling = True
        # Adagrad's state exists from construction on (torch does the same)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _new_step(group["fused"])
                state["sum"] = torch.full_like(p, initial_accumulator_value, memory_format=torch.preserve_format)

    def __setstate__(self, state):
        super().__setstate__(state)
        _restore_group_defaults(self, {"foreach": None, "maximize": False, "differentiable": False, "fused": None}, fused_step=True)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _init_group(self, group, params_with_grad, grads, state_sums, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                _device_dtype_check_for_fused(p)
                self._need_device_dtype_check_for_fused = False
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:  # a param added after construction (add_param_group)
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                state["step"] = _new_step(group["fused"])
                state["sum"] = torch.full_like(p, self.defaults["initial_accumulator_value"],
                                               memory_format=torch.preserve_format)
            state_sums.append(state["sum"])
            state_steps.append(state["step"])
        return False, False  # has_sparse_grad, has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, state_sums, state_steps = [], [], [], []
            has_sparse_grad, has_complex = self._init_group(group, params_with_grad, grads, state_sums, state_steps)
            adagrad(params_with_grad, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"], eps=group["eps"],
                    has_sparse_grad=has_sparse_grad, foreach=group["foreach"], maximize=group["maximize"],
                    differentiable=group["differentiable"], has_complex=has_complex, fused=group["fused"],
                    grad_scale=getattr(self, "grad_scale", None), found_inf=getattr(self, "found_inf", None))
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None,
            has_sparse_grad=False, foreach=None, differentiable=False, has_complex=False, *, lr, weight_decay,
            lr_decay, eps, maximize):
    """Functional Adagrad update, in place on params and state_sums (torch.optim.adagrad.adagrad)."""
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    kwargs = dict(lr=lr, weight_decay=weight_decay, lr_decay=lr_decay, eps=eps, maximize=maximize)
    if fused:
        if differentiable:
            raise RuntimeError("adagrad with fused=True does not support differentiable=True")
        _c_adagrad(params, grads, state_sums, state_steps, grad_scale, found_inf, **kwargs)
        return
    # a zero divisor 1 + (step - 1) * lr_decay: torch's for-loop raises ZeroDivisionError at that parameter
    zero = any(_zero_divisor(lr_decay, _get_value(s) + 1) for s in state_steps)
    if (foreach or (foreach is None and not zero)) and not differentiable and grad_scale is None \
            and found_inf is None and _c_step_supported(params, grads, lr, weight_decay, lr_decay):
        _c_adagrad(params, grads, state_sums, state_steps, None, None, python=True, **kwargs)
        return
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    _single_tensor_adagrad(params, grads, state_sums, state_steps, differentiable=differentiable, **kwargs)


def _zero_divisor(lr_decay, step):
    return 1 + (step - 1) * lr_decay == 0


def _c_adagrad(params, grads, state_sums, state_steps, grad_scale, found_inf, *, lr, weight_decay, lr_decay, eps,
               maximize, python=False):
    """One fused C call per dtype. A zero divisor 1 + (step - 1) * lr_decay gives inf/NaN
    parameters in the fused kernel, as torch's; python=True (the foreach step) raises
    ZeroDivisionError as torch's foreach step does, with the steps of that dtype group counted."""
    if not params:
        return
    lr, weight_decay, lr_decay = (float(_get_value(x)) for x in (lr, weight_decay, lr_decay))
    for p, g, s, steps in _group_by_dtype(params, grads, state_sums, state_steps).values():
        _bump_steps(steps)
        if python and any(_zero_divisor(lr_decay, _get_value(st)) for st in steps):
            raise ZeroDivisionError("float division by zero")
        _C._fused_adagrad_(p, g, s, steps, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=float(eps),
                           maximize=bool(maximize), grad_scale=grad_scale, found_inf=found_inf)
        if found_inf is not None:
            _bump_steps(steps, -found_inf)


def _single_tensor_adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps, maximize,
                           differentiable):
    """torch's for-loop step, op by op (also the differentiable step)."""
    lr = _to_scalar(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        step = _get_value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-_get_value(clr))
