"""torch.distributed.algorithms.join: a context manager for training with uneven inputs.

A rank whose inputs run out leaves the `with Join([...])` body and, in __exit__, keeps shadowing
the collectives the other ranks still issue (each Joinable's JoinHook.main_hook) until every rank
has joined; then every JoinHook.post_hook runs. Ranks count who is still active with an
all-reduce: active ranks contribute 1 from Join.notify_join_context each iteration, joined ranks 0.
"""
import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

import pyctorch as torch
import pyctorch.distributed as dist

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a Joinable does after its rank joined: main_hook() per iteration of the still-active
    ranks, post_hook(is_last_joiner) once all have joined."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable(ABC):
    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self):
        ...


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Join:
    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for n, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable=enable, throw_on_early_termination=throw_on_early_termination,
                                         is_first_joinable=n == 0)
        group = device = None
        for j in joinables:
            if group is None:
                group = j.join_process_group
            elif group != j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = j.join_device
        self._process_group = group
        self._rank = dist.get_rank(group)
        self._device = device

    def __enter__(self):
        pass

    def __exit__(self, type, value, traceback):
        if not self._enable or type:
            return
        is_last_joiner = True
        i = 0
        while True:
            if i > 1000:
                warnings.warn(f"Detected uneven input skew of greater than 1000. This means that rank {self._rank} has "
                              "at least 1000 fewer inputs than other currently-active ranks. This level of skew could "
                              "lead to performance degradation during training.", stacklevel=2)
            active = torch.zeros(1, device=self._device)
            dist.all_reduce(active, group=self._process_group)
            if active.item() == 0:
                break
            if self._throw_on_early_termination:
                dist.all_reduce(torch.ones(1, device=self._device), group=self._process_group)
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            i += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    @staticmethod
    def notify_join_context(joinable):
        """Called by an active rank's first Joinable before its collectives of an iteration: the
        async all-reduce of its 1 in the count of active ranks (None when join is off)."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        work = dist.all_reduce(torch.ones(1, device=joinable.join_device), group=joinable.join_process_group,
                               async_op=True)
        if config.throw_on_early_termination:
            zeros = torch.zeros(1, device=joinable.join_device)
            dist.all_reduce(zeros, group=joinable.join_process_group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
