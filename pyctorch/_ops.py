"""torch.ops and torch._ops: operator handles (OpOverloadPacket, OpOverload) over pyctorch's op table.

`torch.ops.aten.add` is an OpOverloadPacket, `torch.ops.aten.add.Tensor` an OpOverload with the
schema text torch prints; both are callable and run pyctorch's eager op, so code that calls ops
by their aten names (decompositions, libraries that register fallbacks, graph interpreters) gets
torch's numbers. Which overloads exist and how their schemas are spelled comes from the op table
(Note [Overloads from the op table] in _op_overloads.py).

What pyctorch does not have (said here once):
  * no dispatcher keys reachable from Python: `py_impl`, `redispatch` and registering kernels
    from Python are absent, and `tags` is an empty list (the table has no tags);
  * no custom operator libraries: `torch.ops.load_library` raises, because pyctorch cannot load
    C++ extensions built against libtorch; other namespaces than `aten` exist (as in torch any
    name gives a namespace) but hold no ops, so `torch.ops.torchvision.nms` raises torch's
    AttributeError and `hasattr` checks answer False;
  * no higher-order operators (`torch.ops.higher_order` holds none).
"""
import types

__all__ = ["OpOverload", "OpOverloadPacket", "OperatorBase", "HigherOrderOperator", "ops"]

_PACKAGE = __name__.rpartition(".")[0]  # "pyctorch"


class FunctionSchema(str):
    """An operator's schema: the text torch prints, plus the parsed parts callers read.

    It is the string itself (`str(op._schema)` and comparisons work), with `name`,
    `overload_name`, `arguments`, `returns` and `is_mutable` as torch's FunctionSchema has them.
    """

    def __new__(cls, text):
        self = super().__new__(cls, text)
        head, _, ret = text.rpartition(" -> ")
        qual, _, params = head.partition("(")
        self.name, _, self.overload_name = qual.partition(".")
        from ._op_overloads import split_params
        _, parts = split_params("f(" + params)
        kwarg_only, args = False, []
        for part in parts:
            if part == "*":
                kwarg_only = True
                continue
            args.append(Argument(part, kwarg_only))
        self.arguments = args
        ret = ret.strip()
        if ret.startswith("(") and ret.endswith(")"):
            _, rets = split_params("f" + ret)
        else:
            rets = [ret] if ret else []
        self.returns = [Argument(r, False) for r in rets]
        self.is_mutable = any(a.alias_info is not None and a.alias_info.is_write for a in args)
        return self


class AliasInfo:
    """`Tensor(a!)`: the alias set ('a') and whether the op writes through it."""

    def __init__(self, annotation):
        self.is_write = annotation.endswith("!")
        self.before_set = {annotation.rstrip("!").split(" ")[0]}
        self.after_set = self.before_set

    def __repr__(self):
        return f"AliasInfo(before_set={self.before_set}, is_write={self.is_write})"


class Argument:
    """One argument or return of a FunctionSchema: name, type (text), default_value, kwarg_only, alias_info."""

    def __init__(self, text, kwarg_only):
        decl, eq, default = text.partition("=")
        decl = decl.strip()
        if " " in decl and not decl.endswith(")"):
            type_, _, name = decl.rpartition(" ")
        else:
            type_, name = decl, ""
        self.alias_info = None
        if "(" in type_:  # Tensor(a!) / Tensor(a) / Tensor(a!)[]
            start, end = type_.index("("), type_.index(")")
            self.alias_info = AliasInfo(type_[start + 1:end])
            type_ = type_[:start] + type_[end + 1:]
        self.name, self.type, self.kwarg_only = name, type_, kwarg_only
        self.default_value = _literal(default.strip()) if eq else None
        self.has_default_value = bool(eq)

    def __repr__(self):
        return f"{self.type} {self.name}".strip()


def _literal(text):
    import ast
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


class OperatorBase:
    """The common base of torch's operator handles (OpOverload, HigherOrderOperator)."""


class HigherOrderOperator(OperatorBase):
    """torch's class for operators that take functions (cond, while_loop...); pyctorch defines none."""

    def __init__(self, name, *, cacheable=False):
        self._name = name
        self.__name__ = name

    def name(self):
        return self._name

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"pyctorch has no higher-order operators yet (torch.ops.higher_order."
                                  f"{self._name} needs graph capture, which pyctorch does not have)")


def _eager_function(op_name):
    """The pyctorch callable that runs aten::op_name eagerly: torch.<name>, then the C op, then the method."""
    import pyctorch
    from . import _C
    for holder in (pyctorch, _C):
        fn = holder.__dict__.get(op_name) if holder is _C else getattr(holder, op_name, None)
        if callable(fn) and not isinstance(fn, types.ModuleType):
            return fn
    if hasattr(pyctorch.Tensor, op_name):  # method-only ops (view, expand, copy_, the in-place forms)
        def call_method(self, *args, **kwargs):
            return getattr(self, op_name)(*args, **kwargs)
        return call_method
    if op_name.startswith("linalg_") and hasattr(pyctorch.linalg, op_name[len("linalg_"):]):
        return getattr(pyctorch.linalg, op_name[len("linalg_"):])
    raise NotImplementedError(f"pyctorch has no eager function for aten::{op_name}")


def _self_as_positional(args, kwargs):
    """aten names the first tensor `self`; pyctorch's functions take it positionally."""
    if "self" in kwargs:
        kwargs = dict(kwargs)
        args = (kwargs.pop("self"),) + tuple(args)
    return args, kwargs


class OpOverload(OperatorBase):
    """One overload of an aten operator (`torch.ops.aten.add.Tensor`): callable, with its `_schema`."""

    def __init__(self, packet, spec):
        self._overloadpacket = packet
        self._overloadname = spec.overload
        self._opname = packet._opname
        self._namespace = packet._namespace
        self._schema = FunctionSchema(spec.schema)
        self._spec = spec
        self.__name__ = f"{self._opname}.{spec.overload}"
        self._name = self._schema.name + ("" if spec.overload == "default" else "." + spec.overload)
        self.__qualname__ = self._name
        self.__module__ = f"{_PACKAGE}._ops.{self._namespace}"
        self.__doc__ = f"Runs pyctorch's {self._opname} with the schema {spec.schema}"

    @property
    def overloadpacket(self):
        return self._overloadpacket

    @property
    def op(self):
        return self

    @property
    def namespace(self):
        return self._namespace

    @property
    def tags(self):
        return []  # pyctorch's op table carries no tags (see the module docstring)

    @property
    def is_view(self):
        return any(a.alias_info is not None and not a.alias_info.is_write for a in self._schema.returns)

    def name(self):
        """'aten::add.Tensor' (torch leaves `.default` out)."""
        return self._name

    def decompose(self, *args, **kwargs):
        return NotImplemented  # pyctorch keeps no Python decompositions

    def __call__(self, /, *args, **kwargs):  # positional-only: callers may pass aten's `self=` keyword
        args, kwargs = _self_as_positional(args, kwargs)
        _check_tensor_or_scalar(self, args)
        own = getattr(self._spec, "custom_op", None)  # a torch.library operator's overload, an _aten_extra op
        return own(*args, **kwargs) if own is not None else self._overloadpacket._eager(*args, **kwargs)

    def __str__(self):
        return f"{self._namespace}.{self._opname}.{self._overloadname}"

    def __repr__(self):
        return f"<OpOverload(op='{self._namespace}.{self._opname}', overload='{self._overloadname}')>"

    def __reduce__(self):  # pickles by name, as torch's does
        return _resolve_overload, (self._namespace, self._opname, self._overloadname)


def _check_tensor_or_scalar(overload, args):
    """An overload chosen by the caller must get the argument kinds its schema names, as in torch."""
    from . import Tensor
    for position, arg in enumerate(overload._schema.arguments):
        if position >= len(args) or arg.kwarg_only:
            break
        value = args[position]
        if arg.type == "Scalar" and isinstance(value, Tensor):
            raise RuntimeError(f"{overload._schema.name}() Expected a value of type 'number' for argument "
                               f"'{arg.name}' but instead found type 'Tensor'.\nPosition: {position}\n"
                               f"Declaration: {overload._schema}")
        # torch lets a number stand for a later tensor argument of the arithmetic ops
        # (aten.add.Tensor(t, 2) works), never for `self`; pyctorch's functions take numbers anywhere
        if position == 0 and arg.type == "Tensor" and isinstance(value, (bool, int, float, complex)):
            raise RuntimeError(f"{overload._schema.name}() Expected a value of type 'Tensor' for argument "
                               f"'{arg.name}' but instead found type '{type(value).__name__}'.\n"
                               f"Position: {position}\nDeclaration: {overload._schema}")


def _resolve_packet(namespace, op_name):
    return getattr(getattr(ops, namespace), op_name)


def _resolve_overload(namespace, op_name, overload):
    return getattr(getattr(getattr(ops, namespace), op_name), overload)


class OpOverloadPacket:
    """All overloads of one aten operator (`torch.ops.aten.add`); calling it runs the eager op."""

    def __init__(self, namespace, op_name, specs):
        self._namespace = namespace
        self._opname = op_name
        self._qualified_op_name = f"{namespace}::{op_name}"
        self._specs = specs
        self._overload_names = list(specs)
        self._eager_fn = None
        self.__name__ = op_name
        self.__qualname__ = op_name
        self.__module__ = f"{_PACKAGE}._ops.{namespace}"

    def _eager(self, /, *args, **kwargs):
        if self._eager_fn is None:
            self._eager_fn = _eager_function(self._opname)
        return self._eager_fn(*args, **kwargs)

    @property
    def op(self):
        return self

    @property
    def _schemas(self):
        return {name: getattr(self, name)._schema for name in self._overload_names}

    def overloads(self):
        return list(self._overload_names)

    def __getattr__(self, key):
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{key}'")
        spec = self._specs.get(key)
        if spec is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")
        overload = OpOverload(self, spec)
        setattr(self, key, overload)  # later lookups find it directly, and `is` holds
        return overload

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._overload_names))

    def __call__(self, /, *args, **kwargs):
        args, kwargs = _self_as_positional(args, kwargs)
        return self._eager(*args, **kwargs)

    def __str__(self):
        return f"{self._namespace}.{self._opname}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._namespace}.{self._opname}')>"

    def __reduce__(self):
        return _resolve_packet, (self._namespace, self._opname)


class _OpNamespace(types.ModuleType):
    """`torch.ops.<namespace>`: a module whose attributes are the namespace's OpOverloadPackets."""

    def __init__(self, name):
        super().__init__(f"{_PACKAGE}.ops.{name}")
        self.name = name
        self._dir = []

    def _specs(self):
        if self.name == "aten":
            return _aten_specs()
        import sys
        library = sys.modules.get(f"{_PACKAGE}.library")  # torch.library.custom_op registrations
        return {} if library is None else _custom_specs(library, self.name)

    def __getattr__(self, op_name):
        if op_name.startswith("__") and op_name.endswith("__"):
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        specs = self._specs().get(op_name)
        if specs is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        packet = OpOverloadPacket(self.name, op_name, specs)
        if self.name != "aten":
            packet._eager_fn = _library_packet_call(specs)
        elif getattr(next(iter(specs.values())), "custom_op", None) is not None:  # _aten_extra's ops
            packet._eager_fn = next(iter(specs.values())).custom_op
        setattr(self, op_name, packet)
        self._dir.append(op_name)
        return packet

    def __iter__(self):
        return iter(sorted(self._specs()))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._specs()))


_aten_cache = []


class _CustomSpec:
    """One overload of a torch.library operator (custom_op or Library.define)."""
    is_out = is_inplace = False

    def __init__(self, op):
        self.op_name, self.custom_op, self.overload = op._name, op, op._overload
        self.schema = op.schema


def _custom_specs(library, namespace):
    specs = {}
    for op in library._CUSTOM_OPS.values():
        if op._namespace == namespace:
            specs.setdefault(op._name, {})[op._overload] = _CustomSpec(op)
    return specs


def _library_packet_call(specs):
    """Calling a library operator's packet: its default overload, else the only one, else the first overload
    whose schema takes the arguments (torch's dispatcher picks by schema too)."""
    if "default" in specs:
        return specs["default"].custom_op
    if len(specs) == 1:
        return next(iter(specs.values())).custom_op

    def call(*args, **kwargs):
        for spec in specs.values():
            arguments = FunctionSchema(spec.schema).arguments
            names = {a.name for a in arguments}
            required = [a for a in arguments if not a.has_default_value and not a.kwarg_only]
            if len(required) <= len(args) <= len(arguments) and set(kwargs) <= names:
                return spec.custom_op(*args, **kwargs)
        raise RuntimeError(f"No overload of {next(iter(specs.values())).op_name} takes these arguments: "
                           f"{[s.schema for s in specs.values()]}")
    return call


def _aten_specs():
    if not _aten_cache:
        from ._C import _op_table
        from ._op_overloads import overload_specs
        from ._aten_extra import extra_specs
        specs = overload_specs(_op_table())
        for op_name, overloads in extra_specs().items():
            specs.setdefault(op_name, {}).update(overloads)
        _aten_cache.append(specs)
    return _aten_cache[0]


class _Ops(types.ModuleType):
    """`torch.ops`: any attribute is a namespace (created on first use, as torch does)."""

    __file__ = "_ops.py"

    def __init__(self):
        super().__init__(f"{_PACKAGE}.ops")
        self.loaded_libraries = set()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")
        namespace = _OpNamespace(name)
        setattr(self, name, namespace)
        return namespace

    def __iter__(self):
        return iter(["aten"])

    def load_library(self, path):
        """Loading a custom-op library needs libtorch's C++ ABI, which pyctorch does not provide."""
        raise OSError(f"Could not load this library: {path}: pyctorch cannot load PyTorch C++ extension "
                      "libraries (custom operators built against libtorch) yet")

    def import_module(self, module):
        import importlib
        importlib.import_module(module)


ops = _Ops()
