"""Graph: the ordered list of Nodes of one traced function, with the editing API of torch.fx.Graph."""
import contextlib
import inspect

from ._codegen import generate_python_code
from ._names import Namespace, name_hint, qualified_name
from .node import Node, map_arg

__all__ = ["Graph"]


class _NodeList:
    """A live view of a graph's nodes, in order. As torch's: the next node is read after the loop body
    runs, so nodes inserted just after the current one are visited, and erasing the current node is safe
    (an erased node keeps its links)."""

    def __init__(self, graph, reverse=False):
        self._graph = graph
        self._reverse = reverse

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        step = "_prev" if self._reverse else "_next"
        cur = getattr(root, step)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, step)

    def __reversed__(self):
        return _NodeList(self._graph, not self._reverse)

    def __repr__(self):
        return repr(list(self))


class Graph:
    """A data-flow graph of Nodes; see pyctorch.fx for the node kinds."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._len = 0
        self._namespace = Namespace()
        self._insert = self._root.prepend  # new nodes go before the root sentinel: at the end
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        return _NodeList(self)

    def find_nodes(self, *, op, target=None):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- creating nodes ----
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else name_hint(op, target)
        node = Node(self, self._namespace.create_name(candidate, None), op, target, args, kwargs, type_expr)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of node (from any graph) in this graph, its input nodes mapped through arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        copy = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        copy.meta = dict(node.meta)
        return copy

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of g into self; val_map (old node -> new node) is filled in. Returns g's output value
        mapped into self (or its copied output node with return_output_node=True)."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        copy = Graph(tracer_cls=self._tracer_cls)
        result = copy.graph_copy(self, {}, return_output_node=True)
        if result is not None:
            value, old_output = result
            copy.output(value, type_expr=old_output.type).meta = dict(old_output.meta)
        return copy

    # ---- where new nodes go ----
    @contextlib.contextmanager
    def _inserting(self, insert):
        previous = self._insert
        self._insert = insert
        try:
            yield
        finally:
            self._insert = previous

    def inserting_before(self, n=None):
        """Context manager: nodes created inside go just before n (at the start of the graph when n is None)."""
        if n is None:
            return self.inserting_after(self._root)
        return self._inserting(n.prepend)

    def inserting_after(self, n=None):
        """Context manager: nodes created inside go just after n (in order); at the end when n is None."""
        if n is None:
            return self._inserting(self._root.prepend)
        anchor = [n]

        def insert(node):
            anchor[0].append(node)
            anchor[0] = node  # the next one goes after this one: creation order is kept
        return self._inserting(insert)

    # ---- removing nodes ----
    def erase_node(self, to_erase):
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})  # drop the user edges from its inputs

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase nodes whose value nobody uses and that have no side effect; True when something changed."""
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    # ---- checks and printing ----
    def lint(self):
        """Check the graph's invariants: ownership, inputs defined before use, users edges, unique names, targets."""
        seen_names, defined = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            for inp in node.all_input_nodes:
                if inp.graph is not self:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' does not belong to this Graph, "
                                       "but was used as an argument! If you are copying nodes from another "
                                       "graph, make sure to use ``arg_transform`` on node_copy() to remap values\n"
                                       f"{self}")
                if inp not in defined:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' was used before it has been defined! "
                                       "Please check that Nodes in the graph are topologically ordered\n"
                                       f"{self}")
                if node not in inp.users:
                    raise RuntimeError(f"Node '{node}' uses '{inp}' but is missing from its users")
            defined.add(node)
        root = self._owning_module
        if root is None:
            return
        for node in self.nodes:
            if node.op not in ("call_module", "get_attr"):
                continue
            obj = root
            for i, atom in enumerate(node.target.split(".")):
                if not hasattr(obj, atom):
                    seen = ".".join(node.target.split(".")[:i])
                    what = "a submodule" if node.op == "call_module" else "an attribute"
                    raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute "
                                       f"{atom} of {seen or 'the root module'} (expected {what})")
                obj = getattr(obj, atom)
            if node.op == "call_module" and not hasattr(obj, "forward"):
                raise RuntimeError(f"Node {node} target {node.target} {atom} of {seen} does not reference an "
                                   "nn.Module")

    def __str__(self):
        ret = [""]
        lines = [n.format_node(None, ret) for n in self.nodes]
        header = f"graph(){ret[0]}:"
        return "\n".join([header] + ["    " + line for line in lines if line])

    def print_tabular(self):
        """Print the nodes as a table (opcode, name, target, args, kwargs) without extra libraries."""
        rows = [("opcode", "name", "target", "args", "kwargs")]
        for n in self.nodes:
            target = qualified_name(n.target) if n.op == "call_function" else n.target
            rows.append((n.op, n.name, str(target), str(n.args), str(n.kwargs)))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        print("\n".join(lines))

    def python_code(self, root_module):
        return generate_python_code(self, root_module)

    def on_generate_code(self, make_transformer):
        raise NotImplementedError("pyctorch.fx does not implement Graph.on_generate_code")
