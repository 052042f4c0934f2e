"""Stochastic gradient descent (optionally with momentum), as torch.optim.SGD.

The default step (and fused=True, and foreach=True) runs the fused C kernel _fused_sgd_ over a
whole param group (csrc/aten/cpu/optim.c) with torch's for-loop numbers; foreach=False,
differentiable=True and tensor hyperparameters take the single-tensor Python loop.
"""
import pyctorch as torch
from pyctorch import _C

from .optimizer import (Optimizer, _c_step_supported, _device_dtype_check_for_fused, _get_value, _group_by_dtype,
                        _to_scalar, _use_grad_for_differentiable)
from .optimizer import _closure_loss

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
            "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
            "differentiable": differentiable, "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused:
            self._step_supports_amp_scaling = True
            self._need_device_dtype_check_for_fused = True
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _init_group(self, group, params, grads, momentum_buffer_list):
        for p in group["params"]:
            if p.grad is not None:
                if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                    _device_dtype_check_for_fused(p)
                    self._need_device_dtype_check_for_fused = False
                params.append(p)
                grads.append(p.grad)
                if group["momentum"] != 0:
                    momentum_buffer_list.append(self.state[p].get("momentum_buffer"))
        return False  # has_sparse_grad: a Parameter's gradient is dense here (sparse tensors cannot be Parameters)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, momentum_buffers = [], [], []
            has_sparse_grad = self._init_group(group, params, grads, momentum_buffers)
            # the differentiable step is the Python loop (torch's sgd() picks it for them the same way)
            diff = group["differentiable"]
            sgd(params, grads, momentum_buffers, weight_decay=group["weight_decay"], momentum=group["momentum"],
                lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                maximize=group["maximize"], has_sparse_grad=has_sparse_grad,
                foreach=False if diff else group["foreach"], fused=False if diff else group["fused"],
                grad_scale=getattr(self, "grad_scale", None), found_inf=getattr(self, "found_inf", None))
            if group["momentum"] != 0:
                for p, buf in zip(params, momentum_buffers):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None, grad_scale=None,
        found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """Functional SGD update, in place on params and momentum_buffer_list (torch.optim.sgd.sgd)."""
    kwargs = dict(weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening, nesterov=nesterov,
                  maximize=maximize)
    if fused:
        _c_sgd(params, d_p_list, momentum_buffer_list, grad_scale, found_inf, **kwargs)
        return
    if foreach is not False and grad_scale is None and found_inf is None and _c_step_supported(
            params, d_p_list, lr, weight_decay, momentum, dampening):
        _c_sgd(params, d_p_list, momentum_buffer_list, None, None, **kwargs)
        return
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    _single_tensor_sgd(params, d_p_list, momentum_buffer_list, **kwargs)


def _c_sgd(params, grads, momentum_buffer_list, grad_scale, found_inf, *, weight_decay, momentum, lr, dampening,
           nesterov, maximize):
    """Fused C calls: one per dtype and per kind of parameter (those that get their momentum buffer
    now, on their first step, and those that have one)."""
    if not params:
        return
    lr, weight_decay, momentum, dampening = (float(_get_value(x)) for x in (lr, weight_decay, momentum, dampening))
    kw = dict(weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening, nesterov=bool(nesterov),
              maximize=bool(maximize), grad_scale=grad_scale, found_inf=found_inf)
    if momentum == 0:
        for p, g in _group_by_dtype(params, grads).values():
            _C._fused_sgd_(p, g, [], is_first_step=False, **kw)
        return
    new = [i for i, b in enumerate(momentum_buffer_list) if b is None]
    for i in new:
        momentum_buffer_list[i] = torch.empty_like(grads[i])
    if len(new) == len(params) or not new:
        parts = [(list(range(len(params))), bool(new))]
    else:
        new_set = set(new)
        parts = [(new, True), ([i for i in range(len(params)) if i not in new_set], False)]
    for idx, first in parts:
        sel = (params, grads, momentum_buffer_list) if len(idx) == len(params) else \
            tuple([lst[i] for i in idx] for lst in (params, grads, momentum_buffer_list))
        for p, g, b in _group_by_dtype(*sel).values():
            _C._fused_sgd_(p, g, b, is_first_step=first, **kw)


def _single_tensor_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
                       maximize):
    """torch's for-loop step, op by op (also the differentiable step)."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            if isinstance(weight_decay, torch.Tensor) and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            if nesterov:
                grad = grad.add(buf, alpha=momentum)
            else:
                grad = buf
        if isinstance(lr, torch.Tensor) and lr.requires_grad:
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-lr)
