"""pyctorch.fx (torch.fx under the alias): symbolic tracing into Graphs of Nodes, GraphModule code generation,
Interpreter/Transformer, subgraph rewriting and shape propagation, in pure Python.

    gm = pyctorch.fx.symbolic_trace(model)   # a GraphModule: gm.graph, gm.code, gm(x) == model(x)

Tracing records calls on Proxies by temporarily patching the torch namespaces' functions (written before pyctorch
had the __torch_function__ protocol, pyctorch/overrides.py): see Note [Tracing torch functions] in _patching.py.
"""
from .node import Node, has_side_effect, map_arg, map_aggregate
from .graph import Graph
from .proxy import Proxy, Attribute, TraceError, ParameterProxy
from ._symbolic_trace import Tracer, symbolic_trace, wrap, PH
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from . import subgraph_rewriter, passes  # noqa: F401
from ._codegen import PythonCode  # noqa: F401

__all__ = ["Node", "map_arg", "Graph", "Proxy", "Tracer", "symbolic_trace", "wrap", "GraphModule",
           "Interpreter", "Transformer", "replace_pattern", "PH", "has_side_effect"]

replace_pattern = subgraph_rewriter.replace_pattern
