"""torch.optim._stateless.swap_in_optimizer_params_and_state: run an optimizer on other parameters and state.

Inside the block the optimizer's param_groups hold the given parameter tensors and its hyperparameters, and its state
is the given state_dict-shaped state re-keyed by those tensors; on exit the live groups and state come back. Unlike
load_state_dict this also replaces the parameters, so step() updates the tensors passed in. Tensors of the given state
are used as they are (in-place updates reach the caller); other changes made to the state inside the block stay
there."""
import contextlib
from collections import defaultdict

from .. import _C

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state):
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, _C.Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_groups(optimizer, groups):
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, "
                           f"got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    return groups


def _group_ids(index, live, swapin):
    """The packed parameter ids of one swap-in group, after checking it against the live group."""
    if not isinstance(swapin, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed by "
                           "packed parameter ids.")
    if len(ids) != len(live["params"]):
        raise RuntimeError(f"swapin_optim_state param group {index} has a different number of params than the live "
                           "optimizer param group.")
    only_swapin = [k for k in swapin if k not in live]
    only_live = [k for k in live if k not in swapin]
    if only_swapin or only_live:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the live "
                           f"optimizer group keys for group {index}. Keys only in swap-in: {only_swapin}. Keys only "
                           f"in live: {only_live}.")
    return ids


def _plan(optimizer, parameters, optim_state):
    """(state keyed by packed id, [(live group, swap-in group, its parameter tensors)]) after torch's checks."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(optim_state.get("state"))
    groups = _check_groups(optimizer, optim_state.get("param_groups"))
    tensors = list(parameters.values())
    offset, seen, plan = 0, set(), []
    for index, (live, swapin) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _group_ids(index, live, swapin)
        seen.update(ids)
        end = offset + len(ids)
        if end > len(tensors):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        plan.append((live, swapin, tensors[offset:end]))
        offset = end
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """For the block, `optimizer` works on swapin_parameters (in param_groups order) with swapin_optim_state (an
    optimizer.state_dict()-shaped dict); its own parameters, hyperparameters and state are restored on exit."""
    state, plan = _plan(optimizer, swapin_parameters, swapin_optim_state)
    live_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]  # shallow: the original params lists keep their identity
    try:
        swapped = defaultdict(dict)
        for live, swapin, tensors in plan:
            live["params"] = tensors
            for key, value in swapin.items():
                if key != "params":
                    live[key] = value
            for tensor, pid in zip(tensors, swapin["params"]):
                swapped[tensor] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
