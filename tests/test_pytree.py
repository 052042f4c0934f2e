"""pyctorch.utils._pytree against torch.utils._pytree: leaves, specs (repr, counts, JSON), paths, errors."""
import copy
import dataclasses
import enum
import pickle
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest

import pyctorch
import pyctorch.utils._pytree as pp
from conftest import HAVE_TORCH, requires_torch

if HAVE_TORCH:
    import torch
    import torch.utils._pytree as tp

Point = namedtuple("Point", "x y")


def samples():
    """Nested trees covering every built-in node type, None, empty containers and dict insertion order."""
    return [
        1, None, "leaf", [], (), {}, [None],
        [1, [2, (3, None)]],
        {"b": 1, "a": [2, 3]},               # insertion order, not sorted order
        {2: "x", "k": (1,), (1, 2): [3]},    # non-string keys
        OrderedDict(z=1, y=(2,)),
        defaultdict(list, {1: 4, "k": [5]}),
        deque([1, 2], maxlen=4), deque([3]),
        Point(1, [2, None]),
        (Point((1,), 2), [deque([{}])]),
        {"a": [1, (2, None)], "b": OrderedDict(z=3), "c": defaultdict(int, {1: 4}), "d": deque([5], maxlen=3),
         "e": Point(6, 7), "f": None, "g": ()},
    ]


def outcome(fn, *args):
    """The value, or (exception type name, message), so pyctorch and torch outcomes compare either way."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("index", range(len(samples())))
def test_flatten_unflatten_roundtrip(index):
    tree = samples()[index]
    leaves, spec = pp.tree_flatten(tree)
    rebuilt = pp.tree_unflatten(leaves, spec)
    assert type(rebuilt) is type(tree) and rebuilt == tree
    assert pp.tree_leaves(tree) == leaves == list(pp.tree_iter(tree))
    assert pp.tree_structure(tree) == spec
    if isinstance(tree, deque):
        assert rebuilt.maxlen == tree.maxlen
    if isinstance(tree, defaultdict):
        assert rebuilt.default_factory is tree.default_factory


@requires_torch
@pytest.mark.parametrize("index", range(len(samples())))
def test_matches_torch(index):
    tree = samples()[index]
    (pl, ps), (tl, ts) = pp.tree_flatten(tree), tp.tree_flatten(tree)
    assert pl == tl
    assert repr(ps) == repr(ts) and str(ps) == str(ts)
    assert (ps.num_nodes, ps.num_leaves, ps.num_children, ps.is_leaf()) == \
        (ts.num_nodes, ts.num_leaves, ts.num_children, ts.is_leaf())
    assert pp.treespec_pprint(ps) == tp.treespec_pprint(ts)
    assert [c.__repr__() for c in ps.children()] == [c.__repr__() for c in ts.children()]
    # paths: the key objects print and stringify as torch's
    ppaths, _ = pp.tree_flatten_with_path(tree)
    tpaths, _ = tp.tree_flatten_with_path(tree)
    assert [(repr(k), v) for k, v in ppaths] == [(repr(k), v) for k, v in tpaths]
    assert [pp.keystr(k) for k, _ in ppaths] == [tp.keystr(k) for k, _ in tpaths]
    assert all(pp.key_get(tree, k) is v for k, v in ppaths)
    assert pp.tree_map(lambda x: (x, 1), tree) == tp.tree_map(lambda x: (x, 1), tree)
    assert pp.tree_map_with_path(lambda k, x: pp.keystr(k), tree) == tp.tree_map_with_path(lambda k, x: tp.keystr(k),
                                                                                           tree)


@requires_torch
@pytest.mark.parametrize("index", range(len(samples())))
def test_dumps_matches_and_loads_in_either(index):
    tree = samples()[index]
    ps, ts = pp.tree_structure(tree), tp.tree_structure(tree)
    pd, td = outcome(pp.treespec_dumps, ps), outcome(tp.treespec_dumps, ts)
    assert pd == td  # the same JSON text, or the same error (namedtuples have no serialized name)
    if isinstance(pd, str):
        # JSON turns tuple keys into lists in both frameworks: compare what each loads, and the round trip
        # wherever torch's own is exact
        assert repr(pp.treespec_loads(td)) == repr(tp.treespec_loads(pd))
        if tp.treespec_loads(td) == ts:
            assert pp.treespec_loads(td) == ps and tp.treespec_loads(pd) == ts


def test_none_is_a_leaf_and_is_leaf_predicate():
    assert pp.tree_is_leaf(None) and pp.tree_leaves([None, (None,)]) == [None, None]
    assert not pp.tree_is_leaf([]) and pp.tree_is_leaf((1, 2), is_leaf=lambda x: isinstance(x, tuple))
    two = lambda x: isinstance(x, list) and len(x) == 2  # noqa: E731
    leaves, spec = pp.tree_flatten([1, [2, 3], [4, [5], 6]], is_leaf=two)
    assert leaves == [1, [2, 3], 4, 5, 6] and spec.num_leaves == 5


@requires_torch
def test_return_types_are_nodes_as_in_torch():
    x = pyctorch.tensor([[1.0, 5.0], [3.0, 2.0]])
    tx = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
    for p_result, t_result in [(pyctorch.max(x, 0), torch.max(tx, 0)), (pyctorch.sort(x), torch.sort(tx)),
                               (pyctorch.frexp(x), torch.frexp(tx))]:
        ps, ts = pp.tree_structure(p_result), tp.tree_structure(t_result)
        assert repr(ps) == repr(ts)
        assert [pp.keystr(k) for k, _ in pp.tree_leaves_with_path(p_result)] == \
            [tp.keystr(k) for k, _ in tp.tree_leaves_with_path(t_result)]
        rebuilt = pp.tree_unflatten(["a", "b"], ps)
        assert type(rebuilt) is type(p_result) and tuple(rebuilt) == ("a", "b")
        assert outcome(pp.treespec_dumps, ps)[0] == outcome(tp.treespec_dumps, ts)[0] == "NotImplementedError"


@requires_torch
def test_namedtuple_and_structseq_predicates_match_torch():
    import os
    import time
    objs = [Point(1, 2), Point, (1, 2), tuple, os.stat("."), type(os.stat(".")), time.gmtime(), 3, None,
            pyctorch.max(pyctorch.ones(2, 2), 0), pyctorch.frexp(pyctorch.ones(2))]
    for name in ("is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
                 "is_structseq_class", "is_structseq_instance"):
        assert [getattr(pp, name)(o) for o in objs] == [getattr(tp, name)(o) for o in objs], name


@requires_torch
def test_mismatch_errors_match_torch():
    cases = [
        ([1, 2], [[1], 2, 3]),                     # arity
        ([1, 2], (1, 2)),                          # type
        ({"a": 1}, {"b": 1}),                      # keys
        ({"a": 1, "b": 2}, {"b": 1, "c": 2}),      # missing and extra keys
        (Point(1, 2), namedtuple("Other", "x y")(1, 2)),  # namedtuple class is context
        ({"a": 1, "b": 2}, OrderedDict(b=[1], a=2)),  # dict kinds stand in for each other
        (deque([1], maxlen=2), deque([[5]], maxlen=9)),  # maxlen may differ
        ((1, 2), 5),
    ]
    for tree, other in cases:
        pr = outcome(pp.tree_map, lambda a, b: (a, b), tree, other)
        tr = outcome(tp.tree_map, lambda a, b: (a, b), tree, other)
        assert pr == tr, (tree, other)
    ps, ts = pp.tree_structure({"a": [1, 2]}), tp.tree_structure({"a": [1, 2]})
    assert outcome(ps.unflatten, [1]) == outcome(ts.unflatten, [1])
    assert outcome(pp.tree_unflatten, [1], 5) == outcome(tp.tree_unflatten, [1], 5)
    assert pp.tree_unflatten(ps, [7, 8]) == {"a": [7, 8]}  # arguments in either order, as torch allows


class Pair:
    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other):
        return isinstance(other, Pair) and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)


def _register_pair(mod):
    mod.register_pytree_node(Pair, lambda p: ([p.a, p.b], p.tag), lambda xs, tag: Pair(*xs, tag=tag),
                             serialized_type_name="tests.Pair",
                             flatten_with_keys_fn=lambda p: ([(mod.GetAttrKey("a"), p.a), (mod.GetAttrKey("b"), p.b)],
                                                             p.tag))


@requires_torch
def test_custom_node_matches_torch():
    _register_pair(pp)
    _register_pair(tp)
    try:
        tree = {"p": Pair(1, [2, Pair(3, 4, "u")])}
        (pl, ps), (tl, ts) = pp.tree_flatten(tree), tp.tree_flatten(tree)
        assert pl == tl and repr(ps) == repr(ts)
        assert pp.treespec_dumps(ps) == tp.treespec_dumps(ts)
        assert pp.tree_unflatten(pl, ps) == tree
        assert [pp.keystr(k) for k, _ in pp.tree_leaves_with_path(tree)] == ["['p'].a", "['p'].b[0]", "['p'].b[1].a",
                                                                             "['p'].b[1].b"]
        # a custom node must match type, arity and context exactly
        assert outcome(pp.tree_map, lambda a, b: b, tree, {"p": Pair(1, 2, "other")}) == \
            outcome(tp.tree_map, lambda a, b: b, tree, {"p": Pair(1, 2, "other")})
        assert outcome(pp.register_pytree_node, Pair, None, None)[0] == "ValueError"
    finally:
        pp._deregister_pytree_node(Pair)
        tp._deregister_pytree_node(Pair)
    assert pp.tree_is_leaf(Pair(1, 2))


def test_node_without_keys_fn_refuses_paths():
    class Box:
        def __init__(self, v):
            self.v = v
    pp.register_pytree_node(Box, lambda b: ([b.v], None), lambda xs, _: Box(xs[0]))
    try:
        assert pp.tree_leaves(Box([1, 2])) == [1, 2]
        with pytest.raises(ValueError, match="Did not find a flatten_with_keys_fn"):
            pp.tree_flatten_with_path(Box(1))
        with pytest.raises(NotImplementedError, match="No registered serialization name"):
            pp.treespec_dumps(pp.tree_structure(Box(1)))
    finally:
        pp._deregister_pytree_node(Box)


@dataclasses.dataclass
class Config:
    w: object
    b: object = None
    name: str = dataclasses.field(default="n", init=False)


@dataclasses.dataclass(frozen=True)
class Static:
    norm: str


def test_register_dataclass_and_constant():
    pp.register_dataclass(Config)
    pp.register_constant(Static)
    try:
        leaves, spec = pp.tree_flatten(Config([1, 2]))
        assert leaves == [1, 2] and spec.context == [["w"], ["b"]]  # None fields travel in the context
        assert pp.tree_unflatten([3, 4], spec) == Config([3, 4])
        assert [pp.keystr(k) for k, _ in pp.tree_leaves_with_path(Config(1, 2))] == [".w", ".b"]
        leaves, spec = pp.tree_flatten([Static("l2"), 1])
        assert leaves == [1] and pp.tree_unflatten([5], spec) == [Static("l2"), 5]
        assert pp._retrieve_constant(spec.child(0)) == Static("l2") and pp.is_constant_class(Static)
        assert hash(spec) == hash(pp.tree_structure([Static("l2"), 0]))
    finally:
        pp._deregister_pytree_node(Config)
        pp._deregister_pytree_node(Static)
    with pytest.raises(ValueError, match="field_names must be specified"):
        pp.register_dataclass(Pair)
    with pytest.raises(ValueError, match="Missing fields in `field_names`"):
        pp.register_dataclass(Config, field_names=["w"])
    with pytest.raises(TypeError, match="non-default `__eq__`"):
        pp.register_constant(type("Plain", (), {}))


class Color(enum.Enum):
    RED = 1


@requires_torch
def test_enum_context_and_named_namedtuple_serialize_like_torch():
    class Tagged:
        def __init__(self, v, c):
            self.v, self.c = v, c
    Named = namedtuple("Named", "a b")
    for mod in (pp, tp):
        mod.register_pytree_node(Tagged, lambda t: ([t.v], t.c), lambda xs, c: Tagged(xs[0], c),
                                 serialized_type_name="tests.Tagged")
        mod._register_namedtuple(Named, serialized_type_name="tests.Named")
    try:
        tree = [Tagged(1, Color.RED), Named(1, 2)]
        pd, td = pp.treespec_dumps(pp.tree_structure(tree)), tp.treespec_dumps(tp.tree_structure(tree))
        assert pd == td
        assert pp.treespec_loads(td).child(0).context is Color.RED
        assert repr(pp.treespec_loads(td)) == repr(tp.treespec_loads(pd))
    finally:
        for mod in (pp, tp):
            mod._deregister_pytree_node(Tagged)
            mod._deregister_pytree_node(Named)


def test_treespec_value_semantics():
    spec = pp.tree_structure({"a": [1, (2, 3)], "b": None})
    assert spec == pp.tree_structure({"a": [0, (0, 0)], "b": 0})
    assert hash(spec) == hash(pp.tree_structure({"a": [0, (0, 0)], "b": 0}))
    assert spec != pp.tree_structure({"b": None, "a": [1, (2, 3)]})  # key order is part of the structure
    assert spec != 3 and (spec == 3) is False
    assert copy.deepcopy(spec) == spec and pickle.loads(pickle.dumps(spec)) == spec
    assert pickle.loads(pickle.dumps(pp.treespec_leaf())) is pp.treespec_leaf()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.num_leaves = 3
    assert spec.type is dict and spec.context == ["a", "b"] and spec.child(1).is_leaf()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert spec.children_specs == spec.children()
    assert caught and caught[0].category is FutureWarning
    assert repr(pp.treespec_leaf()) == "*" and pp.tree_structure(5) is pp.treespec_leaf()
    assert isinstance(pp.treespec_leaf(), pp.LeafSpec)
    assert pp.treespec_tuple([pp.treespec_leaf()] * 2) == pp.tree_structure((1, 2))
    assert pp.treespec_dict(a=pp.treespec_leaf()) == pp.tree_structure({"a": 1})
    with pytest.raises(ValueError, match="Expected a tuple of TreeSpec values"):
        pp.treespec_tuple([1])
    assert pp.treespec_loads(pp.treespec_dumps(spec)) == spec
    with pytest.raises(ValueError, match=r"Unknown protocol 2. Available protocols: \[1\]"):
        pp.treespec_dumps(spec, protocol=2)


@requires_torch
def test_helpers_match_torch():
    tree = {"a": [1, "s", 2.5], "b": (True, None, 3)}
    for p_fn, t_fn in [(lambda m: m.tree_map_only(int, lambda x: x * 10, tree),) * 2,
                       (lambda m: m.tree_map_only((int, str), lambda x: x * 2, tree),) * 2,
                       (lambda m: m.tree_map_only(lambda x: x is None, lambda x: "none", tree),) * 2,
                       (lambda m: m.tree_all(lambda x: x is not None, tree),) * 2,
                       (lambda m: m.tree_any(lambda x: x is None, tree),) * 2,
                       (lambda m: m.tree_all_only(int, lambda x: x > 0, tree),) * 2,
                       (lambda m: m.tree_any_only(str, lambda x: x == "s", tree),) * 2,
                       (lambda m: m.tree_map(lambda x, y: [x, y], [1, 2], [[3], {"k": 4}]),) * 2,
                       (lambda m: m._broadcast_to_and_flatten(0, m.tree_structure([1, (2, 3)])),) * 2,
                       (lambda m: m._broadcast_to_and_flatten([0, 1], m.tree_structure([1, (2, 3)])),) * 2,
                       (lambda m: m._broadcast_to_and_flatten([0, 1, 2], m.tree_structure([1, (2, 3)])),) * 2,
                       (lambda m: m.arg_tree_leaves(1, [2], k=(3,)),) * 2,
                       (lambda m: m.tree_map_only(3, lambda x: x, tree),) * 2]:
        assert outcome(p_fn, pp) == outcome(t_fn, tp)
    seen = []
    assert pp.tree_map_(seen.append, tree) is tree and seen == pp.tree_leaves(tree)
    box = [[0], [0]]
    pp.tree_map_only_(list, lambda v: v.append(1), box, is_leaf=lambda x: isinstance(x, list) and len(x) == 1)
    assert box == [[0, 1], [0, 1]]


@requires_torch
def test_names_cover_torch_all():
    missing = [n for n in tp.__all__ if not hasattr(pp, n)]
    assert not missing, missing
    extras = ["SUPPORTED_NODES", "_register_pytree_node", "register_dataclass", "register_constant", "treespec_leaf",
              "treespec_tuple", "treespec_dict", "SequenceKey", "MappingKey", "GetAttrKey", "KeyPath", "KeyEntry",
              "_is_leaf", "_deregister_pytree_node", "_register_namedtuple", "arg_tree_leaves", "map_only",
              "_broadcast_to_and_flatten", "BUILTIN_TYPES", "_get_node_type"]
    assert [n for n in extras if hasattr(tp, n) and not hasattr(pp, n)] == []
