"""Stochastic weight averaging and exponential moving averages of a model (torch.optim.swa_utils):
AveragedModel, the averaging-function factories, the SWALR schedule and update_bn."""
import itertools
import math
import warnings
from copy import deepcopy

import pyctorch as torch
from pyctorch.nn import Module

from .lr_scheduler import LRScheduler, _format_param
from .optimizer import _get_value

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _is_float(t):
    return torch.is_floating_point(t) or torch.is_complex(t)


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place update of a list of averages: avg <- decay * avg + (1 - decay) * current."""
    _check_decay(decay)

    @torch.no_grad()
    def ema_update(ema_param_list, current_param_list, _num_averaged):
        if _is_float(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place update of a list of running means: avg <- avg + (current - avg) / (n + 1)."""

    @torch.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _is_float(averaged_param_list[0]):
            # torch passes 1 / (n + 1) to a foreach lerp as a Python scalar: a tensor n gives
            # its float32 quotient's value
            weight = _get_value(1 / (num_averaged + 1))
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
            return
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            diff = p_model - p_avg
            if isinstance(num_averaged, torch.Tensor):
                p_avg.addcdiv_(diff, num_averaged + 1)
            else:
                p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """avg_fn(avg, current, n) returning decay * avg + (1 - decay) * current."""
    _check_decay(decay)

    @torch.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """avg_fn(avg, current, n) returning the running mean after n + 1 values."""

    @torch.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_dtype(averaged, current):
    """[(averaged list, current list)] per dtype, in order of first appearance (torch groups by
    device and dtype; pyctorch tensors all live on the CPU)."""
    groups = {}
    for a, c in zip(averaged, current):
        lists = groups.setdefault(a.dtype, ([], []))
        lists[0].append(a)
        lists[1].append(c)
    return list(groups.values())


class AveragedModel(Module):
    """A deep copy of `model` whose parameters (and buffers with use_buffers=True) hold an average
    of the model's over the update_parameters() calls: the running mean by default, or what
    avg_fn (one tensor at a time) or multi_avg_fn (lists of tensors, in place) computes.
    n_averaged (a long buffer) counts the calls."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model):
        """Fold `model`'s current parameters into the average (the first call copies them)."""
        averaged = self._tensors(self.module) if self.use_buffers else self.parameters()
        averaged_detached, current_detached = [], []
        first = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(averaged, self._tensors(model)):
            p_model_ = p_model.detach().to(p_avg.device)
            averaged_detached.append(p_avg.detach())
            current_detached.append(p_model_)
            if first:
                p_avg.detach().copy_(p_model_)
        if self.n_averaged > 0:
            self._average(averaged_detached, current_detached)
        if not self.use_buffers:
            # buffers are not averaged: they follow the model (update_bn recomputes BN statistics)
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged += 1

    def _average(self, averaged, current):
        if self.avg_fn is not None and self.multi_avg_fn is None:
            for p_avg, p_model in zip(averaged, current):
                p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged))
            return
        for group_avg, group_model in _group_by_dtype(averaged, current):
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(group_avg, group_model, self.n_averaged)
            else:
                # torch's default on the CPU (no foreach kernels there): the one-tensor running mean
                avg_fn = get_swa_avg_fn()
                for p_avg, p_model in zip(group_avg, group_model):
                    p_avg.copy_(avg_fn(p_avg, p_model, self.n_averaged))


@torch.no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running statistics of every BatchNorm in `model` with one pass over `loader`
    (a cumulative average: momentum None), in train mode, restoring momenta and mode after."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value to swa_lr over anneal_epochs steps (cosine or linear),
    then holds it at swa_lr."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr the schedule started from, recovered from the current lr at anneal fraction alpha
        (so other schedulers' changes to the lr carry over)."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _anneal_fraction(self, step):
        return max(0, min(1, step / max(1, self.anneal_epochs)))

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(self._anneal_fraction(step - 1))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(self._anneal_fraction(step))
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """Every attribute except the optimizer and the anneal function (rebuilt from its name)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
