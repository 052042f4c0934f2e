"""nn.Module: parameter/buffer/submodule registration, traversal, state dicts, modes, hooks."""
from collections import OrderedDict
import itertools
import warnings

from ... import _C
from ... import __future__ as _future
from ..parameter import Parameter, Buffer
from ...utils.hooks import RemovableHandle
from ..._utils import zero_grads

# the state-dict entry of a module's get_extra_state() (torch's name for it: libraries read it)
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook"]


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


class _IncompatibleKeys(tuple):
    """load_state_dict's result: (missing_keys, unexpected_keys) with names, like torch's namedtuple."""

    def __new__(cls, missing_keys, unexpected_keys):
        self = super().__new__(cls, (missing_keys, unexpected_keys))
        return self

    missing_keys = property(lambda self: self[0])
    unexpected_keys = property(lambda self: self[1])

    def __repr__(self):
        if not self[0] and not self[1]:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self[0]}, unexpected_keys={self[1]})"


class Module:
    """Base class of every layer; subclasses set attributes in __init__ and define forward()."""

    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = OrderedDict()  # id -> hook (torch's layout: pruning and tools inspect it)
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()  # id -> True for hooks taking (module, args, kwargs)
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None

    forward = None

    # ---- registration ----
    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__module__}.{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             "explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        else:
            self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")

        def remove_from(*dicts):
            for x in dicts:
                if x is not None and name in x:
                    del x[name]

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, d.get("_buffers"), d.get("_modules"))
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__module__}.{type(value).__name__}' as parameter "
                                f"'{name}' (torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, params, d.get("_buffers"))
            modules[name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Buffer):
            remove_from(d, params, d.get("_modules"))
            self.register_buffer(name, value, value.persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            x = d.get(key)
            if x is not None and name in x:
                return x[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for key in ("_parameters", "_buffers", "_modules"):
            x = self.__dict__.get(key)
            if x is not None and name in x:
                del x[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ---- traversal ----
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return p

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return mod._buffers[name]

    # ---- state dicts ----
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self):
        """Extra state for the state dict, for modules that override it (and set_extra_state)."""
        raise RuntimeError("Module.get_extra_state() was called on a module that does not override it: "
                           "state_dict only asks modules that do")

    def set_extra_state(self, state):
        """Restores what get_extra_state returned, for modules that override both."""
        raise RuntimeError("Module.set_extra_state() was called on a module that does not override it: "
                           "load_state_dict only calls it for modules that do")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # torch's deprecated positional form (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, _C.Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            with _C_no_grad():
                param.copy_(value)
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if prefix + _EXTRA_STATE_KEY_SUFFIX in state_dict:
                self.set_extra_state(state_dict[prefix + _EXTRA_STATE_KEY_SUFFIX])
            elif strict:
                missing_keys.append(prefix + _EXTRA_STATE_KEY_SUFFIX)
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    rest = key[len(prefix):]
                    name = rest.split(".", 1)[0]
                    if has_extra and rest == _EXTRA_STATE_KEY_SUFFIX:
                        continue
                    if "." not in rest and name not in local and name not in self._modules:
                        unexpected_keys.append(key)
                    elif "." in rest and name not in self._modules:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []

        def load(module, prefix=""):
            module._load_from_state_dict(state_dict, prefix, {}, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
        load(self)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ---- modes, conversions ----
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self.parameters(), set_to_none)

    def _apply(self, fn):
        for m in self.children():
            m._apply(fn)
        for key, p in self._parameters.items():
            if p is None:
                continue
            with _C_no_grad():
                new = fn(p)
            # torch.__future__'s overwrite switch: a new Parameter object in the module (swap takes precedence)
            overwrite = (_future.get_overwrite_module_params_on_conversion()
                         and not _future.get_swap_module_params_on_conversion())
            out = p
            if overwrite:
                out = Parameter(new, p.requires_grad)
                self._parameters[key] = out
            elif new is not p:
                p.data = new
            if p.grad is not None:
                with _C_no_grad():
                    g = fn(p.grad)
                if overwrite:
                    out.grad = g.requires_grad_(p.grad.requires_grad)
                elif g is not p.grad:
                    p.grad = g
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts the parameters and buffers (torch's signatures: device, dtype, non_blocking,
        memory_format, or a tensor); dtype applies to the floating and complex ones only, memory_format to the 4-d
        and 5-d ones."""
        device, dtype, non_blocking, memory_format = _C._nn._parse_to(*args, **kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers.", stacklevel=2)

        def convert(t):
            cast = dtype if t.is_floating_point() or t.is_complex() else None
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(device, cast, non_blocking, memory_format=memory_format)
            return t.to(device, cast, non_blocking)
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Moves the parameters and buffers to `device` without copying their values (uninitialised storage of the
        same shapes and dtypes): how a model built on the meta device gets memory before its weights are loaded."""
        fn = lambda t: _C.empty_like(t, device=device)  # noqa: E731
        if recurse:
            return self._apply(fn)
        for key, p in self._parameters.items():
            if p is not None:
                with _C_no_grad():
                    p.data = fn(p)
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    # ---- hooks and calling ----
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        handle = RemovableHandle(self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs,
                                                                  self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> new grad_output or None, called when the gradients of the module's
        outputs are known, before those of its inputs are computed."""
        hooks = self._backward_pre_hooks_dict()
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> new grad_input or None, called once the gradients of the
        module's positional inputs are known (None for the arguments that are not tensors requiring grad)."""
        if self.__dict__.get("_is_full_backward_hook") is False:
            raise RuntimeError(_MIXED_HOOKS)
        self.__dict__["_is_full_backward_hook"] = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """The legacy (non-full) backward hook: a hook on the autograd node that produced the module's output,
        hook(module, grad_input, grad_output) with that node's gradients (see torch's deprecation notes)."""
        if self.__dict__.get("_is_full_backward_hook") is True:
            raise RuntimeError(_MIXED_HOOKS)
        self.__dict__["_is_full_backward_hook"] = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _backward_pre_hooks_dict(self):
        d = self.__dict__
        if "_backward_pre_hooks" not in d:  # a module unpickled from an older pyctorch
            d["_backward_pre_hooks"] = OrderedDict()
        return d["_backward_pre_hooks"]

    def _call_impl(self, *args, **kwargs):
        forward = self.forward
        if forward is None:
            raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')
        if self._forward_pre_hooks or _global_forward_pre_hooks:
            with_kwargs = self._forward_pre_hooks_with_kwargs
            for hook_id, hook in [*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
                if hook_id in with_kwargs:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        args, kwargs = r
                else:
                    r = hook(self, args)
                    if r is not None:
                        args = r if isinstance(r, tuple) else (r,)
        if not (self._backward_hooks or self.__dict__.get("_backward_pre_hooks")):
            result = forward(*args, **kwargs)
            return _run_forward_hooks(self, args, kwargs, result) if self._forward_hooks or _global_forward_hooks \
                else result
        return _call_with_backward_hooks(self, forward, args, kwargs)

    __call__ = _call_impl

    # ---- printing ----
    def extra_repr(self):
        return ""

    def _get_name(self):
        return self.__class__.__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        children = []
        for key, module in self._modules.items():
            children.append("(" + key + "): " + _addindent(repr(module), 2))
        body = lines + children
        s = self._get_name() + "("
        if body:
            if len(lines) == 1 and not children:
                s += lines[0]
            else:
                s += "\n  " + "\n  ".join(body) + "\n"
        return s + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        d = self.__dict__  # a module pickled by an older pyctorch: the hook tables it lacks
        for name in ("_backward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called"):
            d.setdefault(name, OrderedDict())
        d.setdefault("_is_full_backward_hook", None)
        for name in ("_forward_pre_hooks", "_forward_hooks"):  # older pyctorch stored (hook, with_kwargs) pairs
            hooks = d.get(name)
            if hooks and all(type(v) is tuple and len(v) == 2 for v in hooks.values()):
                for k, (hook, with_kwargs) in list(hooks.items()):
                    hooks[k] = hook
                    if with_kwargs:
                        d[name + "_with_kwargs"][k] = True


class _C_no_grad:
    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


# The hooks of every module (torch.nn.modules.module.register_module_forward_pre_hook / _forward_hook), run before
# each module's own; their ids come from the modules' hook counter, so one with_kwargs set tells them apart.
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()


def register_module_forward_pre_hook(hook):
    """hook(module, args) runs before the forward of every module (a new args tuple if it returns one)."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) runs after the forward of
    every module; a value it returns replaces the output."""
    handle = RemovableHandle(_global_forward_hooks, extra_dict=_global_forward_hooks_with_kwargs)
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    return handle


def _run_forward_hooks(module, args, kwargs, result):
    with_kwargs = module._forward_hooks_with_kwargs
    for hook_id, hook in list(_global_forward_hooks.items()):
        r = hook(module, args, kwargs, result) if hook_id in _global_forward_hooks_with_kwargs else \
            hook(module, args, result)
        if r is not None:
            result = r
    for hook_id, hook in list(module._forward_hooks.items()):
        r = hook(module, args, kwargs, result) if hook_id in with_kwargs else hook(module, args, result)
        if r is not None:
            result = r
    return result


_MIXED_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a single Module. Please use "
                "only one of them.")


def _call_with_backward_hooks(module, forward, args, kwargs):
    """Module.__call__ with backward hooks: the full ones (and the backward pre hooks) through identity nodes
    around the module's tensor inputs and outputs (_FullBackwardHooks), the legacy ones as node hooks on the
    output's grad_fn. Forward hooks run between the forward and the output node, as in torch."""
    d = module.__dict__
    full = d.get("_is_full_backward_hook") is not False
    user_hooks = list(module._backward_hooks.values()) if full else []
    pre_hooks = list(d.get("_backward_pre_hooks", {}).values())
    legacy = [] if full else list(module._backward_hooks.values())
    bw = None
    if user_hooks or pre_hooks:
        bw = _FullBackwardHooks(module, user_hooks, pre_hooks)
        args = bw.setup_inputs(args)
    result = _run_forward_hooks(module, args, kwargs, forward(*args, **kwargs))
    if bw is not None:
        if not isinstance(result, (_C.Tensor, tuple)):
            warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of Tensors "
                          f"but received {type(result)}")
        result = bw.setup_outputs(result)
    if legacy:
        _attach_legacy_hooks(module, legacy, args, result)
    return result


class _FullBackwardHooks:
    """One call's full backward hooks (the role of torch.utils.hooks.BackwardHook): the output node's hook
    records grad_output (after the pre hooks may replace it); the input node's hook calls the user hooks with
    grad_input packed to one entry per positional argument, and their result replaces the inputs' gradients."""

    def __init__(self, module, user_hooks, pre_hooks):
        self.module, self.user_hooks, self.pre_hooks = module, user_hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_index = self.output_index = None

    @staticmethod
    def _pack(index, values, size):
        out = [None] * size
        for i, v in zip(index, values):
            out[i] = v
        return tuple(out)

    @staticmethod
    def _through_identity(values, on_node):
        """values with their tensors passed through BackwardHookFunction (when one requires grad and grad mode is
        on), calling on_node(node); returns (values, tensor positions or None)."""
        from ._functions import BackwardHookFunction
        index = [i for i, v in enumerate(values) if isinstance(v, _C.Tensor)]
        if not (any(values[i].requires_grad for i in index) and _C.is_grad_enabled()):
            return values, None
        outs = BackwardHookFunction.apply(*[values[i] for i in index])
        if not isinstance(outs, tuple):
            outs = (outs,)
        on_node(next(o.grad_fn for o in outs if o.grad_fn is not None))
        values = list(values)
        for i, o in zip(index, outs):
            values[i] = o
        return tuple(values), index

    def setup_inputs(self, args):
        def on_node(node):
            node.register_hook(self._input_hook)
        args, self.input_index = self._through_identity(tuple(args), on_node)
        self.n_inputs = len(args)
        return args

    def _input_hook(self, grad_input, _grad_output):
        if self.grad_outputs is None:  # the gradient reached the inputs without passing through the outputs
            return None
        res = self._pack(self.input_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)

    def setup_outputs(self, result):
        is_tuple = isinstance(result, tuple)
        values = result if is_tuple else (result,)

        def on_node(node):
            node.register_hook(self._output_hook)
        values, self.output_index = self._through_identity(values, on_node)
        self.n_outputs = len(values)
        return values if is_tuple else values[0]

    def _output_hook(self, _grad_input, grad_output):
        self.grad_outputs = self._pack(self.output_index, grad_output, self.n_outputs)
        for hook in self.pre_hooks:
            out = hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(out)}, "
                                   f"but expected {len(self.grad_outputs)}")
            self.grad_outputs = out
        current = self.grad_outputs
        if self.input_index is None:  # no input requires grad: the hooks run now, with no grad_input
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=5)
            none = (None,) * self.n_inputs
            for hook in self.user_hooks:
                r = hook(self.module, none, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(x is None for x in r)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(current[i] for i in self.output_index)


def _attach_legacy_hooks(module, hooks, args, result):
    """register_backward_hook's hooks: node hooks on the grad_fn of the first tensor of the output, with torch's
    FutureWarnings where that node cannot see all of the module's gradients."""
    var = result
    while not isinstance(var, _C.Tensor):
        var = next(v for v in var.values() if isinstance(v, _C.Tensor)) if isinstance(var, dict) else var[0]
    node = var.grad_fn
    if node is None:
        return
    for hook in hooks:
        node.register_hook(lambda gi, go, hook=hook: hook(module, gi, go))
    _warn_legacy_hook(args, result, node)


def _warn_legacy_hook(inputs, result, node):
    tail = " Please use register_full_backward_hook to get the documented behavior."
    if isinstance(result, _C.Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, _C.Tensor) for r in result)):
        warnings.warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                      "Tensors is deprecated and will be removed in future versions. This hook will be missing "
                      "some of the grad_output." + tail, FutureWarning, stacklevel=4)
        return
    if isinstance(inputs, _C.Tensor):
        inputs = (inputs,)
    elif not (isinstance(inputs, tuple) and all(isinstance(i, _C.Tensor) for i in inputs)):
        warnings.warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                      "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                      "missing some of the grad_input." + tail, FutureWarning, stacklevel=4)
        return
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and node not in out_nodes):
        warnings.warn("Using a non-full backward hook when outputs are nested in python data structure is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_output.", FutureWarning, stacklevel=4)
    elif len(out_nodes) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_output." + tail, FutureWarning, stacklevel=4)
    else:
        in_nodes = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_nodes = {n[0] for n in node.next_functions}
        if in_nodes != next_nodes:
            warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_input." + tail, FutureWarning, stacklevel=4)
