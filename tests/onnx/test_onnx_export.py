"""torch.onnx.export: an MLP, a CNN with BatchNorm (eval), an LSTM and a tiny GPT written as ONNX models,
checked by onnx.checker and run in onnxruntime at two batch sizes against pyctorch's eager results; the
return values of both export paths as torch's; the same model exported by torch gives the same outputs."""
import io
import os
import sys

import pytest

import pyctorch
from pyctorch.export import Dim
from comparison import assert_same

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "export"))
from export_models import build, example_inputs  # noqa: E402

onnx = pytest.importorskip("onnx", reason="onnx unavailable (make test-deps installs it)")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime unavailable (make test-deps installs it)")

NAMES = ["mlp", "cnn", "lstm", "gpt"]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _session(model_proto):
    return ort.InferenceSession(model_proto.SerializeToString(), providers=["CPUExecutionProvider"])


def _eager(model, x):
    with pyctorch.no_grad():
        out = model(*x)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", NAMES)
def test_dynamo_export_runs_in_onnxruntime(name):
    model = build(pyctorch, name)
    program = pyctorch.onnx.export(model, example_inputs(pyctorch, name),
                                   dynamic_shapes=({0: Dim("batch")},))
    assert type(program).__name__ == "ONNXProgram"
    onnx.checker.check_model(program.model_proto, full_check=True)
    graph_input = program.model_proto.graph.input[0]
    assert graph_input.type.tensor_type.shape.dim[0].dim_param == "batch"
    session = _session(program.model_proto)
    for batch in (2, 5):
        x = example_inputs(pyctorch, name, batch)
        got = session.run(None, {session.get_inputs()[0].name: x[0].numpy()})
        assert_same(got, _eager(model, x))
        assert_same([o.numpy() for o in program(*x)], _eager(model, x))  # ONNXProgram.__call__


@pytest.mark.parametrize("name", ["cnn", "gpt"])
def test_legacy_path_writes_file_with_names_and_axes(name, tmp_path):
    model = build(pyctorch, name)
    path = tmp_path / "model.onnx"
    result = pyctorch.onnx.export(model, example_inputs(pyctorch, name), str(path), input_names=["inp"],
                                  output_names=["logits"], dynamic_axes={"inp": {0: "n"}, "logits": {0: "n"}},
                                  opset_version=18, dynamo=False)
    assert result is None
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto)
    assert [i.name for i in proto.graph.input] == ["inp"] and [o.name for o in proto.graph.output] == ["logits"]
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "n"
    assert proto.opset_import[0].version == 18
    session = _session(proto)
    for batch in (1, 4):
        x = example_inputs(pyctorch, name, batch)
        assert_same(session.run(None, {"inp": x[0].numpy()}), _eager(model, x))


def test_file_object_and_save(tmp_path):
    model = build(pyctorch, "mlp")
    buffer = io.BytesIO()
    program = pyctorch.onnx.export(model, example_inputs(pyctorch, "mlp"), buffer)
    proto = onnx.load_from_string(buffer.getvalue())
    assert proto == program.model_proto
    program.save(str(tmp_path / "m.onnx"))
    assert onnx.load(str(tmp_path / "m.onnx")) == proto
    # an ExportedProgram is exported as it is
    ep = pyctorch.export.export(model, example_inputs(pyctorch, "mlp"))
    again = pyctorch.onnx.export(ep)
    x = example_inputs(pyctorch, "mlp")
    assert_same(_session(again.model_proto).run(None, {"x": x[0].numpy()}), _eager(model, x))


def test_refusals():
    model = build(pyctorch, "cnn").train()
    # training=EVAL (the default) exports the eval graph and leaves the model in training mode
    program = pyctorch.onnx.export(model, example_inputs(pyctorch, "cnn"))
    assert model.training
    assert "BatchNormalization" in [n.op_type for n in program.model_proto.graph.node]
    with pytest.raises(ValueError, match="opset_version >= 17"):
        pyctorch.onnx.export(build(pyctorch, "mlp"), example_inputs(pyctorch, "mlp"), opset_version=13)

    class Cumsum(pyctorch.nn.Module):
        def forward(self, x):
            return x.cumsum(0)
    with pytest.raises(RuntimeError, match="no ONNX lowering for aten.cumsum"):
        pyctorch.onnx.export(Cumsum(), (pyctorch.ones(3),))


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_same_outputs_as_torch_onnx(name, torch, tmp_path):
    """torch's exporter and pyctorch's, given the same weights, give models with the same outputs."""
    pytest.importorskip("onnxscript", reason="torch's ONNX exporter needs onnxscript")
    model = build(pyctorch, name)
    theirs = build(torch, name)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()})
    theirs.eval()
    x = example_inputs(pyctorch, name, 3)
    ours = pyctorch.onnx.export(model, x, dynamic_shapes=({0: Dim("batch")},))
    tx = tuple(torch.from_numpy(t.numpy().copy()) for t in x)
    tprog = torch.onnx.export(theirs, tx, dynamic_shapes=({0: torch.export.Dim("batch")},), dynamo=True,
                              verbose=False)
    assert type(tprog).__name__ == type(ours).__name__
    assert [i.name for i in tprog.model_proto.graph.input] == [i.name for i in ours.model_proto.graph.input]
    for batch in (2, 6):
        xb = example_inputs(pyctorch, name, batch)[0].numpy()
        got = _session(ours.model_proto).run(None, {"x": xb})
        want = _session(tprog.model_proto).run(None, {"x": xb})
        assert_same(got, want)
