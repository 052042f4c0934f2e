"""torch._dynamo.config: dynamo's flags, readable and writable, and `patch` to set them for a while.

pyctorch has no graph capture (see pyctorch/_dynamo/__init__.py), so no flag changes what runs:
they are stored so that code which sets, reads or patches them behaves as under torch. The
defaults are torch 2.13's. Names torch does not know raise its AttributeError on read and write.
`cache_size_limit` and `accumulated_cache_size_limit` are torch's old names of `recompile_limit`
and `accumulated_recompile_limit`: each pair is one value.
"""
import contextlib
import copy
import functools
import sys
import types

suppress_errors = False
verbose = False
recompile_limit = 8
accumulated_recompile_limit = 256
fail_on_recompile_limit_hit = False
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
automatic_dynamic_shapes = True
assume_static_by_default = True
dynamic_shapes = True
specialize_int = False
specialize_float = False
optimize_ddp = True
inline_inbuilt_nn_modules = True
guard_nn_modules = False
force_parameter_static_shapes = True
force_nn_module_property_static_shapes = True
allow_unspec_int_on_nn_module = False
raise_on_ctx_manager_usage = True
replay_record_enabled = False
rewrite_assert_with_torch_assert = True
error_on_recompile = False
report_guard_failures = True
skip_nnmodule_hook_guards = True
allow_rnn = False
compiled_autograd = False
use_graph_deduplication = False
prefer_deferred_runtime_asserts_over_guards = False
do_not_emit_runtime_asserts = False
traceable_tensor_subclasses = set()

_ALIASES = {"cache_size_limit": "recompile_limit",
            "accumulated_cache_size_limit": "accumulated_recompile_limit"}
_FUNCTIONS = ("patch", "get_config_copy", "load_config", "save_config", "to_dict")


def _flag_names():
    module = sys.modules[__name__]
    return [name for name, value in vars(module).items()
            if not name.startswith("_") and name not in _FUNCTIONS
            and not isinstance(value, (types.ModuleType, types.FunctionType, type))]


def get_config_copy():
    """{flag: value} for every flag (a deep copy)."""
    module = sys.modules[__name__]
    return {name: copy.deepcopy(getattr(module, name)) for name in _flag_names()}


to_dict = get_config_copy


def save_config():
    """The flags as bytes load_config takes back."""
    import pickle
    return pickle.dumps(get_config_copy(), protocol=2)


def load_config(saved):
    import pickle
    values = pickle.loads(saved) if isinstance(saved, bytes) else saved
    module = sys.modules[__name__]
    for name, value in values.items():
        setattr(module, name, value)


class _Patch(contextlib.ContextDecorator):
    """Sets flags on entry and restores them on exit; a decorator does that around each call."""

    def __init__(self, changes):
        module = sys.modules[__name__]
        for name in changes:
            module._check_name(name)
        self.changes = changes
        self.saved = []

    def __enter__(self):
        module = sys.modules[__name__]
        self.saved.append({name: getattr(module, name) for name in self.changes})
        for name, value in self.changes.items():
            setattr(module, name, value)
        return self

    def __exit__(self, *exc):
        module = sys.modules[__name__]
        for name, value in self.saved.pop().items():
            setattr(module, name, value)
        return False


def patch(arg1=None, arg2=None, **kwargs):
    """`patch("verbose", True)`, `patch({"verbose": True})` or `patch(verbose=True)`: a context
    manager and decorator that sets the flags for its duration."""
    if isinstance(arg1, str):
        changes = {arg1: arg2}
    elif isinstance(arg1, dict):
        changes = dict(arg1)
    elif arg1 is None:
        changes = {}
    else:
        raise AssertionError(f"patch() takes a flag name, a dict or keywords, not {type(arg1).__name__}")
    changes.update(kwargs)
    return _Patch(changes)


class _ConfigModule(types.ModuleType):
    """The module's class: unknown names raise torch's AttributeError, aliases share one value."""

    def _check_name(self, name):
        real = _ALIASES.get(name, name)
        if real not in _flag_names():
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        return real

    def __getattr__(self, name):  # only reached for names not set on the module
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name, value):
        if name.startswith("__") or name in _FUNCTIONS:
            return super().__setattr__(name, value)
        super().__setattr__(self._check_name(name), value)


sys.modules[__name__].__class__ = _ConfigModule
