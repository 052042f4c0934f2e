"""Optimizer base class following torch.optim.Optimizer's contract."""
import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import pyctorch as torch
from pyctorch.utils import hooks
from .._utils import zero_grads

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Marker for a hyperparameter every param group must give (no default)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register a step pre hook run before every optimizer's step: hook(optimizer, args, kwargs)."""
    handle = hooks.RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register a step post hook run after every optimizer's step: hook(optimizer, args, kwargs)."""
    handle = hooks.RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _typename(obj):
    if isinstance(obj, torch.Tensor):
        return "torch.Tensor"
    t = type(obj)
    mod = t.__module__
    return t.__qualname__ if mod in ("builtins", None) else f"{mod}.{t.__qualname__}"


def _to_scalar(x):
    """A 1-element tensor hyperparameter becomes 0-d; anything else is returned unchanged."""
    if isinstance(x, torch.Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _get_value(x):
    return x.item() if isinstance(x, torch.Tensor) else x


def _rdiv(number, t):
    """number / t as torch computes it when t is a tensor (Tensor.__rtruediv__: t.reciprocal() * number)."""
    if isinstance(t, torch.Tensor) and not isinstance(number, torch.Tensor):
        return t.reciprocal() * number
    return number / t


def _get_scalar_dtype(is_fused=None):
    """dtype of 0-d state scalars such as 'step': float32 for fused steps, else the default float dtype."""
    if is_fused:
        return torch.float32
    return torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32


# torch's lists, for its error messages (pyctorch runs everything on the CPU).
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]
_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]
_C_STEP_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _check_capturable(param, *others, what="params and state_steps"):
    """capturable=True needs params and state on a graph-capturable device (never the CPU); torch's error."""
    if not (param.device.type in _CAPTURABLE_DEVICES and all(o.device.type == param.device.type for o in others)):
        raise AssertionError(
            f"If capturable=True, {what} must be on supported devices: {_CAPTURABLE_DEVICES}."
        )


def _device_dtype_check_for_fused(p):
    if not (p.device.type in _FUSED_DEVICES and p.is_floating_point()):
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of "
            f"supported devices: {_FUSED_DEVICES} but {p.dtype} and {p.device.type}"
        )


def _c_step_supported(params, grads, *scalars):
    """True when the fused C step (csrc/aten/cpu/optim.c) can run this update with torch's numbers:
    every param a floating CPU tensor with a gradient of its own dtype, and every hyperparameter a
    Python number (tensor hyperparameters round differently in torch's op-by-op step)."""
    for x in scalars:
        if isinstance(x, torch.Tensor):
            return False
    for p, g in zip(params, grads):
        dt = p.dtype
        if dt not in _C_STEP_DTYPES or g.dtype != dt or p.device.type != "cpu" or g.device.type != "cpu":
            return False
    return True


def _group_by_dtype(params, *lists):
    """{dtype: [params, *lists]} with the lists split in step (each C step call takes one dtype)."""
    first = params[0].dtype if params else None
    if all(p.dtype == first for p in params):
        return {first: [params, *lists]}
    out = {}
    for i, p in enumerate(params):
        entry = out.setdefault(p.dtype, [[] for _ in range(len(lists) + 1)])
        entry[0].append(p)
        for k, lst in enumerate(lists):
            if lst:
                entry[k + 1].append(lst[i])
    return out


def _bump_steps(steps, amount=1):
    for s in steps:
        s += amount


def _check_hyperparameters(lr, *checks):
    """torch's constructor checks, in the order given: lr (a number, or a 1-element tensor) must be
    >= 0, then each (label, value) pair: "betas" checks 0 <= beta < 1 for both, any other label
    checks value >= 0 and names it in torch's message ("Invalid <label>: <value>")."""
    if isinstance(lr, torch.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    for label, value in checks:
        if label == "betas":
            for i in (0, 1):
                if not 0.0 <= value[i] < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {value[i]}")
        elif not 0.0 <= value:
            raise ValueError(f"Invalid {label}: {value}")


def _restore_group_defaults(optimizer, defaults, tensor_state=("step",), fused_step=False):
    """__setstate__ of an optimizer pickled by an older version: missing group options take their
    defaults and scalar state entries become tensors (as torch's step counters are)."""
    for group in optimizer.param_groups:
        for key, value in defaults.items():
            group.setdefault(key, value)
        special = fused_step and (group.get("capturable") or group.get("fused"))
        dtype = _get_scalar_dtype(is_fused=group.get("fused") if special else None)
        for p in group["params"]:
            p_state = optimizer.state.get(p, [])
            if len(p_state) == 0:
                continue
            for key in tensor_state:
                if not torch.is_tensor(p_state[key]):
                    p_state[key] = torch.tensor(float(p_state[key]), dtype=dtype)


def _new_param_state(state, p, buffers, counters=()):
    """Fills a parameter's empty state as torch's optimizers do: a float32 step counter, then
    the named scalar counters ((name, start) pairs), then zero buffers shaped like p."""
    state["step"] = torch.tensor(0.0, dtype=_get_scalar_dtype())
    for name, start in counters:
        state[name] = torch.tensor(float(start), dtype=_get_scalar_dtype())
    for name in buffers:
        state[name] = torch.zeros_like(p, memory_format=torch.preserve_format)
    return state


def _gather_group(optimizer, group, params_with_grad, grads, outputs, buffers, counters=()):
    """The `_init_group` of the Adam family: every parameter of `group` that has a gradient goes
    to params_with_grad and grads, its state (created on first use by _new_param_state with
    `buffers` and `counters`) to the lists of `outputs`, (state key, list) pairs."""
    for p in group["params"]:
        if p.grad is None:
            continue
        params_with_grad.append(p)
        grads.append(p.grad)
        state = optimizer.state[p]
        if len(state) == 0:
            _new_param_state(state, p, buffers, counters)
        for key, out in outputs:
            out.append(state[key])
    return False  # has_complex: pyctorch has no complex dtypes


def _closure_loss(closure):
    """step(closure): the loss the closure computes, with grad mode on (None without one)."""
    if closure is None:
        return None
    with torch.enable_grad():
        return closure()


def _use_grad_for_differentiable(func):
    """Run an optimizer step with gradient recording on only for differentiable=True optimizers."""

    @functools.wraps(func)
    def _use_grad(self, *args, **kwargs):
        with torch.set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            return func(self, *args, **kwargs)

    return _use_grad


class Optimizer:
    """Base class for all optimizers.

    params: an iterable of tensors, of (name, tensor) pairs, or of dicts defining parameter groups.
    defaults: dict of default hyperparameters, used where a group does not give its own.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()

        if isinstance(params, torch.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + _typename(params)
            )
        self.state = defaultdict(dict)
        self.param_groups = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ------------------------------------------------------------------ pickling / repr
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ------------------------------------------------------------------ step hooks
    @staticmethod
    def profile_hook_step(func):
        """Wrap a step function so that the registered step pre/post hooks run around it."""

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(
                            f"{func} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                        )
            out = func(*args, **kwargs)
            for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out

        return wrapper

    def _patch_step_function(self):
        cls = self.__class__
        if not getattr(cls.step, "hooked", None):
            cls.step = self.profile_hook_step(cls.step)
            cls.step.hooked = True

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), called before step()."""
        handle = hooks.RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, called after step()."""
        handle = hooks.RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        handle = hooks.RemovableHandle(self._optimizer_state_dict_pre_hooks)
        self._optimizer_state_dict_pre_hooks[handle.id] = hook
        if prepend:
            self._optimizer_state_dict_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_post_hook(self, hook, prepend=False):
        handle = hooks.RemovableHandle(self._optimizer_state_dict_post_hooks)
        self._optimizer_state_dict_post_hooks[handle.id] = hook
        if prepend:
            self._optimizer_state_dict_post_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        handle = hooks.RemovableHandle(self._optimizer_load_state_dict_pre_hooks)
        self._optimizer_load_state_dict_pre_hooks[handle.id] = hook
        if prepend:
            self._optimizer_load_state_dict_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        handle = hooks.RemovableHandle(self._optimizer_load_state_dict_post_hooks)
        self._optimizer_load_state_dict_post_hooks[handle.id] = hook
        if prepend:
            self._optimizer_load_state_dict_post_hooks.move_to_end(handle.id, last=False)
        return handle

    # ------------------------------------------------------------------ state dict
    def state_dict(self):
        """{'state': {index: per-param state}, 'param_groups': [group with 'params' as indices]}."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                if id(p) not in param_mappings:
                    param_mappings[id(p)] = i
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, torch.Tensor) else k): v for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        # floating state follows the param's dtype, except 'step' (kept as saved, or float32 for
        # fused/capturable groups, as torch does)
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            return value.to(dtype=torch.float32) if (fused or capturable) else value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict):
        """Load optimizer state (as returned by state_dict()); params are matched by position."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, param_id=None, key=None):
            if isinstance(value, torch.Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, key=k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(_cast(param, v, param_id=param_id) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ------------------------------------------------------------------ grads / step
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors (to None, or to zeros in place)."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        """Perform a single optimization step; subclasses implement it."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add a param group (a dict with 'params' and optional per-group hyperparameters)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, torch.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")

        for param in param_group["params"]:
            if not isinstance(param, torch.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or getattr(param, "retains_grad", False)
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )

        param_ids = set()
        for group in self.param_groups:
            param_ids.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {txt} to the optimizer"
                )
        if not param_ids.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
