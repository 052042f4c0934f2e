"""symbolic_trace on a registry of models (models.py), in pyctorch.fx and in torch.fx: the same nodes, the
same generated code (modulo the known spellings), outputs equal to eager and to torch's."""
import pytest

import pyctorch
import pyctorch.fx as fx
from comparison import assert_same
from fx_helpers import normalized_code, ours_nodes, torch, torch_nodes  # noqa: F401
from fx_models import MODELS, build_pair


def _traced_pair(name, torch):
    ours, theirs, ours_in, theirs_in, concrete = build_pair(name, torch)
    gm = fx.symbolic_trace(ours, concrete_args=concrete)
    tgm = torch.fx.symbolic_trace(theirs, concrete_args=concrete)
    extra = tuple(concrete.values()) if concrete else ()  # the traced forward keeps the concrete parameters
    return ours, theirs, gm, tgm, ours_in + extra, theirs_in + extra


@pytest.mark.parametrize("name", list(MODELS))
def test_trace_matches_torch(name, torch):
    ours, theirs, gm, tgm, ours_in, theirs_in = _traced_pair(name, torch)
    assert ours_nodes(gm) == torch_nodes(tgm)
    assert normalized_code(gm.code) == normalized_code(tgm.code)
    gm.graph.lint()
    with pyctorch.no_grad(), torch.no_grad():
        eager = ours(*ours_in)
        traced = gm(*ours_in)
        assert_same(traced, eager, 0, 0)
        assert_same(traced, tgm(*theirs_in), 1e-4, 1e-5)
        assert_same(fx.Interpreter(gm).run(*ours_in), eager, 0, 0)
    assert fx.symbolic_trace(gm).code == gm.code  # generated code traces back to itself


@pytest.mark.parametrize("name", ["mlp", "cnn", "methods", "parameter_functional"])
def test_state_dict_keys_as_torch(name, torch):
    ours, _, gm, tgm, _, _ = _traced_pair(name, torch)
    assert list(gm.state_dict()) == list(tgm.state_dict())
    if name in ("mlp", "cnn"):  # everything is referenced: the original keys, in their order
        assert list(gm.state_dict()) == list(ours.state_dict())
        assert all(gm.state_dict()[k] is v or gm.state_dict()[k].data_ptr() == v.data_ptr()
                   for k, v in ours.state_dict().items())


def test_graph_prints_like_torch(torch):
    ours, theirs, gm, tgm, _, _ = _traced_pair("methods", torch)
    assert str(gm.graph) == str(tgm.graph).replace("_operator.", "operator.")


def test_mha_and_sdpa_are_traced_as_torch_traces_them(torch):
    _, _, gm, _, _, _ = _traced_pair("mha_block", torch)
    assert [n.op for n in gm.graph.nodes if n.target == "attn"] == ["call_module"]
    _, _, gm, _, _, _ = _traced_pair("attention_block", torch)
    sdpa = [n for n in gm.graph.nodes if n.op == "call_function" and
            getattr(n.target, "__name__", "") == "scaled_dot_product_attention"]
    assert len(sdpa) == 1 and sdpa[0].kwargs == {"is_causal": True}
