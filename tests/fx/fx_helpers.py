"""Comparison helpers of the fx tests: node lists and code of a pyctorch and a torch GraphModule."""
import pytest

from pyctorch.fx._names import qualified_name


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _function_name(name):
    """The last component: torch's builtins live in torch._C._nn and its operator names say _operator."""
    return name.rsplit(".", 1)[-1]


def node_list(gm, qualify):
    return [(n.op, n.name, _function_name(qualify(n.target)) if n.op == "call_function" else n.target)
            for n in gm.graph.nodes]


def ours_nodes(gm):
    return node_list(gm, qualified_name)


def torch_nodes(gm):
    from torch.fx.node import _get_qualified_name
    return node_list(gm, _get_qualified_name)


def normalized_code(code):
    """Generated code with the spellings known to differ mapped to one: torch's C homes of nn.functional
    functions, and torch._assert (pyctorch has none: pyctorch.fx has its own in _symbolic_trace)."""
    code = code.replace("torch._C._nn.", "torch.nn.functional.")
    return code.replace("torch._assert(", "torch.fx._symbolic_trace._assert(")
