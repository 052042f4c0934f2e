"""Interpreter, Transformer, subgraph_rewriter.replace_pattern and ShapeProp against torch.fx."""
import operator

import numpy as np
import pytest

import pyctorch
import pyctorch.fx as fx
from pyctorch.fx.passes.shape_prop import ShapeProp
from comparison import assert_same
from fx_helpers import normalized_code, ours_nodes, torch, torch_nodes  # noqa: F401
from fx_models import build_pair


def _inputs(lib, *shapes):
    rng = np.random.default_rng(3)
    return [lib.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]


def _add_relu(lib):
    def fn(x, y):
        return lib.relu(x + y) + 1
    return fn


def test_interpreter_override_changes_what_nodes_do():
    class NegateSigmoid(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            if target is pyctorch.sigmoid:
                return super().call_function(target, args, kwargs).neg()
            return super().call_function(target, args, kwargs)

    gm = fx.symbolic_trace(lambda x: pyctorch.sigmoid(x) * 2)
    x = pyctorch.tensor([0.0, 1.0])
    assert NegateSigmoid(gm).run(x).tolist() == (-pyctorch.sigmoid(x) * 2).tolist()
    env = {}
    interp = fx.Interpreter(gm, garbage_collect_values=False)
    interp.run(x)
    assert set(n.name for n in interp.env) == {n.name for n in gm.graph.nodes}
    del env


def test_interpreter_reports_the_failing_node():
    gm = fx.symbolic_trace(lambda x: x.view(7))
    with pytest.raises(RuntimeError, match="While executing %view"):
        fx.Interpreter(gm).run(pyctorch.ones(3))


def test_transformer_swapping_add_for_mul_gives_torchs_result(torch):
    def swap(base):
        class AddToMul(base):
            def call_function(self, target, args, kwargs):
                if target is operator.add:
                    target = operator.mul
                return super().call_function(target, args, kwargs)
        return AddToMul

    gm = swap(fx.Transformer)(fx.symbolic_trace(_add_relu(pyctorch))).transform()
    tgm = swap(torch.fx.Transformer)(torch.fx.symbolic_trace(_add_relu(torch))).transform()
    assert isinstance(gm, fx.GraphModule)
    assert ours_nodes(gm) == torch_nodes(tgm)
    assert gm.code == tgm.code
    x, y = _inputs(pyctorch, (3, 4), (3, 4))
    tx, ty = _inputs(torch, (3, 4), (3, 4))
    assert_same(gm(x, y), tgm(tx, ty), 0, 0)


def test_transformer_keeps_modules_and_parameters(torch):
    ours, theirs, (x,), (tx,), _ = build_pair("cnn", torch)
    gm = fx.Transformer(fx.symbolic_trace(ours)).transform()
    tgm = torch.fx.Transformer(torch.fx.symbolic_trace(theirs)).transform()
    assert ours_nodes(gm) == torch_nodes(tgm)
    with pyctorch.no_grad(), torch.no_grad():
        assert_same(gm(x), tgm(tx), 1e-4, 1e-5)


def _rewrite_example(lib):
    """torch.fx.subgraph_rewriter.replace_pattern's documented example."""
    class M(lib.nn.Module):
        def forward(self, x, w1, w2):
            m1 = lib.cat([w1, w2]).sum()
            m2 = lib.cat([w1, w2]).sum()
            return x + lib.max(m1) + lib.max(m2)

    def pattern(w1, w2):
        return lib.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return lib.stack([w1, w2])
    return M(), pattern, replacement


def test_replace_pattern_as_torchs_docs(torch):
    m, pattern, replacement = _rewrite_example(pyctorch)
    tm, tpattern, treplacement = _rewrite_example(torch)
    gm = fx.symbolic_trace(m)
    tgm = torch.fx.symbolic_trace(tm)
    matches = fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    tmatches = torch.fx.subgraph_rewriter.replace_pattern(tgm, tpattern, treplacement)
    assert len(matches) == len(tmatches) == 2
    for ours_match, theirs_match in zip(matches, tmatches):
        assert ours_match.anchor.name == theirs_match.anchor.name
        assert {k.name: v.name for k, v in ours_match.nodes_map.items()} == \
            {k.name: v.name for k, v in theirs_match.nodes_map.items()}
    assert ours_nodes(gm) == torch_nodes(tgm)
    assert normalized_code(gm.code) == normalized_code(tgm.code)
    gm.graph.lint()
    args = _inputs(pyctorch, (2,), (2,), (2,))
    targs = _inputs(torch, (2,), (2,), (2,))
    assert_same(gm(*args), tgm(*targs), 1e-6, 1e-6)


def test_replace_pattern_leaves_shared_intermediates_alone():
    def fn(x):
        a = x.relu()
        return a.neg(), a  # `a` is used outside the pattern's match

    gm = fx.symbolic_trace(fn)
    matches = fx.replace_pattern(gm, lambda x: x.relu().neg(), lambda x: x.sigmoid())
    assert matches == []
    assert [n.target for n in gm.graph.nodes if n.op == "call_method"] == ["relu", "neg"]


def test_shape_prop_fills_tensor_meta_as_torch(torch):
    ours, theirs, (x,), (tx,), _ = build_pair("attention_block", torch)
    gm, tgm = fx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    ShapeProp(gm).propagate(x)
    torch.fx.passes.shape_prop.ShapeProp(tgm).propagate(tx)
    seen = 0
    for n, tn in zip(gm.graph.nodes, tgm.graph.nodes):
        assert n.name == tn.name
        assert ("tensor_meta" in n.meta) == ("tensor_meta" in tn.meta), n.name
        if "tensor_meta" in tn.meta:
            ours_meta, theirs_meta = n.meta["tensor_meta"], tn.meta["tensor_meta"]
            if isinstance(theirs_meta, tuple) and not hasattr(theirs_meta, "shape"):
                ours_meta, theirs_meta = ours_meta[0], theirs_meta[0]  # split(): one per piece
            assert tuple(ours_meta.shape) == tuple(theirs_meta.shape), n.name
            assert str(ours_meta.dtype) == str(theirs_meta.dtype)
            # Strides are compared on the CNN below: pyctorch's attention kernel returns a contiguous
            # (B, H, T, D) result where torch's has the (B, T, H, D) memory layout.
            seen += 1
    assert seen > 20


def test_shape_prop_strides_and_memory_format_as_torch(torch):
    ours, theirs, (x,), (tx,), _ = build_pair("cnn", torch)
    gm, tgm = fx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    ShapeProp(gm).propagate(x)
    torch.fx.passes.shape_prop.ShapeProp(tgm).propagate(tx)
    for n, tn in zip(gm.graph.nodes, tgm.graph.nodes):
        if "tensor_meta" in tn.meta:
            a, b = n.meta["tensor_meta"], tn.meta["tensor_meta"]
            assert (tuple(a.shape), tuple(a.stride), a.requires_grad) == (tuple(b.shape), tuple(b.stride),
                                                                          b.requires_grad), n.name
            assert str(a.memory_format) == str(b.memory_format)
