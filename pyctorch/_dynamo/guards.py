"""The guards of a captured graph: what Python decided during the capture, checked before the graph runs again.

Note [Compile guards]
A capture (capture.py) bakes into its graph every value Python computed along the way. The graph is reused only
when those values would come out the same, which the guards check, cheapest first:
  - global state: grad mode, autocast (enabled and dtype, per device type), the default dtype;
  - the arguments: the same pytree structure; each tensor with the same type, shape, strides, dtype, device and
    requires_grad, and the same pattern of tensors passed more than once; every other leaf equal (numbers,
    strings, None) or, for other objects, the same object;
  - the compiled module's tree: the same submodules, each in the same training mode, with the same parameter and
    buffer tensors (same shapes and dtypes), the same number of hooks, and equal values of its plain attributes
    (numbers, strings, None, tuples of them);
  - the plain values (as above) of the globals named by the user code the capture ran (its functions' co_names,
    collected with a profile hook) and of the compiled function's closure cells.
Anything else Python reads (an attribute of some other object, a mutable container's contents) is not guarded:
code whose graph depends on such a value must pass it as an argument or keep it on a module.
"""
import sys

import pyctorch
from pyctorch import _C
from pyctorch.utils import _pytree as pytree

__all__ = ["Guards", "plain", "user_code_globals"]

_PLAIN = (int, float, bool, str, bytes, complex, type(None))


def plain(value):
    """Whether value is compared by value in a guard: a number, string, None, dtype or device, or a tuple of them."""
    if isinstance(value, _PLAIN) or isinstance(value, (pyctorch.dtype, pyctorch.device)):
        return True
    return type(value) is tuple and all(plain(v) for v in value)


def _state():
    return (_C.is_grad_enabled(), _C.is_autocast_enabled("cpu"), _C.get_autocast_dtype("cpu"),
            _C.is_autocast_enabled("cuda"), _C.get_autocast_dtype("cuda"), pyctorch.get_default_dtype())


def _tensor_key(t):
    return (type(t), tuple(t.shape), t.stride(), t.dtype, t.device, t.requires_grad)


def _plain_attrs(module):
    return {k: v for k, v in vars(module).items() if plain(v)}


def _hook_counts(m):
    return (len(m._forward_hooks), len(m._forward_pre_hooks), len(m._backward_hooks),
            len(getattr(m, "_forward_hooks_with_kwargs", ())))


def _module_state(m):
    return (m.training, tuple(map(id, m._parameters.values())), tuple(map(id, m._buffers.values())),
            tuple(map(id, m._modules.values())), _hook_counts(m),
            tuple((tuple(t.shape), t.dtype) for t in m._parameters.values() if t is not None),
            tuple((tuple(t.shape), t.dtype) for t in m._buffers.values() if t is not None))


def _flatten(args, kwargs):
    return pytree.tree_flatten((args, kwargs))


class Guards:
    """Built from the arguments and the state before a capture (so that what the run changes is seen as such)."""

    def __init__(self, fn, module, args, kwargs):
        self.state = _state()
        leaves, self.spec = _flatten(args, kwargs)
        self.leaves = []
        first = {}
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, pyctorch.Tensor):
                self.leaves.append(("t", _tensor_key(leaf), first.setdefault(id(leaf), i)))
            elif plain(leaf):
                self.leaves.append(("v", type(leaf), leaf))
            else:
                self.leaves.append(("o", leaf))
        self.modules = []
        if module is not None:
            for m in module.modules():
                self.modules.append((m, _module_state(m), _plain_attrs(m)))
        self.cells = []
        closure = getattr(getattr(fn, "__func__", fn), "__closure__", None) or ()
        for cell in closure:
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if plain(value):
                self.cells.append((cell, value))
        self.globals = []  # (dict, name, value): filled by add_globals after the run
        self.fast = None   # the generated check (compile_check), made once the globals are known

    def finish(self, global_entries, input_positions):
        """After the run: the globals its user code named, and which argument leaves are the graph's inputs."""
        self.globals = list(global_entries)
        self.inputs = list(input_positions)
        self.fast = _compile_check(self)

    def match(self, args, kwargs):
        """The graph's input tensors when it may run for these arguments, else None (failure() says why)."""
        if self.fast is not None:
            return self.fast(args, kwargs)
        if self.failure(args, kwargs) is not None:
            return None
        leaves = pytree.tree_leaves((args, kwargs))
        return [leaves[i] for i in self.inputs]

    def changed_by_run(self):
        """What the captured run itself changed that its graph cannot redo (module attributes, globals)."""
        for m, state, attrs in self.modules:
            if _module_state(m)[1:4] != state[1:4]:
                return f"the run replaced a parameter, buffer or submodule of {type(m).__name__}"
            if _plain_attrs(m) != attrs:
                return f"the run changed an attribute of {type(m).__name__} " \
                       f"({sorted(set(_plain_attrs(m).items()) ^ set(attrs.items()), key=str)[:2]})"
        return None

    def failure(self, args, kwargs):
        """None when the graph may run for these arguments; else the first failing guard, as torch words it."""
        if _state() != self.state:
            return "global state changed (grad mode, autocast or the default dtype)"
        leaves, spec = _flatten(args, kwargs)
        if spec != self.spec or len(leaves) != len(self.leaves):
            return "the arguments' structure changed"
        first = {}
        for i, (leaf, saved) in enumerate(zip(leaves, self.leaves)):
            kind = saved[0]
            if kind == "t":
                if not isinstance(leaf, pyctorch.Tensor):
                    return f"argument {i}: expected a tensor, got {type(leaf).__name__}"
                key = _tensor_key(leaf)
                if key != saved[1]:
                    return _tensor_mismatch(i, saved[1], key)
                if first.setdefault(id(leaf), i) != saved[2]:
                    return f"argument {i}: tensors passed more than once changed"
            elif kind == "v":
                if type(leaf) is not saved[1] or leaf != saved[2]:
                    return f"argument {i} == {saved[2]!r}, got {leaf!r}"
            elif leaf is not saved[1]:
                return f"argument {i} is not the same object"
        for m, state, attrs in self.modules:
            if _module_state(m) != state:
                return f"{type(m).__name__}: training mode, parameters, buffers, submodules or hooks changed"
            current = vars(m)
            for k, v in attrs.items():
                if current.get(k, _MISSING) != v:
                    return f"{type(m).__name__}.{k} == {v!r}, got {current.get(k, '<deleted>')!r}"
        for cell, value in self.cells:
            if cell.cell_contents != value:
                return f"closure value {value!r} changed"
        for namespace, name, value in self.globals:
            if namespace.get(name, _MISSING) != value:
                return f"global '{name}' == {value!r}, got {namespace.get(name, '<deleted>')!r}"
        return None


_MISSING = object()


def _compile_check(guards):
    """Straight-line Python that checks what failure() checks, for arguments given as plain values and tensors
    (no nested containers): one comparison per guarded value. None when the arguments are nested."""
    spec_args, spec_kwargs = guards.spec.children()
    if spec_args.type is not tuple or spec_kwargs.type is not dict or \
            any(not child.is_leaf() for child in spec_args.children()) or \
            any(not child.is_leaf() for child in spec_kwargs.children()):
        return None
    n_args = spec_args.num_children
    kw_names = list(spec_kwargs.context or ())
    env = {"_state": _state, "_MISSING": _MISSING}
    lines = ["def check(args, kwargs):", f"    if len(args) != {n_args} or len(kwargs) != {len(kw_names)}:",
             "        return None"]

    def const(value):
        name = f"_k{len(env)}"
        env[name] = value
        return name
    lines.append(f"    if _state() != {const(guards.state)}:")
    lines.append("        return None")
    first_seen = {}
    for i, saved in enumerate(guards.leaves):
        src = f"args[{i}]" if i < n_args else f"kwargs.get({kw_names[i - n_args]!r}, _MISSING)"
        lines.append(f"    a = {src}")
        if saved[0] == "t":
            type_, shape, stride, dtype, device, rg = saved[1]
            cond = (f"type(a) is not {const(type_)} or a.shape != {shape!r} or a.dtype is not {const(dtype)} or "
                    f"a.stride() != {stride!r} or a.requires_grad is not {rg!r} or a.device != {const(device)}")
            lines += [f"    if {cond}:", "        return None"]
            if saved[2] != i:  # the same tensor as an earlier argument
                lines += [f"    if a is not t{saved[2]}:", "        return None"]
            else:
                first_seen[i] = True
            lines.append(f"    t{i} = a")
        elif saved[0] == "v":
            lines += [f"    if type(a) is not {const(saved[1])} or a != {const(saved[2])}:", "        return None"]
        else:
            lines += [f"    if a is not {const(saved[1])}:", "        return None"]
    if first_seen:  # distinct tensors must stay distinct
        names = [f"t{i}" for i in first_seen]
        if len(names) > 1:
            lines += [f"    if len({{{', '.join(f'id({n})' for n in names)}}}) != {len(names)}:", "        return None"]
    for m, state, attrs in guards.modules:
        d = const(vars(m))
        lines.append(f"    d = {d}")
        for k, v in attrs.items():
            lines += [f"    if d.get({k!r}, _MISSING) != {const(v)}:", "        return None"]
        for field, ids in (("_parameters", state[1]), ("_buffers", state[2]), ("_modules", state[3])):
            values = list(getattr(m, field).values())
            lines += [f"    x = d[{field!r}]", f"    if len(x) != {len(values)}:", "        return None"]
            for j, value in enumerate(values):
                lines += [f"    if x.get({list(getattr(m, field).keys())[j]!r}) is not {const(value)}:",
                          "        return None"]
                if field != "_modules" and value is not None:
                    lines += [f"    if {const(value)}.shape != {tuple(value.shape)!r}:", "        return None"]
        lines += [f"    if _hooks({const(m)}) != {state[4]!r}:", "        return None"]
    env["_hooks"] = _hook_counts
    for cell, value in guards.cells:
        lines += [f"    if {const(cell)}.cell_contents != {const(value)}:", "        return None"]
    for namespace, name, value in guards.globals:
        lines += [f"    if {const(namespace)}.get({name!r}, _MISSING) != {const(value)}:", "        return None"]
    lines.append(f"    return [{', '.join(f't{i}' for i in guards.inputs)}]")
    exec(compile("\n".join(lines), "<compile guards>", "exec"), env)
    return env["check"]


def _tensor_mismatch(i, saved, key):
    names = ("type", "size", "stride", "dtype", "device", "requires_grad")
    for name, a, b in zip(names, saved, key):
        if a != b:
            if name in ("size", "stride"):
                for d, (x, y) in enumerate(zip(a, b)):
                    if x != y:
                        return f"tensor argument {i} {name} mismatch at index {d}. expected {x}, actual {y}"
                return f"tensor argument {i} rank mismatch. expected {len(a)}, actual {len(b)}"
            return f"tensor argument {i} {name} mismatch. expected {a}, actual {b}"
    return f"tensor argument {i} changed"


class user_code_globals:
    """Context manager: collects (globals dict, name, value) for the plain globals named by each user function
    that runs while it is open (functions outside the pyctorch package), with the value at the first call."""

    def __init__(self):
        import os
        import sysconfig
        # pyctorch's own code and the standard library's (whose module state, as warnings' filter version, moves
        # for reasons of its own) are not the user's
        paths = sysconfig.get_paths()
        self.skip = tuple({os.path.dirname(pyctorch.__file__), paths["stdlib"], paths["platstdlib"]})
        self.keep = tuple({paths["purelib"], paths["platlib"]})  # site-packages, under the stdlib's folder
        self.seen_codes = set()
        self.entries = {}

    def _profile(self, frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code in self.seen_codes:
            return
        self.seen_codes.add(code)
        filename = code.co_filename
        if (filename.startswith(self.skip) and not filename.startswith(self.keep)) or filename.startswith("<frozen"):
            return
        namespace = frame.f_globals
        for name in code.co_names:
            if name in namespace:
                value = namespace[name]
                if plain(value):
                    self.entries.setdefault((id(namespace), name), (namespace, name, value))

    def __enter__(self):
        self.previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self.previous)
        return False

    def changed(self):
        """A global that the run changed (its graph would not redo that), or None."""
        for namespace, name, value in self.entries.values():
            if namespace.get(name, _MISSING) != value:
                return name
        return None
