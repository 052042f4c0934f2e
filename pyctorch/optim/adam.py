"""Adam (and, with decoupled_weight_decay=True, AdamW), as torch.optim.Adam.

The default step (and fused=True, and foreach=True) runs the fused C kernel _fused_adam_ /
_fused_adamw_ over a whole param group (csrc/aten/cpu/optim.c), which gives torch's for-loop
numbers (Note [Fused optimizer numerics]); foreach=False, differentiable=True, tensor
hyperparameters or unsupported dtypes take the single-tensor Python loop below.
"""
import pyctorch as torch
from pyctorch import _C

from .optimizer import (Optimizer, _bump_steps, _c_step_supported, _check_capturable, _device_dtype_check_for_fused,
                        _get_scalar_dtype, _get_value, _group_by_dtype, _rdiv, _to_scalar,
                        _use_grad_for_differentiable)
from .optimizer import _closure_loss

__all__ = ["Adam", "adam"]


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, torch.Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], torch.Tensor) and isinstance(betas[1], torch.Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], torch.Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            self._step_supports_amp_scaling = True
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            fused = group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not torch.is_tensor(p_state["step"]):
                    special = group["capturable"] or group["fused"]
                    p_state["step"] = torch.tensor(float(p_state["step"]),
                                                   dtype=_get_scalar_dtype(is_fused=fused if special else None))

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:  # lazy state initialization
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                special = group["capturable"] or group["fused"]
                state["step"] = (torch.zeros((), dtype=_get_scalar_dtype(is_fused=group["fused"])) if special
                                 else torch.tensor(0.0, dtype=_get_scalar_dtype()))
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            state_steps.append(state["step"])
        return False  # has_complex: pyctorch has no complex dtypes

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; closure re-evaluates the model and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps = [], [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                                           state_steps)
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                 amsgrad=group["amsgrad"], has_complex=has_complex, beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                 foreach=group["foreach"], capturable=group["capturable"],
                 differentiable=group["differentiable"], fused=group["fused"],
                 grad_scale=getattr(self, "grad_scale", None), found_inf=getattr(self, "found_inf", None),
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
         differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False,
         decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize):
    """Functional Adam/AdamW update, in place on params and state tensors (torch.optim.adam.adam)."""
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    kwargs = dict(amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay, eps=eps,
                  maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
    if fused:
        if differentiable:
            raise RuntimeError("Adam with fused=True does not support differentiable=True")
        _c_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale, found_inf, **kwargs)
        return
    if foreach and differentiable:
        raise AssertionError("_foreach ops don't support autograd")
    use_c = (foreach is None or foreach) and not differentiable and not capturable
    # a step count of 0 (1 - beta1 ** step == 0): torch's for-loop raises ZeroDivisionError at that parameter
    use_c = use_c and (foreach or not any(_zero_bias_correction(beta1, _get_value(s) + 1) for s in state_steps))
    if use_c and grad_scale is None and found_inf is None and _c_step_supported(
            params, grads, lr, beta1, beta2, weight_decay):
        _c_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, None, None, python=True,
                **kwargs)
        return
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    _single_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                        capturable=capturable, differentiable=differentiable, **kwargs)


def _zero_bias_correction(beta1, step):
    return 1 - beta1 ** step == 0


def _c_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale, found_inf, *,
            amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay, python=False):
    """One fused C call per dtype; the steps are counted here, as torch's _fused_adam does. A step
    count of 0 makes the bias correction 1 - beta1 ** step zero: the fused kernel then gives inf/NaN
    parameters, as torch's; python=True (the foreach step) raises ZeroDivisionError as torch's
    foreach step does, after the moments (and AdamW's decay) of that dtype group are updated."""
    if not params:
        return
    fn = _C._fused_adamw_ if decoupled_weight_decay else _C._fused_adam_
    lr, beta1, beta2, weight_decay = (float(_get_value(x)) for x in (lr, beta1, beta2, weight_decay))
    for p, g, m, v, vmax, steps in _group_by_dtype(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                                                   state_steps).values():
        _bump_steps(steps)
        if python and any(_zero_bias_correction(beta1, _get_value(s)) for s in steps):
            # torch's foreach stages, list by list, up to its step size lr / (1 - beta1 ** step)
            g = [-x for x in g] if maximize else g
            if weight_decay != 0 and decoupled_weight_decay:
                for param in p:
                    param.mul_(1 - lr * weight_decay)
            elif weight_decay != 0:
                g = [x.add(param, alpha=weight_decay) for x, param in zip(g, p)]
            for grad, exp_avg, exp_avg_sq in zip(g, m, v):
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            raise ZeroDivisionError("float division by zero")
        fn(p, g, m, v, vmax if amsgrad else [], steps, lr=lr, beta1=beta1, beta2=beta2, weight_decay=weight_decay,
           eps=float(eps), amsgrad=bool(amsgrad), maximize=bool(maximize), grad_scale=grad_scale,
           found_inf=found_inf)
        if found_inf is not None:  # a skipped step does not count
            _bump_steps(steps, -found_inf)


def _single_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad, beta1,
                        beta2, lr, weight_decay, eps, maximize, capturable, differentiable, decoupled_weight_decay):
    """torch's for-loop step, op by op (also the differentiable step: gradients flow through it)."""
    lr, beta1, beta2 = _to_scalar(lr), _to_scalar(beta1), _to_scalar(beta2)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        if capturable:
            _check_capturable(param, step_t)

        step_t += 1

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            elif differentiable and isinstance(weight_decay, torch.Tensor) and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        exp_avg.lerp_(grad, 1 - beta1)
        if differentiable and isinstance(beta2, torch.Tensor) and beta2.requires_grad:
            # a tensor beta2 with history: lerp towards grad^2 keeps its gradient (addcmul's value is a number)
            exp_avg_sq.lerp_(torch.square(grad), weight=1 - beta2)
        else:
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=_get_value(1 - beta2))

        if differentiable:
            # the step counts stay tensors so the update is one graph (torch's differentiable branch)
            step = step_t
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size_neg = _rdiv(lr, bias_correction1).neg()
            bias_correction2_sqrt = bias_correction2.sqrt()
            # the step size is folded into the denominator (addcdiv_'s value must be a number)
            if amsgrad:
                max_exp_avg_sq = max_exp_avg_sqs[i].clone()
                max_exp_avg_sqs[i].copy_(torch.maximum(max_exp_avg_sq, exp_avg_sq))
                root = max_exp_avg_sqs[i].sqrt()
            else:
                root = exp_avg_sq.sqrt()
            denom = (root / (bias_correction2_sqrt * step_size_neg)).add_(_rdiv(eps, step_size_neg))
            param.addcdiv_(exp_avg.clone(), denom)
        else:
            step = _get_value(step_t)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2 ** 0.5
            if amsgrad:
                torch.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
                denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            param.addcdiv_(exp_avg, denom, value=-_get_value(step_size))
