"""The Graph/Node editing API: building by hand, inserting, erasing, copying, dead code, lint, printing."""
import copy
import operator

import pytest

import pyctorch
import pyctorch.fx as fx
from fx_helpers import torch  # noqa: F401


def _add_relu_graph():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=2)
    add = g.call_function(operator.add, (x, y))
    relu = g.call_method("relu", (add,))
    g.output(relu)
    return g, (x, y, add, relu)


def test_hand_built_graph_runs_and_prints():
    g, (x, y, add, relu) = _add_relu_graph()
    gm = fx.GraphModule(pyctorch.nn.Module(), g)
    assert gm(pyctorch.tensor([-3.0, 1.0])).tolist() == [0.0, 3.0]
    assert "def forward(self, x, y = 2):" in gm.code
    assert [n.name for n in g.nodes] == ["x", "y", "add", "relu", "output"]
    assert add.users == {relu: None} and relu.all_input_nodes == [add]
    assert add.prev is y and add.next is relu
    assert add.format_node() == \
        "%add : [num_users=1] = call_function[target=operator.add](args = (%x, %y), kwargs = {})"
    assert str(g).splitlines()[0] == "graph():"
    g.lint()


def test_inserting_before_after_and_replace_all_uses():
    g, (x, y, add, relu) = _add_relu_graph()
    with g.inserting_after(add):
        neg = g.call_function(operator.neg, (add,))
        mul = g.call_function(operator.mul, (neg, 3))
    changed = add.replace_all_uses_with(mul, delete_user_cb=lambda u: u is not neg)
    assert changed == [relu]
    with g.inserting_before(add):
        sub = g.call_function(operator.sub, (x, 1))
    add.replace_input_with(x, sub)
    assert [n.name for n in g.nodes] == ["x", "y", "sub", "add", "neg", "mul", "relu", "output"]
    g.lint()
    gm = fx.GraphModule(pyctorch.nn.Module(), g)
    # relu(-(x - 1 + 2) * 3)
    assert gm(pyctorch.tensor([-4.0, 0.0])).tolist() == [9.0, 0.0]


def test_erase_node_refuses_a_used_node_and_dce_removes_dead_ones():
    g, (x, y, add, relu) = _add_relu_graph()
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(add)
    with g.inserting_after(relu):
        dead = g.call_function(operator.mul, (relu, relu))
        g.call_function(operator.neg, (dead,))
    assert len(g.nodes) == 7
    assert g.eliminate_dead_code() is True
    assert [n.name for n in g.nodes] == ["x", "y", "add", "relu", "output"]
    assert g.eliminate_dead_code() is False


def test_dead_code_elimination_purity_as_torch(torch):
    def build(lib, fx_module):
        g = fx_module.Graph()
        x = g.placeholder("x")
        g.call_method("add_", (x, 1))  # torch counts methods as pure, in-place ones too
        g.call_function(lib.rand, (2,))  # sampling is kept
        g.call_function(operator.setitem, (x, 0, 1.0))
        g.call_function(lib.relu, (x,))
        g.output(x)
        g.eliminate_dead_code()
        return [n.op + ":" + (n.target if isinstance(n.target, str) else n.target.__name__) for n in g.nodes]
    assert build(pyctorch, fx) == build(torch, torch.fx)


def test_node_copy_graph_copy_and_deepcopy():
    g, _ = _add_relu_graph()
    g2 = fx.Graph()
    env = {}
    out = g2.graph_copy(g, env)
    g2.output(out)
    g2.lint()
    assert [n.name for n in g2.nodes] == [n.name for n in g.nodes]
    assert all(n.graph is g2 for n in g2.nodes)
    g3 = copy.deepcopy(g)
    g3.lint()
    assert str(g3) == str(g)
    g4 = fx.Graph()
    xs = g4.placeholder("a")
    copied = g4.node_copy(next(n for n in g.nodes if n.op == "call_method"), lambda n: xs)
    assert copied.args == (xs,) and copied.target == "relu"


def test_lint_finds_use_before_definition_and_foreign_nodes():
    g, (x, y, add, relu) = _add_relu_graph()
    add.prepend(relu)  # relu now comes before the add it uses
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    other, _ = _add_relu_graph()
    g5 = fx.Graph()
    with pytest.raises(RuntimeError, match="does not belong to this Graph"):
        g5.output(g5.call_function(operator.neg, (next(iter(other.nodes)),)))
        g5.lint()


def test_lint_checks_module_targets():
    gm = fx.symbolic_trace(pyctorch.nn.Sequential(pyctorch.nn.Linear(2, 2)))
    node = next(n for n in gm.graph.nodes if n.op == "call_module")
    node.target = "missing"
    with pytest.raises(RuntimeError, match="nonexistent attribute"):
        gm.graph.lint()


def test_map_arg_and_meta():
    g, (x, y, add, relu) = _add_relu_graph()
    assert fx.map_arg((x, [y, 3], {"k": add}), lambda n: n.name) == ("x", ["y", 3], {"k": "add"})
    add.meta["note"] = 1
    assert add.meta == {"note": 1}


def test_print_tabular(capsys):
    g, _ = _add_relu_graph()
    g.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert lines[4].split()[:3] == ["call_function", "add", "operator.add"]


def test_proxies_over_a_hand_built_graph():
    g = fx.Graph()
    tracer = fx.proxy.GraphAppendingTracer(g)
    x = fx.Proxy(g.placeholder("x"), tracer)
    y = fx.Proxy(g.placeholder("y"))
    out = (x + y).relu() * 2
    g.output(out.node)
    gm = fx.GraphModule(pyctorch.nn.Module(), g)
    assert [n.op for n in g.nodes] == ["placeholder", "placeholder", "call_function", "call_method",
                                       "call_function", "output"]
    assert gm(pyctorch.tensor([1.0, -3.0]), pyctorch.tensor([1.0, 1.0])).tolist() == [4.0, 0.0]


def test_editing_while_iterating_visits_inserted_nodes_as_torch():
    gm = fx.symbolic_trace(lambda x: pyctorch.add(x, x) * 2)
    visited = []
    for node in gm.graph.nodes:
        visited.append(node.name)
        if node.op == "call_function" and node.target is pyctorch.add:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(pyctorch.relu, args=(node,))
            node.replace_all_uses_with(new)
    assert visited == ["x", "add", "relu", "mul", "output"]
    gm.recompile()
    assert gm(pyctorch.tensor([-1.0, 2.0])).tolist() == [0.0, 8.0]


def test_has_side_effect_keeps_a_node():
    def log(x):
        return x

    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(log, (x,))
    g.output(x)
    fx.has_side_effect(log)
    assert g.eliminate_dead_code() is False
