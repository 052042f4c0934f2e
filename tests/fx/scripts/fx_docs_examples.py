"""torch.fx documentation-style examples in plain torch code: run by test_fx_script.py under real torch and
under `python -m pyctorch.as_torch`; the two printouts must be identical."""
import operator
import torch
import torch.fx as fx
from torch.fx import symbolic_trace, Transformer, Interpreter, GraphModule, Graph
from torch.fx.passes.shape_prop import ShapeProp


class MyModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.param = torch.nn.Parameter(torch.ones(3, 4))
        self.linear = torch.nn.Linear(4, 5)

    def forward(self, x):
        return self.linear(x + self.param).clamp(min=0.0, max=1.0)


torch.manual_seed(0)
m = MyModule()
gm = symbolic_trace(m)
print(gm.graph)
print(gm.code)
x = torch.ones(3, 4) * 0.1
print(torch.allclose(gm(x), m(x)))

# docs: replace torch.add with torch.mul
def transform(m: torch.nn.Module) -> torch.nn.Module:
    gm = fx.symbolic_trace(m)
    for node in gm.graph.nodes:
        if node.op == 'call_function' and node.target == torch.add:
            node.target = torch.mul
    gm.graph.lint()
    gm.recompile()
    return gm

class M(torch.nn.Module):
    def forward(self, x, y):
        return torch.add(x, y) + torch.relu(y)

t = transform(M())
print(t.code)
print(t(torch.tensor([2.0, 3.0]), torch.tensor([4.0, -1.0])))

ShapeProp(gm).propagate(x)
for node in gm.graph.nodes:
    print(node.name, node.meta['tensor_meta'].dtype, node.meta['tensor_meta'].shape)

class NegSigmSwapInterpreter(Interpreter):
    def call_function(self, target, args, kwargs):
        if target == torch.sigmoid:
            return torch.neg(*args, **kwargs)
        return super().call_function(target, args, kwargs)
    def call_method(self, target, args, kwargs):
        if target == 'neg':
            call_self, *args_tail = args
            return call_self.sigmoid(*args_tail, **kwargs)
        return super().call_method(target, args, kwargs)

def fn(x):
    return torch.sigmoid(x).neg()
gm2 = torch.fx.symbolic_trace(fn)
inp = torch.tensor([0.5, -1.0])
print(NegSigmSwapInterpreter(gm2).run(inp), torch.neg(inp).sigmoid())

class NegSigmSwapXformer(Transformer):
    def call_function(self, target, args, kwargs):
        if target == torch.sigmoid:
            return torch.neg(*args, **kwargs)
        return super().call_function(target, args, kwargs)
    def call_method(self, target, args, kwargs):
        if target == 'neg':
            call_self, *args_tail = args
            return call_self.sigmoid(*args_tail, **kwargs)
        return super().call_method(target, args, kwargs)
transformed = NegSigmSwapXformer(gm2).transform()
print(transformed.code)
print(transformed(inp))
try:
    symbolic_trace(lambda x: x if x.sum() > 0 else -x)
except torch.fx.proxy.TraceError as e:
    print("TraceError", e)
