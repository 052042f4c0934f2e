"""Classes live at torch's module paths: checkpoints record a class by `module.qualname` and allow-lists
passed to torch.load name them, so every nn class pyctorch has must sit where torch defines it (with
'torch' spelled 'pyctorch'); the old pyctorch paths (nn.modules.extras, nn.modules.attention) keep working."""
import importlib
import inspect
import io
import pickle
import pkgutil

import numpy as np
import pytest

import pyctorch as pt
import pyctorch.nn.modules as pmodules

# the modules pyctorch's layers live in: the names must be the ones torch uses (checked against torch below)
_EXPECTED = {
    "activation": ["Threshold", "RReLU", "CELU", "Softmax2d", "MultiheadAttention", "ReLU", "PReLU", "GLU"],
    "linear": ["NonDynamicallyQuantizableLinear", "Linear", "Bilinear", "Identity"],
    "dropout": ["AlphaDropout", "FeatureAlphaDropout", "Dropout"],
    "instancenorm": ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"],
    "normalization": ["LocalResponseNorm", "LayerNorm"],
    "padding": ["ZeroPad3d", "ConstantPad3d", "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d"],
    "loss": ["MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
             "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "PoissonNLLLoss",
             "GaussianNLLLoss", "MSELoss"],
    "pooling": ["LPPool1d", "LPPool2d", "MaxPool2d"],
    "channelshuffle": ["ChannelShuffle"],
}


@pytest.mark.parametrize("module", sorted(_EXPECTED))
def test_classes_defined_in_torch_module(module):
    mod = importlib.import_module("pyctorch.nn.modules." + module)
    for name in _EXPECTED[module]:
        cls = getattr(mod, name)
        assert cls.__module__ == "pyctorch.nn.modules." + module, name
        assert cls.__qualname__ == name
        if name != "NonDynamicallyQuantizableLinear":
            assert getattr(pt.nn, name) is cls
            assert name in mod.__all__


def _torch_classes(torch):
    """(torch submodule name, class) for every class defined in a torch.nn.modules.* submodule."""
    import torch.nn.modules as tmodules
    out = []
    for info in pkgutil.iter_modules(tmodules.__path__):
        mod = importlib.import_module("torch.nn.modules." + info.name)
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and obj.__module__ == mod.__name__:
                out.append((info.name, name, obj))
    return out


def test_module_and_qualname_match_torch():
    torch = pytest.importorskip("torch")
    checked = 0
    for sub, name, tcls in _torch_classes(torch):
        # torch.nn's class of that name, unless the name is another class's there (the SyncBatchNorm Function of
        # nn.modules._functions is not nn.SyncBatchNorm)
        pcls = getattr(pt.nn, name, None) if getattr(torch.nn, name, tcls) is tcls else None
        if pcls is None:  # a private base class: look for it where torch keeps it
            pmod = getattr(pmodules, sub, None)
            pcls = getattr(pmod, name, None) if pmod is not None else None
        if pcls is None or not inspect.isclass(pcls):
            continue  # a class pyctorch does not have (yet)
        exp_module = "pyctorch" + tcls.__module__[len("torch"):]
        assert (pcls.__module__, pcls.__qualname__) == (exp_module, tcls.__qualname__), name
        # the recorded path resolves to the class itself (what pickle does on load)
        assert getattr(importlib.import_module(exp_module), tcls.__qualname__) is pcls
        checked += 1
    assert checked > 100


def test_old_import_paths_still_work():
    from pyctorch.nn.modules import extras, attention
    assert extras.CELU is pt.nn.CELU
    assert extras.InstanceNorm2d is pt.nn.InstanceNorm2d
    assert extras.ChannelShuffle is pt.nn.ChannelShuffle
    assert extras.PoissonNLLLoss is pt.nn.PoissonNLLLoss
    assert attention.MultiheadAttention is pt.nn.MultiheadAttention
    from pyctorch.nn.modules.linear import NonDynamicallyQuantizableLinear
    assert attention.NonDynamicallyQuantizableLinear is NonDynamicallyQuantizableLinear
    assert type(pt.nn.MultiheadAttention(4, 2).out_proj) is NonDynamicallyQuantizableLinear


def _model(lib):
    return lib.nn.Sequential(lib.nn.MultiheadAttention(4, 2), lib.nn.CELU(), lib.nn.InstanceNorm1d(3),
                             lib.nn.ChannelShuffle(2), lib.nn.MarginRankingLoss(), lib.nn.ZeroPad3d(1),
                             lib.nn.LPPool1d(2, 2), lib.nn.AlphaDropout())


def test_old_checkpoint_paths_load():
    """A pickle naming the old pyctorch-only paths (written before the classes moved) still loads
    (protocol 0 names globals as text lines, so the old path can be written in)."""
    data = pickle.dumps(pt.nn.CELU(0.5), protocol=0)
    old = data.replace(b"pyctorch.nn.modules.activation", b"pyctorch.nn.modules.extras")
    assert old != data
    m = pickle.loads(old)
    assert type(m) is pt.nn.CELU and m.alpha == 0.5
    data = pickle.dumps(pt.nn.MultiheadAttention(4, 2), protocol=0)
    old = data.replace(b"pyctorch.nn.modules.activation", b"pyctorch.nn.modules.attention")
    assert old != data
    assert type(pickle.loads(old)) is pt.nn.MultiheadAttention


def test_checkpoint_torch_name_of_old_path_loads():
    """pyctorch.save wrote torch.nn.modules.extras.<cls> before the move: such a file still loads."""
    buf = io.BytesIO()
    pt.save(pt.nn.CELU(0.5), buf)
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("data.pkl"):
                assert b"torch.nn.modules.activation" in data
                data = data.replace(b"torch.nn.modules.activation", b"torch.nn.modules.extras")
            dst.writestr(info, data)
    out.seek(0)
    m = pt.load(out, weights_only=False)
    assert type(m) is pt.nn.CELU and m.alpha == 0.5


def test_whole_model_checkpoint_round_trips_with_torch():
    torch = pytest.importorskip("torch")
    pt.manual_seed(0)
    m = _model(pt)
    buf = io.BytesIO()
    pt.save(m, buf)
    buf.seek(0)
    tm = torch.load(buf, weights_only=False)
    for a, b in zip(m, tm):
        assert type(b) is getattr(torch.nn, type(a).__name__)
    assert type(tm[0].out_proj).__module__ == "torch.nn.modules.linear"
    x = pt.randn(3, 1, 4)
    tx = torch.tensor(x.numpy())
    np.testing.assert_allclose(m[0](x, x, x)[0].detach().numpy(), tm[0](tx, tx, tx)[0].detach().numpy(), rtol=1e-5)
    buf = io.BytesIO()
    torch.save(tm, buf)
    buf.seek(0)
    back = pt.load(buf, weights_only=False)
    for a, b in zip(m, back):
        assert type(b) is type(a)
    assert back[0](x, x, x)[0].tolist() == m[0](x, x, x)[0].tolist()


@pytest.mark.parametrize("lib_name", ["torch", "pyctorch"])
def test_allow_list_names_the_classes(lib_name):
    """weights_only loading of a whole MultiheadAttention needs the two classes torch names (at
    activation and linear); the error message names the next missing one as torch does."""
    torch = pytest.importorskip("torch")
    lib = torch if lib_name == "torch" else pt
    buf = io.BytesIO()
    torch.save(torch.nn.MultiheadAttention(4, 2), buf)
    linear = importlib.import_module(lib.__name__ + ".nn.modules.linear")
    allow = [lib.nn.MultiheadAttention, linear.NonDynamicallyQuantizableLinear]
    for k, missing in enumerate(["torch.nn.modules.activation.MultiheadAttention",
                                 "torch.nn.modules.linear.NonDynamicallyQuantizableLinear"]):
        buf.seek(0)
        with lib.serialization.safe_globals(allow[:k]):
            with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {missing} was not an allowed global"):
                lib.load(buf, weights_only=True)
    buf.seek(0)
    with lib.serialization.safe_globals(allow):
        m = lib.load(buf, weights_only=True)
    assert type(m) is lib.nn.MultiheadAttention
