"""torch.library: operators defined from Python.

`custom_op` (with `register_fake`, `register_autograd`, `register_kernel`, `register_autocast`), and the
lower-level `Library(ns, kind)` with `define` / `impl` / `fallback` and the module functions `define`, `impl`,
`impl_abstract`; `infer_schema`, `opcheck`, `get_ctx`. Each operator is callable directly and as
`torch.ops.<namespace>.<name>.<overload>`; how a call finds its kernel, records autograd, shows in the profiler
and stays one opaque node under torch.fx and torch.export is Note [Library operators] in _library/op_def.py.
Not here: replacing the kernels of the op table's aten operators (`Library("aten", "IMPL").impl` refuses), the
dispatch keys other than CPU, CUDA, Meta, the Composite* and the Autograd* ones, `register_torch_dispatch` and
`register_vmap` rules (a vmapped custom op runs per sample, as pyctorch's vmap fallback does), triton ops.
"""
import inspect
import typing
import warnings

from ._library.op_def import DISPATCH_KEYS, REGISTRY, OpDef, parse_definition

__all__ = ["Library", "define", "impl", "impl_abstract", "custom_op", "CustomOpDef", "register_fake",
           "register_autograd", "register_kernel", "register_autocast", "infer_schema", "opcheck", "get_ctx",
           "get_custom_op", "fallthrough_kernel"]

_CUSTOM_OPS = REGISTRY  # the name pyctorch/_ops.py reads
_DEF_NAMESPACES = set()  # namespaces a live Library(ns, "DEF") owns
_KINDS = ("DEF", "IMPL", "FRAGMENT")


def fallthrough_kernel():
    """A dummy kernel: Library.impl(name, fallthrough_kernel, key) registers nothing for that key."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


# ---------------------------------------------------------------------------------------------- schemas

def _annotation_type(ann, name):
    from . import Tensor, dtype, device
    import types as _types
    optional = False
    origin = typing.get_origin(ann)
    if origin in (typing.Union, getattr(_types, "UnionType", None)):
        members = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(members) == 1 and len(typing.get_args(ann)) == 2:
            ann, optional = members[0], True
            origin = typing.get_origin(ann)
    simple = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str", dtype: "ScalarType",
              device: "Device"}
    if ann in simple:
        kind = simple[ann]
    elif origin in (list, typing.List, tuple, typing.Sequence) or ann in (list, tuple):
        inner = typing.get_args(ann)
        if not inner or inner[0] not in (Tensor, int, float, bool):
            raise ValueError(f"infer_schema: unsupported type annotation {ann} for parameter '{name}'; give "
                             "the schema explicitly")
        kind = simple[inner[0]] + "[]"
    else:
        raise ValueError(f"Parameter {name} has unsupported type {ann}. The valid types are: Tensor, int, float, "
                         "bool, str, dtype, device, their lists and Optional versions.")
    return kind + ("?" if optional else "")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The schema text torch infers from a function's type annotations: '(Tensor x, SymInt n=2) -> Tensor'."""
    from . import Tensor
    sig = inspect.signature(prototype_function)
    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:
        hints = {}
    parts, keyword_only = [], False
    for index, p in enumerate(sig.parameters.values()):
        if p.kind == inspect.Parameter.KEYWORD_ONLY and not keyword_only:
            parts.append("*")
            keyword_only = True
        ann = hints.get(p.name, p.annotation)
        if ann is inspect.Parameter.empty:
            raise ValueError(f"Parameter {p.name} must have a type annotation.")
        kind = _annotation_type(ann, p.name)
        if kind.startswith("Tensor") and (mutates_args == "unknown" or p.name in tuple(mutates_args or ())):
            kind = kind.replace("Tensor", f"Tensor(a{index}!)", 1)  # torch names the alias set by position
        text = f"{kind} {p.name}"
        if p.default is not inspect.Parameter.empty:
            text += "=" + _default_text(p.default)
        parts.append(text)
    ret = hints.get("return", sig.return_annotation)
    if ret is inspect.Signature.empty:
        raise ValueError("No return type annotation was provided. Please add one.")
    if ret is None or ret is type(None):
        returns = "()"
    elif typing.get_origin(ret) is tuple:
        returns = "(" + ", ".join(_annotation_type(a, "return") for a in typing.get_args(ret)) + ")"
    elif ret is Tensor:
        returns = "Tensor"
    else:
        returns = _annotation_type(ret, "return")
    text = "(" + ", ".join(parts) + ") -> " + returns
    return (op_name + text) if op_name else text


def _default_text(value):
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


# ---------------------------------------------------------------------------------------------- custom_op

class CustomOpDef(OpDef):
    """A custom operator made by custom_op: call it like the function it wraps."""

    kind = "custom_op"

    def __init__(self, qualname, fn, mutates_args, schema):
        namespace, _, name = qualname.partition("::")
        text = schema if schema is not None else infer_schema(fn, mutates_args=mutates_args)
        super().__init__(namespace, name, "default", text)
        self._init_fn = fn
        self._mutates_args = mutates_args
        self.__doc__ = fn.__doc__

    def _signature_source(self):
        return self._init_fn

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"


def _qualname(name):
    if isinstance(name, OpDef):
        return name._key
    if hasattr(name, "_overloadname") and hasattr(name, "_opname"):  # an OpOverload
        return f"{name._namespace}::{name._opname}" + ("" if name._overloadname == "default"
                                                       else "." + name._overloadname)
    if hasattr(name, "_qualified_op_name"):  # an OpOverloadPacket
        return name._qualified_op_name
    if not isinstance(name, str) or "::" not in name:
        raise ValueError(f"Expected the name to be 'namespace::op_name', got '{name}'")
    return name


def _forget_handles(op):
    """torch.ops.<ns> caches its packets: a (re)registration replaces the packet."""
    from . import _ops
    namespace = _ops.ops.__dict__.get(op._namespace)
    if namespace is not None:
        namespace.__dict__.pop(op._name, None)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Makes `fn` the custom operator `name` ("namespace::op_name"); a decorator when fn is omitted."""
    def make(f):
        qualname = _qualname(name)
        op = CustomOpDef(qualname, f, mutates_args, schema)
        op.register_kernel(device_types, f)
        REGISTRY[op._key] = op
        _forget_handles(op)
        return op
    return make if fn is None else make(fn)


def get_custom_op(name):
    return REGISTRY.get(_qualname(name))


def _lookup(name):
    op = REGISTRY.get(_qualname(name))
    if op is None:
        raise ValueError(f"pyctorch can register {name} only for operators defined with torch.library "
                         "(custom_op or Library.define); the op table's own operators are compiled")
    return op


def register_fake(op, fn=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """Registers the fake (shape and dtype) function of a library operator: its Meta kernel."""
    return _lookup(op).register_fake(fn) if fn is not None else _lookup(op).register_fake()


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """The older name of register_fake (deprecated in torch, with its warning)."""
    warnings.warn("torch.library.impl_abstract was renamed to torch.library.register_fake. Please use that "
                  "instead; we will remove torch.library.impl_abstract in a future version of PyTorch.",
                  DeprecationWarning, stacklevel=2)
    return register_fake(qualname, func) if func is not None else register_fake(qualname)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Registers the backward (and setup_context) of a library operator."""
    _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, fn=None, /, *, lib=None):
    """Registers a per-device implementation of a library operator."""
    return _lookup(op).register_kernel(device_types, fn) if fn is not None else \
        _lookup(op).register_kernel(device_types)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Inside autocast for device_type, the operator's floating-point tensor inputs are cast to cast_inputs and it
    runs with autocast off."""
    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"Unknown device type: {device_type}")
    _lookup(op)._autocast[device_type] = cast_inputs


class _FakeImplCtx:
    """What get_ctx() returns inside a fake function."""

    def new_dynamic_size(self, *, min=0, max=None):
        raise NotImplementedError("pyctorch runs fake functions on meta tensors without symbolic sizes: an "
                                  "output whose size depends on data cannot be described (new_dynamic_size)")


_fake_ctx = []


def get_ctx():
    """The context of the running fake function (torch.library.get_ctx)."""
    if not _fake_ctx:
        raise RuntimeError("torch.library.get_ctx() called outside of a fake impl (register_fake function)")
    return _fake_ctx[-1]


# ---------------------------------------------------------------------------------------------- Library

class Library:
    """A set of registrations in one namespace: kind "DEF" (defines the namespace's operators; one per
    namespace), "FRAGMENT" (defines more), "IMPL" (only kernels). `_destroy()` undoes them."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF" and ns in _DEF_NAMESPACES:
            raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please "
                               "put all of your definitions in a single TORCH_LIBRARY block.  If you were trying "
                               "to specify implementations, consider using TORCH_LIBRARY_IMPL (which can be "
                               "duplicated).")
        if kind == "DEF":
            _DEF_NAMESPACES.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defined = []      # keys of REGISTRY this library added
        self._impls = []        # (key, slot, previous kernel)
        self._destroyed = False

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Defines an operator from its schema ('name(Tensor x) -> Tensor'); returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError(f"define is not allowed in a Library of kind IMPL (namespace {self.ns})")
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        name, overload, text = parse_definition(self.ns, schema)
        op = OpDef(self.ns, name, overload, text)
        if op._key in REGISTRY:
            raise RuntimeError(f"Tried to register an operator ({op.schema}) with the same name and overload "
                               "name multiple times. Each overload's schema should only be registered with a "
                               "single call to def().")
        REGISTRY[op._key] = op
        self._defined.append(op._key)
        _forget_handles(op)
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Registers fn as the kernel of op_name ('name' or 'name.overload', or an OpOverload) for dispatch_key
        (the Library's own key when empty)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        key = dispatch_key or self.dispatch_key
        if with_keyset:
            raise NotImplementedError("pyctorch's dispatcher has no keysets: register the kernel without "
                                      "with_keyset=True")
        qualname = op_name if isinstance(op_name, str) else _qualname(op_name)
        if "::" not in qualname:
            qualname = f"{self.ns}::{qualname}"
        if qualname.startswith("aten::"):
            raise NotImplementedError(f"pyctorch cannot replace the kernel of {qualname} from Python: the op "
                                      "table's operators are compiled (define a new operator instead)")
        op = REGISTRY.get(qualname) or REGISTRY.get(qualname.replace(".default", ""))
        if op is None:
            raise RuntimeError(f"Could not find schema for {qualname}: define it first (Library.define)")
        if key not in DISPATCH_KEYS:
            raise NotImplementedError(f"pyctorch's library operators take the dispatch keys "
                                      f"{sorted(k for k in DISPATCH_KEYS if k)}, not '{key}'")
        if fn is fallthrough_kernel:
            return
        slot = DISPATCH_KEYS[key]
        if slot in op._kernels:
            shown = key or "CompositeExplicitAutograd"
            warnings.warn(f"Overriding a previously registered kernel for the same operator and the same "
                          f"dispatch key\n  operator: {op.schema}\n  dispatch key: {shown}", UserWarning,
                          stacklevel=2)
        self._impls.append((op._key, slot, op._kernels.get(slot)))
        op._kernels[slot] = fn

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("pyctorch's dispatcher takes no Python fallback kernels (Library.fallback)")

    def _destroy(self):
        if self._destroyed:
            return
        self._destroyed = True
        for key, slot, previous in reversed(self._impls):
            op = REGISTRY.get(key)
            if op is not None:
                if previous is None:
                    op._kernels.pop(slot, None)
                else:
                    op._kernels[slot] = previous
        for key in self._defined:
            op = REGISTRY.pop(key, None)
            if op is not None:
                _forget_handles(op)
        if self.kind == "DEF":
            _DEF_NAMESPACES.discard(self.ns)


_module_libraries = {}  # namespace -> the FRAGMENT library the module-level define/impl use


def _library_for(ns, lib):
    if lib is not None:
        return lib
    if ns not in _module_libraries:
        _module_libraries[ns] = Library(ns, "FRAGMENT")
    return _module_libraries[ns]


def define(qualname, schema, *, lib=None, tags=()):
    """define("ns::name", "(Tensor x) -> Tensor"): a new operator without kernels."""
    ns, _, name = _qualname(qualname).partition("::")
    _library_for(ns, lib).define(name + schema, tags=tags)


_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "default": "CompositeExplicitAutograd"}


def impl(qualname, types, func=None, *, lib=None):
    """impl("ns::name", "cpu", fn): registers fn for the device types (a decorator when func is omitted). Given
    a Library as its first argument, it is Library.impl's older spelling."""
    if isinstance(qualname, Library):
        return qualname.impl(types, func)
    name = _qualname(qualname)
    kinds = [types] if isinstance(types, str) else list(types)

    def register(f):
        for kind in kinds:
            key = _DEVICE_KEYS.get(kind, kind)
            _library_for(name.partition("::")[0], lib).impl(name, f, key)
        return f
    return register if func is None else register(func)


# ---------------------------------------------------------------------------------------------- opcheck

class OpCheckError(Exception):
    """torch.testing._internal.optests.generate_tests.OpCheckError: a check of opcheck failed."""


_OPCHECK_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static",
                  "test_aot_dispatch_dynamic")
_DEFAULT_OPCHECK = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


def _opdef_of(op):
    if isinstance(op, OpDef):
        return op
    return _lookup(op)


def _tree_map(fn, value):
    if isinstance(value, (list, tuple)):
        return type(value)(_tree_map(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _tree_map(fn, v) for k, v in value.items()}
    return fn(value)


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value


def _clone(value):
    from . import Tensor
    return _tree_map(lambda v: v.detach().clone().requires_grad_(v.requires_grad) if isinstance(v, Tensor)
                     else v, value)


def _check_schema(op, args, kwargs):
    from . import Tensor, equal
    before = _clone((args, kwargs))
    out = op(*args, **kwargs)
    mutable = {a.name for a in op.overload_handle()._schema.arguments
               if a.alias_info is not None and a.alias_info.is_write}
    names = list(inspect.signature(op._signature_source()).parameters) if op.kind == "custom_op" else \
        [a.name for a in op.overload_handle()._schema.arguments]
    given = dict(zip(names, args))
    given.update(kwargs)
    old = dict(zip(names, before[0]))
    old.update(before[1])
    for name, value in given.items():
        if isinstance(value, Tensor) and name not in mutable and \
                not equal(value.detach(), old[name].detach()) and not (value.isnan().any()):
            raise OpCheckError(f"Argument {name} is not defined as mutable but was mutated")
    inputs = [v for v in _leaves((args, kwargs)) if isinstance(v, Tensor)]
    for o in _leaves(out):
        if isinstance(o, Tensor) and o.numel() and any(o.data_ptr() == i.data_ptr() or o is i for i in inputs) \
                and not mutable:
            raise OpCheckError(f"{op._name}: The output of this custom operator (1) must not also be an input to "
                               "this custom operator and (2) may not alias any inputs to this custom operator or "
                               "other returns. The most common way to trigger this error is if we have y = "
                               "custom_op(x) and y and x are the same Tensor. Instead, y should be a clone of x")
    return out


def _check_autograd_registration(op, args, kwargs):
    from . import Tensor
    needs = any(isinstance(v, Tensor) and v.requires_grad for v in _leaves((args, kwargs)))
    if not needs or op.kind == "custom_op":
        return
    if not ({"autograd", "implicit"} & set(op._kernels)) and op._backward_fn is None:
        raise OpCheckError(f"{op._qualname}: an input requires grad, but the operator has no autograd "
                           "registration (register_autograd, or an Autograd / CompositeImplicitAutograd kernel)")


def _fake_function(op):
    fake_fn = op._kernels.get("meta") or op._abstract_fn
    if fake_fn is None:
        raise OpCheckError(f"There was no fake impl registered for {op!r}. This is necessary for torch.compile/"
                           f"export/fx tracing to work. Please use `{op._name}.register_fake` to add an fake impl.")
    return fake_fn


def _check_fake(op, args, kwargs):
    from . import Tensor
    real = op(*args, **kwargs)
    fake_fn = _fake_function(op)
    meta_args = _tree_map(lambda v: v.detach().to("meta") if isinstance(v, Tensor) else v, (args, kwargs))
    _fake_ctx.append(_FakeImplCtx())
    try:
        fake = fake_fn(*meta_args[0], **meta_args[1])
    finally:
        _fake_ctx.pop()
    reals, fakes = list(_leaves(real)), list(_leaves(fake))
    if len(reals) != len(fakes):
        raise OpCheckError(f"{op._qualname}: the fake function returned {len(fakes)} values, the kernel "
                           f"{len(reals)}")
    for r, f in zip(reals, fakes):
        if isinstance(r, Tensor) and (not isinstance(f, Tensor) or tuple(r.shape) != tuple(f.shape)
                                      or r.dtype != f.dtype):
            raise OpCheckError(f"{op._qualname}: the fake function's output {getattr(f, 'shape', f)} "
                               f"{getattr(f, 'dtype', '')} does not match the kernel's {tuple(r.shape)} {r.dtype}")


def _check_captured(op, args, kwargs):
    """The operator through torch.export's capture: one opaque node, the replayed program giving the eager
    values."""
    from . import Tensor, nn, export, testing
    _fake_function(op)  # what torch's compile and export need, though pyctorch's capture runs the kernel
    positions = [i for i, v in enumerate(args) if isinstance(v, Tensor)]

    class Call(nn.Module):
        def forward(self, *tensors):
            full = list(args)
            for i, t in zip(positions, tensors):
                full[i] = t
            return op(*full, **kwargs)
    inputs = tuple(args[i].detach() for i in positions)
    program = export.export(Call(), inputs)
    targets = [n.target for n in program.graph.nodes if n.op == "call_function"]
    if op.overload_handle() not in targets:
        raise OpCheckError(f"{op._qualname}: torch.export did not capture the operator as one node")
    testing.assert_close(program.module()(*_clone(inputs)), Call()(*_clone(inputs)))


_CHECKS = {"test_schema": _check_schema, "test_autograd_registration": _check_autograd_registration,
           "test_faketensor": _check_fake, "test_aot_dispatch_static": _check_captured,
           "test_aot_dispatch_dynamic": _check_captured}


def opcheck(op, args, kwargs=None, *, test_utils=_DEFAULT_OPCHECK, raise_exception=True, atol=None, rtol=None):
    """Checks a library operator's registrations on sample arguments; {test: "SUCCESS"} (the exception in place
    of "SUCCESS" for a failed check when raise_exception=False)."""
    tests = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    if not set(tests) <= set(_OPCHECK_TESTS):
        raise ValueError(f"opcheck(op, ..., test_utils={tests}), expected test_utils to be subset of "
                         f"{_OPCHECK_TESTS} but it was not")
    target = _opdef_of(op)
    kwargs = dict(kwargs or {})
    results = {}
    for name in tests:
        try:
            _CHECKS[name](target, _clone(args), _clone(kwargs))
            results[name] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e}") from e
            results[name] = e
    return results
