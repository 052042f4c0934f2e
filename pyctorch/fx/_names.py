"""Names: unique Python identifiers for nodes, and the importable name of a call_function target.

pyctorch's C functions have no `__module__` (and cannot be pickled), and many Python functions live in
private modules (`pyctorch._composites.diff` is `pyctorch.diff`), so the public name of a function is found
by looking for it in the namespaces torch code reaches it through: `pyctorch`, `pyctorch.nn.functional`,
`pyctorch.linalg`, `pyctorch.special`, `pyctorch.fft`. The first module that holds the object names it
(`pyctorch.conv2d` before `pyctorch.nn.functional.conv2d`, as torch prints `torch.conv2d` for both).

Note [Printed names]
Graphs and generated code spell pyctorch's functions with the prefix `torch.` (`torch.relu`,
`torch.nn.functional.gelu`), the way pyctorch already prints its dtypes (`torch.float32`): the code then reads
exactly as torch's does, and the generated forward runs with the global name `torch` bound to the pyctorch
module (never to the real torch). resolve_qualified_name() maps the prefix back to pyctorch.
"""
import builtins
import importlib
import keyword
import re
import sys

# The modules whose functions get public names (and, while tracing, recording wrappers): see
# Note [Tracing torch functions] in _patching.py. Order matters: the first holder names a shared object.
TORCH_NAMESPACES = ("pyctorch", "pyctorch.nn.functional", "pyctorch.linalg", "pyctorch.special", "pyctorch.fft")

_public_names = {}       # id(function) -> "pyctorch.relu"
_indexed_modules = set()  # (module name, number of entries when indexed): re-index when a namespace grows


def _index_namespaces():
    for module_name in TORCH_NAMESPACES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        key = (module_name, len(module.__dict__))
        if key in _indexed_modules:
            continue
        _indexed_modules.add(key)
        for name, value in list(module.__dict__.items()):
            if name.startswith("__") or not callable(value) or isinstance(value, type):
                continue
            original = getattr(value, "_pyctorch_fx_original", value)  # a recording wrapper names its original
            printed = "torch" + module_name[len("pyctorch"):]
            _public_names.setdefault(id(original), (f"{printed}.{name}", original))


def is_torch_function(obj):
    """Whether obj is a function of the torch namespaces (pyctorch.relu, F.gelu, ...)."""
    _index_namespaces()
    entry = _public_names.get(id(obj))
    return entry is not None and entry[1] is obj


def qualified_name(fn):
    """The dotted name of fn ("torch.relu" for pyctorch.relu, "operator.add", "builtins.getattr")."""
    if isinstance(fn, str):
        return fn
    from pyctorch._ops import OpOverload, OpOverloadPacket
    if isinstance(fn, OpOverload):  # graphs of torch.export print aten calls as torch does
        return f"torch.ops.{fn._namespace}.{fn._opname}.{fn._overloadname}"
    if isinstance(fn, OpOverloadPacket):
        return f"torch.ops.{fn._namespace}.{fn._opname}"
    _index_namespaces()
    entry = _public_names.get(id(fn))
    if entry is not None and entry[1] is fn:
        return entry[0]
    name = getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None)
    if module == "_operator":
        module = "operator"
    if module is None:
        module = "builtins" if getattr(builtins, name, None) is fn else "__main__"
    qualname = getattr(fn, "__qualname__", name)
    if module == "pyctorch" or module.startswith("pyctorch."):  # Note [Printed names], when importable so
        printed = "torch" + module[len("pyctorch"):] + "." + qualname
        try:
            if resolve_qualified_name(printed) is fn:
                return printed
        except (ImportError, AttributeError):
            pass
    return f"{module}.{qualname}"


def resolve_qualified_name(dotted):
    """The object a dotted name from qualified_name() refers to (used when unpickling graphs)."""
    if dotted == "torch" or dotted.startswith("torch."):  # Note [Printed names]
        dotted = "pyctorch" + dotted[len("torch"):]
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot resolve {dotted!r}")


def _snake_case(s):
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", s).lower()


# Names a generated forward must not shadow: keywords, builtins, and the module names the code uses.
_ILLEGAL_NAMES = set(keyword.kwlist) | set(dir(builtins)) | {"self", "pyctorch", "torch", "inf", "nan", "operator",
                                                              "device", "NoneType", "wrap"}


class Namespace:
    """Hands out unique identifiers: `add`, `add_1`, `add_2`, ...; builtins and keywords get a suffix."""

    def __init__(self):
        self._used = set()
        self._counts = {}
        self._by_object = {}

    def create_name(self, candidate, obj=None):
        if obj is not None and id(obj) in self._by_object:
            return self._by_object[id(obj)][0]
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        match = re.match(r"^(.*?)(?:_(\d+))?$", candidate)
        base = match.group(1) or candidate
        if candidate in self._used or candidate in _ILLEGAL_NAMES:
            num = self._counts.get(base, 0)
            while True:
                num += 1
                candidate = f"{base}_{num}"
                if candidate not in self._used:
                    break
            self._counts[base] = num
        self._used.add(candidate)
        if obj is not None:
            self._by_object[id(obj)] = (candidate, obj)  # obj kept alive so its id stays unique
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._by_object[id(obj)] = (name, obj)

    def is_used(self, name):
        return name in self._used

    def mark_used(self, name):
        self._used.add(name)


def name_hint(op, target):
    """The candidate name of a node: the function/method/module name in snake case."""
    if op in ("call_module", "get_attr"):
        return _snake_case(target.replace(".", "_"))
    if op == "call_method":
        return _snake_case(target)
    if op == "call_function":
        return _snake_case(getattr(target, "__name__", None) or "fn")
    return target
