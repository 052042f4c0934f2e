"""GraphModule: an nn.Module whose forward is Python code generated from a Graph."""
import copy
import linecache
import os

from pyctorch.nn import Module, Parameter

from ._names import qualified_name, resolve_qualified_name
from .graph import Graph
from .node import map_arg

__all__ = ["GraphModule"]

_source_counter = [0]


def _exec_source(src, globals_):
    """Compile src under a unique fake file name registered with linecache, so tracebacks show the lines."""
    _source_counter[0] += 1
    filename = f"<eval_with_key>.{_source_counter[0]}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = dict(globals_)
    exec(compile(src, filename, "exec"), namespace)
    return namespace["forward"]


def _copy_attr(src, dst, target):
    """Make dst.<target> (a dotted path) the object src.<target>, creating plain Modules for missing parents.
    Buffers stay buffers (persistent or not, as in src) and other tensors become buffers, as torch does."""
    import pyctorch
    *prefix, field = target.split(".")
    for item in prefix:
        src_next = getattr(src, item)
        dst_next = getattr(dst, item, None)
        if dst_next is None:
            dst_next = Module()
            setattr(dst, item, dst_next)
        src, dst = src_next, dst_next
    value = getattr(src, field)
    if isinstance(value, pyctorch.Tensor) and not isinstance(value, Parameter):
        non_persistent = isinstance(src, Module) and field in src._non_persistent_buffers_set
        dst.register_buffer(field, value, persistent=not non_persistent)
    else:
        setattr(dst, field, value)


def _assign_attr(value, dst, target):
    *prefix, field = target.split(".")
    for item in prefix:
        nxt = getattr(dst, item, None)
        if nxt is None:
            nxt = Module()
            setattr(dst, item, nxt)
        dst = nxt
    import pyctorch
    if isinstance(value, pyctorch.Tensor) and not isinstance(value, Parameter):
        dst.register_buffer(field, value)
    else:
        setattr(dst, field, value)


class GraphModule(Module):
    """Module built from root (an nn.Module or a dict of name -> object) and a Graph; see recompile()."""

    def __new__(cls, *args, **kwargs):
        # Each instance gets its own class, so that recompile() can set forward on the class without touching
        # other GraphModules (the Module call path looks forward up on the type, as torch's does).
        for base in cls.__mro__:
            if base.__dict__.get("_pyctorch_fx_per_instance"):
                continue
            break

        class GraphModuleImpl(base):
            _pyctorch_fx_per_instance = True
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        self.__class__.__qualname__ = class_name
        if isinstance(root, Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was "
                                           "not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta = dict(getattr(root, "meta", {}) or {}) if isinstance(root, Module) else {}
        self._tracer_cls = getattr(graph, "_tracer_cls", None)
        self.graph = graph

    # ---- the graph and its code ----
    @property
    def graph(self):
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        if "_code" not in self.__dict__:
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self.__dict__["_code"]

    def recompile(self):
        """Regenerate code from graph and make it this module's forward; call it after editing graph."""
        python_code = self.graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        type(self).forward = _exec_source(python_code.src, python_code.globals)
        return python_code

    # ---- submodule surgery for passes ----
    def add_submodule(self, target, m):
        """Install m at the dotted path target, creating plain Modules for missing parents; False when a parent
        on the path exists but is not a Module."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Remove the submodule at target; False when there is none."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, Module):
                return False
        if not isinstance(getattr(mod, field, None), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self):
        """Remove the submodules no call_module/get_attr node reaches (a called module keeps all of its own)."""
        used = set()
        for node in self.graph.nodes:
            if node.op not in ("call_module", "get_attr"):
                continue
            atoms = node.target.split(".")
            used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
            if node.op == "call_module":
                try:
                    called = self.get_submodule(node.target)
                except AttributeError:
                    continue
                used.update(f"{node.target}.{name}" for name, _ in called.named_modules() if name)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False,
                       **kwargs):
        """The module as a class definition: its generated forward, nested classes for GraphModule children."""
        text = self._readable(type(self).__name__)
        if print_output:
            print(text)
        return text

    def _readable(self, name):
        body = self.code.strip("\n").rstrip()
        lines = [f"class {name}(torch.nn.Module):"]
        for child_name, child in self.named_children():
            if isinstance(child, GraphModule):
                nested = child._readable(child_name)
                lines += ["    " + line if line else line for line in nested.splitlines()] + [""]
        lines += ["    " + line if line else line for line in body.splitlines()]
        return "\n".join(lines) + "\n"

    def __str__(self):
        return "\n".join([super().__str__(), self.code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    # ---- copies and pickles ----
    def _base_class(self):
        for base in type(self).__mro__:
            if not base.__dict__.get("_pyctorch_fx_per_instance"):
                return base
        return GraphModule

    def __deepcopy__(self, memo):
        result = self._base_class().__new__(self._base_class())
        memo[id(self)] = result
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        object.__setattr__(result, "__dict__", copy.deepcopy(state, memo))
        type(result).__name__ = type(self).__name__
        type(result).__qualname__ = type(self).__name__
        result.graph = copy.deepcopy(self.graph, memo)
        return result

    def __copy__(self):
        result = self._base_class().__new__(self._base_class())
        object.__setattr__(result, "__dict__", dict(self.__dict__))
        type(result).__name__ = type(self).__name__
        result.graph = self.graph
        return result

    def __reduce__(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        return (_rebuild_graph_module, (self._base_class(), state, _graph_to_data(self.graph), type(self).__name__))

    def __reduce_ex__(self, protocol):
        return self.__reduce__()

    def to_folder(self, folder, module_name="FxModule"):
        """Write module.py (a class with the generated forward) and state.pt (this module's submodules and
        tensors, loaded back by the class) to folder."""
        import pyctorch
        os.makedirs(folder, exist_ok=True)
        pyctorch.save({"modules": dict(self.named_children()), "state": self.state_dict()},
                      os.path.join(folder, "state.pt"))
        body = "\n".join("    " + line for line in self.code.strip("\n").splitlines())
        src = (f"import pyctorch as torch\nfrom pyctorch import device, nn\nfrom math import inf, nan\n"
               f"import operator\nimport os\n\n\nclass {module_name}(torch.nn.Module):\n"
               f"    def __init__(self):\n        super().__init__()\n"
               f"        saved = torch.load(os.path.join(os.path.dirname(__file__), 'state.pt'), weights_only=False)\n"
               f"        for name, child in saved['modules'].items():\n            setattr(self, name, child)\n"
               f"        self.load_state_dict(saved['state'], strict=False)\n\n{body}\n")
        with open(os.path.join(folder, "module.py"), "w") as f:
            f.write(src)
        with open(os.path.join(folder, "__init__.py"), "w") as f:
            f.write(f"from .module import {module_name}\n")


class _NodeRef:
    """A node named inside pickled graph data."""

    def __init__(self, name):
        self.name = name


def _graph_to_data(graph):
    """Graph -> plain picklable data: pyctorch functions (which cannot be pickled) travel by their names."""
    nodes = []
    for n in graph.nodes:
        target = n.target
        if n.op == "call_function":
            name = qualified_name(target)
            try:
                if resolve_qualified_name(name) is target:
                    target = ("by_name", name)
            except (ImportError, AttributeError):
                pass
        to_ref = lambda x: _NodeRef(x.name)  # noqa: E731
        nodes.append((n.op, n.name, target, map_arg(n.args, to_ref), map_arg(n.kwargs, to_ref), n.type))
    return nodes


def _graph_from_data(nodes):
    from .node import map_aggregate
    graph = Graph()
    env = {}
    for op, name, target, args, kwargs, type_expr in nodes:
        if isinstance(target, tuple) and len(target) == 2 and target[0] == "by_name":
            target = resolve_qualified_name(target[1])
        fix = lambda x: env[x.name] if isinstance(x, _NodeRef) else x  # noqa: E731
        node = graph.create_node(op, target, map_aggregate(args, fix), map_aggregate(kwargs, fix), name, type_expr)
        env[name] = node
    return graph


def _rebuild_graph_module(base_cls, state, graph_data, class_name):
    result = base_cls.__new__(base_cls)
    object.__setattr__(result, "__dict__", state)
    type(result).__name__ = class_name
    type(result).__qualname__ = class_name
    result.graph = _graph_from_data(graph_data)
    return result
