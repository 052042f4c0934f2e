"""torch.utils._pytree: flatten nested containers into a list of leaves plus a TreeSpec, and back.

A pytree is a leaf or a *node*: an instance of a registered container type (tuple, list, dict,
OrderedDict, defaultdict, deque, every namedtuple, torch.return_types, and whatever a library
registers) whose children are pytrees. Everything else, None included, is a leaf.

The registry, the TreeSpec (its repr, equality, hash, counts) and the JSON form written by
`treespec_dumps` follow torch 2.13's pure-Python pytree, so a spec dumped here loads in torch and the
reverse; error types and messages for mismatched structures are torch's too.

Note [Return types as nodes]
torch registers each class of `torch.return_types` as a node at import. pyctorch makes those classes
on first use (C structseqs, or namedtuples for the Python-level composites), so they are registered
the first time a pytree function meets one (`_node_type`): same node type, context None and keys
as torch's, whichever way pyctorch built the class.
"""
import dataclasses
import functools
import importlib
import json
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from enum import Enum
from typing import Any, Callable, Generic, Hashable, Iterable, NamedTuple, Protocol, TypeVar

__all__ = [
    "PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
    "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
    "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten",
    "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path",
    "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any", "tree_all_only", "tree_any_only",
    "treespec_dumps", "treespec_loads", "treespec_pprint", "is_namedtuple", "is_namedtuple_class",
    "is_namedtuple_instance", "is_structseq", "is_structseq_class", "is_structseq_instance",
]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

# ---- type aliases (documentation only, as in torch) ----
Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any  # anything json.dumps accepts
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[Any, Any]], Any]]
FlattenFunc, UnflattenFunc, FlattenWithKeysFunc = FlattenFn, UnflattenFn, FlattenWithKeysFn  # old names

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class KeyEntry(Protocol):
    """One step of a key path: hashable, comparable, printable, and `get(parent)` reads the child."""

    def __hash__(self) -> int: ...

    def __eq__(self, other) -> bool: ...

    def __str__(self) -> str: ...

    def get(self, parent: Any) -> Any: ...


KeyPath = tuple[KeyEntry, ...]


@dataclasses.dataclass(frozen=True)
class SequenceKey(Generic[T]):
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey(Generic[K, T]):
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


# ---- the registry ----

class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Any
    unflatten_fn: Any
    flatten_with_keys_fn: Any


class _SerializeNodeDef(NamedTuple):
    typ: Any
    serialized_type_name: str
    to_dumpable_context: Any
    from_dumpable_context: Any


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES = {}                    # type -> NodeDef
SUPPORTED_SERIALIZED_TYPES = {}         # type -> _SerializeNodeDef
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}     # serialized name -> type
CONSTANT_NODES = set()


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None,
                                  flatten_with_keys_fn=None):
    """Register without the "already registered" error (re-registering warns and replaces)."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                          stacklevel=2)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) != (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                             "be None or registered.")
        name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else serialized_type_name
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context, from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make `cls` a container node: flatten_fn(obj) -> (children, context), unflatten_fn(children, context) -> obj.

    serialized_type_name names the type in treespec_dumps; to/from_dumpable_context convert a context
    json cannot write; flatten_with_keys_fn(obj) -> ([(KeyEntry, child)...], context) gives key paths.
    """
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None):
    """The old spelling of register_pytree_node (deprecated in torch; re-registration only warns)."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. "
                  "Please use `torch.utils._pytree.register_pytree_node` instead.", FutureWarning, stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. "
                      "Please use `to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _deregister_pytree_node(cls):
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        entry = SUPPORTED_SERIALIZED_TYPES.pop(cls)
        SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(entry.serialized_type_name, None)
        CONSTANT_NODES.discard(cls)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, serialized_type_name=None):
    """Register a dataclass (or a class built from keyword fields) as a node whose children are its fields.

    Fields that are None are not children: they are kept in the context and passed back as None.
    """
    dropped = set(drop_field_names or [])
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
    else:
        init_fields = [f.name for f in dataclasses.fields(cls) if f.init]
        if field_names is None:
            field_names = init_fields
        else:
            expected = set(init_fields) - dropped
            if expected != set(field_names):
                msg = "field_names does not include all dataclass fields.\n"
                missing = expected - set(field_names)
                unexpected = set(field_names) - expected
                if missing:
                    msg += (f"Missing fields in `field_names`: {missing}. If you want to include these fields in "
                            "the pytree, please add them to `field_names`, otherwise please add them to "
                            "`drop_field_names`.\n")
                if unexpected:
                    msg += (f"Unexpected fields in `field_names`: {unexpected}. Please remove these fields, "
                            "or add them to `drop_field_names`.\n")
                raise ValueError(msg)
    names = list(field_names)

    def flatten(obj):
        present, absent, values = [], [], []
        for name in names:
            value = getattr(obj, name)
            if value is None:
                absent.append(name)
            else:
                present.append(name)
                values.append(value)
        return values, [present, absent]

    def unflatten(values, context):
        present, absent = context
        kwargs = dict(zip(present, values, strict=True))
        kwargs.update(dict.fromkeys(absent))
        return cls(**kwargs)

    def flatten_with_keys(obj):
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values)], present

    _private_register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


@dataclasses.dataclass(frozen=True)
class ConstantNode(Generic[T]):
    """The context of a register_constant type: the instance itself (it has no leaves)."""
    value: Any


def register_constant(cls):
    """Register `cls` as a node without leaves: the instance travels whole in the TreeSpec's context."""
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` implementation.")
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__hash__` implementation.")

    def flatten(obj):
        return [], ConstantNode(obj)

    with _NODE_REGISTRY_LOCK:
        _private_register_pytree_node(cls, flatten, lambda _values, context: context.value,
                                      flatten_with_keys_fn=flatten)
        CONSTANT_NODES.add(cls)


def is_constant_class(cls):
    return isinstance(cls, type) and cls in CONSTANT_NODES


def _is_constant_holder(spec):
    return isinstance(spec._context, ConstantNode)


def _retrieve_constant(spec):
    if not _is_constant_holder(spec):
        raise AssertionError("spec does not correspond to a registered constant pytree")
    return tree_unflatten([], spec)


# ---- namedtuple and structseq detection ----

def is_namedtuple_class(cls):
    """True for classes made by collections.namedtuple / typing.NamedTuple (and their subclasses)."""
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        return False
    fields = getattr(cls, "_fields", None)
    return (isinstance(fields, tuple) and all(type(f) is str for f in fields)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


_Py_TPFLAGS_BASETYPE = 1 << 10  # CPython: the type can be subclassed; a PyStructSequence type cannot


def is_structseq_class(cls):
    """True for C PyStructSequence types (os.stat_result, time.struct_time, torch.return_types.*)."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))
            and not cls.__flags__ & _Py_TPFLAGS_BASETYPE)


def is_structseq(obj):
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj):
    return is_structseq_class(type(obj))


# ---- the built-in nodes ----

def _seq_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _map_keys(keys, values):
    return [(MappingKey(k), v) for k, v in zip(keys, values, strict=True)]


def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    return _seq_keys(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_flatten_with_keys(d):
    return _seq_keys(d), None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    values, keys = _dict_flatten(d)
    return _map_keys(keys, values), keys


def _dict_unflatten(values, context):
    return dict(zip(context, values, strict=True))


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


_ordereddict_flatten_with_keys = _dict_flatten_with_keys


def _ordereddict_unflatten(values, context):
    return OrderedDict(zip(context, values, strict=True))


_odict_flatten, _odict_unflatten = _ordereddict_flatten, _ordereddict_unflatten


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return _seq_keys(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_flatten_with_keys(d):
    return [(GetAttrKey(f), v) for f, v in zip(type(d)._fields, d, strict=True)], type(d)


def _namedtuple_serialize(context):
    entry = SUPPORTED_SERIALIZED_TYPES.get(context)
    if entry is None:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we didn't "
                                  "register a serializated_type_name. Please register using `_register_namedtuple`.")
    if entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we couldn't "
                                  "find a serializated_type_name. Please register using `_register_namedtuple`.")
    return entry.serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} "
                                  "because we couldn't find a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _register_namedtuple(cls, *, serialized_type_name):
    """Give a namedtuple class a name so specs holding it can be dumped (namedtuples are nodes anyway)."""
    _private_register_pytree_node(cls, _namedtuple_flatten, _namedtuple_unflatten,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return _map_keys(context[1], values), context


def _defaultdict_unflatten(values, context):
    return defaultdict(context[0], _dict_unflatten(values, context[1]))


def _defaultdict_serialize(context):
    factory, keys = context
    return {"default_factory_module": factory.__module__, "default_factory_name": factory.__qualname__,
            "dict_context": keys}


def _defaultdict_deserialize(dumpable_context):
    expected = {"default_factory_module", "default_factory_name", "dict_context"}
    if not isinstance(dumpable_context, dict):
        raise AssertionError("dumpable_context must be a dict")
    if set(dumpable_context) != expected:
        raise AssertionError(f"dumpable_context keys must be {expected}, got {set(dumpable_context)}")
    module, name = dumpable_context["default_factory_module"], dumpable_context["default_factory_name"]
    if not isinstance(module, str):
        raise AssertionError("default_factory_module must be a string")
    if not isinstance(name, str):
        raise AssertionError("default_factory_name must be a string")
    return [getattr(importlib.import_module(module), name), dumpable_context["dict_context"]]


_private_register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten, serialized_type_name="builtins.tuple",
                              flatten_with_keys_fn=_tuple_flatten_with_keys)
_private_register_pytree_node(list, _list_flatten, _list_unflatten, serialized_type_name="builtins.list",
                              flatten_with_keys_fn=_list_flatten_with_keys)
_private_register_pytree_node(dict, _dict_flatten, _dict_unflatten, serialized_type_name="builtins.dict",
                              flatten_with_keys_fn=_dict_flatten_with_keys)
# Every namedtuple class is a node under the one key `collections.namedtuple`; its context is the class.
_private_register_pytree_node(
    namedtuple, _namedtuple_flatten, _namedtuple_unflatten,
    serialized_type_name="collections.namedtuple", to_dumpable_context=_namedtuple_serialize,
    from_dumpable_context=_namedtuple_deserialize, flatten_with_keys_fn=_namedtuple_flatten_with_keys)
_private_register_pytree_node(OrderedDict, _ordereddict_flatten, _ordereddict_unflatten,
                              serialized_type_name="collections.OrderedDict",
                              flatten_with_keys_fn=_ordereddict_flatten_with_keys)
_private_register_pytree_node(
    defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
    serialized_type_name="collections.defaultdict", to_dumpable_context=_defaultdict_serialize,
    from_dumpable_context=_defaultdict_deserialize, flatten_with_keys_fn=_defaultdict_flatten_with_keys)
_private_register_pytree_node(deque, _deque_flatten, _deque_unflatten, serialized_type_name="collections.deque",
                              flatten_with_keys_fn=_deque_flatten_with_keys)

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _is_return_type_class(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and cls.__module__ == "torch.return_types"


def _register_return_type(cls):
    """torch's registration of a torch.return_types class (Note [Return types as nodes])."""
    build = cls._make if is_namedtuple_class(cls) else cls  # a structseq takes the sequence itself
    with _NODE_REGISTRY_LOCK:
        if cls not in SUPPORTED_NODES:
            _private_register_pytree_node(cls, _tuple_flatten, lambda values, context: build(values),
                                          flatten_with_keys_fn=lambda d: (_seq_keys(d), None))


def _node_type(tree):
    """The registry key of `tree`'s type: the type itself, or `namedtuple` for any namedtuple class
    (even one registered by name with _register_namedtuple, as in torch)."""
    cls = type(tree)
    if cls is tuple or not issubclass(cls, tuple):
        return cls
    if _is_return_type_class(cls) and (is_namedtuple_class(cls) or is_structseq_class(cls)):
        if cls not in SUPPORTED_NODES:
            _register_return_type(cls)
        return cls
    return namedtuple if is_namedtuple_class(cls) else cls


def _node_def(node_type):
    if node_type not in SUPPORTED_NODES and _is_return_type_class(node_type):
        _register_return_type(node_type)
    return SUPPORTED_NODES[node_type]


def tree_is_leaf(tree, is_leaf=None):
    """True when `tree` is not a registered container (None is a leaf), or when is_leaf(tree) says so."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree, is_leaf=None):
    warnings.warn("torch.utils._pytree._is_leaf is private and will be removed in a future release. "
                  "Please use torch.utils._pytree.tree_is_leaf instead.", FutureWarning, stacklevel=2)
    return tree_is_leaf(tree, is_leaf=is_leaf)


def _is_namedtuple_instance(tree):
    warnings.warn("torch.utils._pytree._is_namedtuple_instance is private and will be removed in a future "
                  "release. Please use torch.utils._pytree.is_namedtuple_instance instead.",
                  FutureWarning, stacklevel=2)
    return is_namedtuple_instance(tree)


def _get_node_type(tree):
    return _node_type(tree)


# ---- TreeSpec ----

class TreeSpec:
    """The shape of a pytree: the node type, its context (keys, class, maxlen...) and one spec per child.

    A leaf's spec has type None; `num_leaves` / `num_nodes` count the whole tree, `num_children` the
    root's children. Immutable and hashable; equal specs describe interchangeable trees.
    """
    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        children = list(children_specs)
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children:
                raise AssertionError("leaf node should not have children")
            nodes, leaves = 1, 1
        else:
            nodes = 1 + sum(c.num_nodes for c in children)
            leaves = sum(c.num_leaves for c in children)
        for name, value in (("type", type), ("_context", context), ("_children", children), ("num_nodes", nodes),
                            ("num_leaves", leaves), ("num_children", len(children))):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field '{name}'")

    def __delattr__(self, name):
        raise dataclasses.FrozenInstanceError(f"cannot delete field '{name}'")

    def __reduce__(self):
        return (TreeSpec, (self.type, self._context, self._children))

    def __repr__(self, indent=0):
        head = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if not self._children:
            return head + "])"
        indent += 2
        parts = [c.__repr__(indent) for c in self._children]
        return head + (",\n" + " " * indent).join(parts) + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        # types compare by their string, so a spec loaded from JSON equals the one it was dumped from
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        t, ctx = self.type, self._context
        if t is defaultdict:
            key = (ctx[0], tuple(ctx[1]))
        elif t in (dict, OrderedDict):
            key = tuple(ctx)
        elif t is None or t in BUILTIN_TYPES:
            key = ctx
        elif isinstance(ctx, ConstantNode):
            key = ctx.value
        else:
            key = None  # a custom context need not be hashable; equal specs still hash alike
        return hash((t, key, tuple(self._children)))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to access a single "
                      "child, or `treespec.children()` to get all children.", FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of `tree` sitting where this spec has its leaves (tree must have this spec as a prefix)."""
        out = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, node, out):
        if self.is_leaf():
            out.append(node)
            return
        node_type = _node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = _node_def(node_type).flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            # dict, OrderedDict and defaultdict stand in for each other, matched by key set
            dict_like = self.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
            if not dict_like and node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(node)}.")
            if dict_like:
                keys = self._context[1] if self.type is defaultdict else self._context
                have, want = set(node), set(keys)
                if have != want:
                    msg = ""
                    if want - have:
                        msg += f"; missing key(s): {want - have}"
                    if have - want:
                        msg += f"; extra key(s): {have - want}"
                    raise ValueError(f"Node keys mismatch{msg}.")
                children = [node[k] for k in keys]
            else:
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                # a deque's maxlen may differ; a namedtuple's class may not
                if node_type is not deque and context != self._context:
                    raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                                     f"expected {self._context!r}, but got {context!r}.")
        for child, spec in zip(children, self._children, strict=True):
            spec._flatten_up_to(child, out)

    def unflatten(self, leaves):
        """Rebuild the pytree from its leaves, in tree_flatten's order."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        if self.is_leaf():
            return leaves[0]
        children, start = [], 0
        for spec in self._children:
            children.append(spec.unflatten(leaves[start:start + spec.num_leaves]))
            start += spec.num_leaves
        return _node_def(self.type).unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf (deprecated in torch: use `spec.is_leaf()` and `treespec_leaf()`)."""
    __slots__ = ()

    def __init__(self):
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec) and "
                      "treespec.is_leaf()` instead.", FutureWarning, stacklevel=2)
        self._init_leaf()

    def _init_leaf(self):
        TreeSpec.__init__(self, None, None, [])

    def __repr__(self, indent=0):
        return "*"

    def __reduce__(self):
        return (treespec_leaf, ())


# every leaf spec is this one object (made without LeafSpec's deprecation warning)
_LEAF_SPEC = LeafSpec.__new__(LeafSpec)
_LEAF_SPEC._init_leaf()


def treespec_leaf():
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    children = list(iterable)
    if not all(isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    d = dict(mapping, **kwargs)
    if not all(isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d), list(d.values()))


def _is_pytreespec_instance(obj):
    return isinstance(obj, TreeSpec)


def _ensure_python_treespec_instance(treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type {type(treespec)}.")
    return treespec


# ---- flatten / unflatten / map ----

def tree_flatten(tree, is_leaf=None):
    """(leaves, spec): the leaves in depth-first order (dicts in insertion order) and the structure."""
    leaves = []

    def walk(node):
        if tree_is_leaf(node, is_leaf=is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The inverse of tree_flatten (the two arguments may also come in the other order, as torch allows)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError("Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """A generator of the leaves, in tree_flatten's order."""
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """A tree of tree's structure with func(leaf, *matching subtrees of rests) at each leaf.

    Each of `rests` must have `tree`'s structure as a prefix (a leaf of tree may match a subtree).
    """
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call func on each leaf (with the matching subtrees of rests) for its side effect; return tree."""
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for args in zip(*columns):
        func(*args)
    return tree


def map_only(type_or_types_or_pred, /):
    """Decorator: the function applies to values of the given type(s) or passing the predicate; others pass."""
    selector = type_or_types_or_pred
    if isinstance(selector, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, selector)
    elif callable(selector):
        pred = selector
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def decorate(func):
        @functools.wraps(func)
        def only(x):
            return func(x) if pred(x) else x
        return only
    return decorate


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def arg_tree_leaves(*args, **kwargs):
    """tree_leaves((args, kwargs)) without building the tuple."""
    out = []
    for a in args:
        out.extend(tree_iter(a))
    for a in kwargs.values():
        out.extend(tree_iter(a))
    return out


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """`tree` (a prefix of treespec's structure) repeated onto treespec's leaves, flat; None when not a prefix."""
    full = treespec.unflatten([0] * treespec.num_leaves)
    out = []
    try:
        tree_map_(lambda value, sub: out.extend([value] * tree_structure(sub, is_leaf=is_leaf).num_leaves),
                  tree, full, is_leaf=is_leaf)
    except ValueError:
        return None
    return out


# ---- key paths ----

def _key_paths(prefix, tree, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        yield prefix, tree
        return
    node_type = _node_type(tree)
    entry = SUPPORTED_NODES.get(node_type)
    if entry is None:
        yield prefix, tree
        return
    if entry.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. "
                         "Please pass a flatten_with_keys_fn argument to register_pytree_node.")
    keyed, _ = entry.flatten_with_keys_fn(tree)
    for key, child in keyed:
        yield from _key_paths(prefix + (key,), child, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key_path, leaf)...], spec): tree_flatten with each leaf's path of KeyEntry steps."""
    _, spec = tree_flatten(tree, is_leaf)
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """tree_map where func gets the leaf's key path first: func(path, leaf, *others)."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [[p for p, _ in pairs], [v for _, v in pairs]] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*args) for args in zip(*columns, strict=True))


def keystr(kp):
    """A key path as the indexing expression that reaches the leaf: "['a'][0].x"."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value at key path `kp` inside `obj`."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- JSON (torch's protocol 1) ----
# A spec is written as json.dumps([protocol, node]) with node = {"type": name or null, "context": ...,
# "children_spec": [node...]}; the context is a json string of the context unless the type registered its
# own to_dumpable_context. Enum members inside a context are written as {"__enum__": true, "fqn", "name"}.

class EnumEncoder(json.JSONEncoder):
    def default(self, obj):
        if isinstance(obj, Enum):
            cls = type(obj)
            return {"__enum__": True, "fqn": f"{cls.__module__}:{cls.__qualname__}", "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj):
    if "__enum__" not in obj:
        return obj
    module, _, qualname = obj["fqn"].partition(":")
    cls = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    return cls[obj["name"]]


def _treespec_to_json(spec):
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    entry = SUPPORTED_SERIALIZED_TYPES.get(spec.type)
    if entry is None:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    if entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"No registered serialization name for {spec.type} found. Please update your "
                                  "_register_pytree_node call with a `serialized_type_name` kwarg.")
    if entry.to_dumpable_context is None:
        try:
            context = json.dumps(spec._context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json dump-able, or register a "
                            "custom serializer using _register_pytree_node.") from e
    else:
        context = entry.to_dumpable_context(spec._context)
    return {"type": entry.serialized_type_name, "context": context,
            "children_spec": [_treespec_to_json(c) for c in spec._children]}


def _json_to_treespec(node):
    if node["type"] is None and node["context"] is None and len(node["children_spec"]) == 0:
        return _LEAF_SPEC
    if node["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {node['type']} in pytree is not registered.")
    cls = SERIALIZED_TYPE_TO_PYTHON_TYPE[node["type"]]
    entry = SUPPORTED_SERIALIZED_TYPES[cls]
    if entry.from_dumpable_context is None:
        try:
            context = json.loads(node["context"], object_hook=enum_object_hook)
        except TypeError as e:
            raise TypeError("Unable to deserialize context. Please make the context json load-able, or register "
                            "a custom serializer using _register_pytree_node.") from e
    else:
        context = entry.from_dumpable_context(node["context"])
    return TreeSpec(cls, context, [_json_to_treespec(c) for c in node["children_spec"]])


_SUPPORTED_PROTOCOLS = {1: (_treespec_to_json, _json_to_treespec)}


def _unknown_protocol(protocol):
    return ValueError(f"Unknown protocol {protocol}. Available protocols: {list(_SUPPORTED_PROTOCOLS)}")


def treespec_dumps(treespec, protocol=None):
    """The spec as a JSON string torch's treespec_loads reads (raises for types with no serialized name)."""
    treespec = _ensure_python_treespec_instance(treespec)
    protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    return json.dumps((protocol, _SUPPORTED_PROTOCOLS[protocol][0](treespec)), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized):
    """The spec from a treespec_dumps string (cached: the same string gives the same spec object)."""
    protocol, node = json.loads(serialized)
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    return _SUPPORTED_PROTOCOLS[protocol][1](node)


class _Star(str):
    """A "*" that reprs without quotes: the leaf placeholder of treespec_pprint."""
    __slots__ = ()

    def __repr__(self):
        return "*"


_STAR = _Star("*")


def treespec_pprint(treespec):
    """The spec drawn as the tree it describes, with * for each leaf: "{'a': [*, (*, *)]}"."""
    return repr(treespec.unflatten([_STAR] * treespec.num_leaves))


def pytree_to_str(treespec):
    warnings.warn("`pytree_to_str` is deprecated. Please use `treespec_dumps` instead.", FutureWarning, stacklevel=2)
    return treespec_dumps(treespec)


def str_to_pytree(json_str):
    warnings.warn("`str_to_pytree` is deprecated. Please use `treespec_loads` instead.", FutureWarning, stacklevel=2)
    return treespec_loads(json_str)
