"""pyctorch.nn (first slice): Module mechanics, containers, Linear, activations, losses, init and
functional, against torch with identical weights (copied through state_dict) or the same seed."""
import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, assert_same, torch as T


def to_torch(t):
    return T.tensor(np.array(t.detach().tolist()), dtype=getattr(T, str(t.dtype).split(".")[1]))


def to_pct(t):
    return P.tensor(np.array(t.detach().tolist()), dtype=getattr(P, str(t.dtype).split(".")[1]))


class Net(P.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = P.nn.Linear(4, 6)
        self.act = P.nn.Tanh()
        self.fc2 = P.nn.Linear(6, 3, bias=False)
        self.register_buffer("steps", P.zeros(1))
        self.register_buffer("scratch", P.zeros(2), persistent=False)
        self.scale = P.nn.Parameter(P.ones(1))

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


# ---- Module mechanics --------------------------------------------------------------------------

def test_registration_and_traversal():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(net.state_dict()) == ["scale", "steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert isinstance(net.fc1.weight, P.nn.Parameter) and net.fc1.weight.requires_grad
    assert net.get_submodule("fc1") is net.fc1 and net.get_parameter("fc1.bias") is net.fc1.bias
    shared = P.nn.Sequential(net.fc1, net.fc1)
    assert len(list(shared.parameters())) == 2  # shared parameters are listed once
    with pytest.raises(TypeError):
        net.fc1.weight = P.ones(6, 4)  # a plain tensor cannot replace a parameter
    with pytest.raises(AttributeError):
        net.missing


@requires_torch
def test_registration_order_matches_torch():
    class TNet(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Linear(4, 6)
            self.act = T.nn.Tanh()
            self.fc2 = T.nn.Linear(6, 3, bias=False)
            self.register_buffer("steps", T.zeros(1))
            self.register_buffer("scratch", T.zeros(2), persistent=False)
            self.scale = T.nn.Parameter(T.ones(1))
    assert list(TNet().state_dict()) == list(Net().state_dict())
    assert [n for n, _ in TNet().named_parameters()] == [n for n, _ in Net().named_parameters()]


def test_state_dict_round_trip_and_strictness():
    a, b = Net(), Net()
    b.load_state_dict(a.state_dict())
    for (n, p), (_, q) in zip(a.state_dict().items(), b.state_dict().items()):
        assert p.tolist() == q.tolist(), n
    sd = a.state_dict()
    del sd["fc2.weight"]
    sd["extra"] = P.zeros(1)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "fc2.weight"'):
        b.load_state_dict(sd)
    r = b.load_state_dict(sd, strict=False)
    assert r.missing_keys == [] or "fc2.weight" not in r.unexpected_keys
    bad = a.state_dict()
    bad["fc1.weight"] = P.zeros(2, 2)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight"):
        b.load_state_dict(bad)


def test_modes_zero_grad_to_apply():
    net = Net()
    assert net.training and net.fc1.training
    net.eval()
    assert not net.training and not net.fc1.training
    net.train()
    net(P.ones(2, 4)).sum().backward()
    assert net.fc1.weight.grad is not None
    net.zero_grad()
    assert net.fc1.weight.grad is None
    net(P.ones(2, 4)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert net.fc1.weight.grad.abs().sum().item() == 0
    net.double()
    assert net.fc1.weight.dtype == P.float64 and isinstance(net.fc1.weight, P.nn.Parameter)
    assert net(P.ones(2, 4, dtype=P.float64)).dtype == P.float64
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Tanh", "Linear", "Net"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_forward_hooks():
    net = P.nn.Linear(2, 2)
    calls = []
    h1 = net.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = net.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = net(P.ones(3, 2))
    assert calls == [(3, 2)]
    assert np.allclose(out.tolist(), (net.bias + 1).expand(3, 2).tolist())
    h1.remove()
    h2.remove()
    net(P.ones(1, 2))
    assert calls == [(3, 2)]


def test_full_backward_hook():
    net = P.nn.Linear(2, 2)
    seen = []
    net.register_full_backward_hook(lambda m, gin, gout: seen.append((gin[0].shape, gout[0].shape)))
    x = P.ones(3, 2, requires_grad=True)
    net(x).sum().backward()
    assert seen == [((3, 2), (3, 2))]


@requires_torch
def test_repr_matches_torch():
    def build(m):
        return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.ReLU(), m.nn.Dropout(0.1),
                               m.nn.Sequential(m.nn.Linear(4, 2, bias=False), m.nn.LeakyReLU(0.2)),
                               m.nn.GELU(approximate="tanh"), m.nn.Softmax(dim=-1), m.nn.Flatten(),
                               m.nn.CrossEntropyLoss())
    assert repr(build(P)) == repr(build(T))
    assert repr(P.nn.Parameter(P.ones(2))) == repr(T.nn.Parameter(T.ones(2)))


def test_containers():
    seq = P.nn.Sequential(P.nn.Linear(2, 3), P.nn.ReLU(), P.nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], P.nn.Linear)
    assert isinstance(seq[:2], P.nn.Sequential) and len(seq[:2]) == 2
    ml = P.nn.ModuleList([P.nn.Linear(1, 1) for _ in range(3)])
    ml.append(P.nn.Tanh())
    assert len(ml) == 4 and len(list(ml.parameters())) == 6
    md = P.nn.ModuleDict({"a": P.nn.Linear(1, 2)})
    md["b"] = P.nn.ReLU()
    assert list(md.keys()) == ["a", "b"] and "a" in md
    pl = P.nn.ParameterList([P.nn.Parameter(P.ones(2)), P.zeros(3)])
    assert len(pl) == 2 and all(isinstance(p, P.nn.Parameter) for p in pl)
    pd = P.nn.ParameterDict({"w": P.nn.Parameter(P.ones(1))})
    assert [n for n, _ in pd.named_parameters()] == ["w"]


# ---- layers and losses against torch ------------------------------------------------------------

@requires_torch
def test_seeded_init_matches_torch():
    for m in (P, T):
        m.manual_seed(123)
    pl, tl = P.nn.Linear(7, 5), None
    T.manual_seed(123)
    tl = T.nn.Linear(7, 5)
    assert_same(pl.weight.detach(), tl.weight.detach())
    assert_same(pl.bias.detach(), tl.bias.detach())
    P.manual_seed(5)
    T.manual_seed(5)
    for name, kw in (("xavier_uniform_", {}), ("xavier_normal_", {}), ("kaiming_normal_", {"mode": "fan_out"}),
                     ("trunc_normal_", {"std": 0.02}), ("trunc_normal_", {"a": 1.0, "b": 3.0}),
                     ("normal_", {"std": 0.5}), ("uniform_", {"a": -1, "b": 2})):
        a, b = P.empty(6, 4), T.empty(6, 4)
        getattr(P.nn.init, name)(a, **kw)
        getattr(T.nn.init, name)(b, **kw)
        assert_same(a, b)


ACTIVATIONS = [("ReLU", {}), ("LeakyReLU", {"negative_slope": 0.2}), ("GELU", {}), ("GELU", {"approximate": "tanh"}),
               ("SiLU", {}), ("Mish", {}), ("Sigmoid", {}), ("Tanh", {}), ("Softplus", {"beta": 2.0}), ("ELU", {}),
               ("Hardtanh", {}), ("ReLU6", {}), ("Softmax", {"dim": 1}), ("LogSoftmax", {"dim": 0})]


@requires_torch
@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=[a + str(b) for a, b in ACTIVATIONS])
def test_activation_forward_backward(name, kw):
    x = np.linspace(-4, 4, 24).reshape(4, 6)
    outs = []
    for m in (P, T):
        t = m.tensor(x, dtype=m.float64, requires_grad=True)
        y = getattr(m.nn, name)(**kw)(t)
        (y * m.arange(24, dtype=m.float64).reshape(4, 6)).sum().backward()
        outs.append((y.detach(), t.grad))
    assert_same(outs[0][0], outs[1][0], rtol=1e-10, atol=1e-12)
    assert_same(outs[0][1], outs[1][1], rtol=1e-9, atol=1e-12)


LOSSES = [("MSELoss", {}, "float"), ("L1Loss", {"reduction": "sum"}, "float"), ("SmoothL1Loss", {"beta": 0.5}, "float"),
          ("HuberLoss", {"delta": 0.7}, "float"), ("CrossEntropyLoss", {}, "index"),
          ("CrossEntropyLoss", {"label_smoothing": 0.1, "reduction": "sum"}, "index"),
          ("CrossEntropyLoss", {"ignore_index": 1}, "index"), ("CrossEntropyLoss", {}, "prob"),
          ("NLLLoss", {"reduction": "none"}, "index"), ("BCEWithLogitsLoss", {}, "unit"),
          ("BCELoss", {}, "unit_sig")]


@requires_torch
@pytest.mark.parametrize("name,kw,kind", LOSSES, ids=[f"{a}{b}{c}" for a, b, c in LOSSES])
def test_loss_forward_backward(name, kw, kind):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4))
    if kind == "index":
        y = rng.integers(0, 4, 5)
    elif kind == "prob":
        y = rng.random((5, 4))
        y = y / y.sum(1, keepdims=True)
    elif kind in ("unit", "unit_sig"):
        y = rng.random((5, 4))
    else:
        y = rng.standard_normal((5, 4))
    res = []
    for m in (P, T):
        t = m.tensor(x, dtype=m.float64, requires_grad=True)
        inp = t.sigmoid() if kind == "unit_sig" else (t.log_softmax(1) if name == "NLLLoss" else t)
        tgt = m.tensor(y) if kind == "index" else m.tensor(y, dtype=m.float64)
        loss = getattr(m.nn, name)(**kw)(inp, tgt)
        (loss * (m.arange(loss.numel(), dtype=m.float64).reshape(loss.shape) + 1)).sum().backward()
        res.append((loss.detach(), t.grad))
    assert_same(res[0][0], res[1][0], rtol=1e-10, atol=1e-12)
    assert_same(res[0][1], res[1][1], rtol=1e-9, atol=1e-12)


@requires_torch
def test_cross_entropy_weights_and_kdim():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 2, 2))
    y = rng.integers(0, 4, (3, 2, 2))
    w = rng.random(4)
    res = []
    for m in (P, T):
        t = m.tensor(x, dtype=m.float64, requires_grad=True)
        loss = m.nn.functional.cross_entropy(t, m.tensor(y), weight=m.tensor(w, dtype=m.float64), ignore_index=2)
        loss.backward()
        res.append((loss.detach(), t.grad))
    assert_same(res[0][0], res[1][0], rtol=1e-10)
    assert_same(res[0][1], res[1][1], rtol=1e-9, atol=1e-12)


@requires_torch
def test_dropout_matches_torch_with_same_seed():
    outs = []
    for m in (P, T):
        m.manual_seed(7)
        d = m.nn.Dropout(0.3)
        x = m.ones(4, 5, requires_grad=True)
        y = d(x)
        y.sum().backward()
        d.eval()
        assert d(x) is x
        outs.append((y.detach(), x.grad))
    assert_same(outs[0][0], outs[1][0])
    assert_same(outs[0][1], outs[1][1])


@requires_torch
def test_mlp_training_matches_torch_step_by_step():
    losses = {}
    for m in (P, T):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(8, 16), m.nn.GELU(), m.nn.Linear(16, 4))
        x = m.randn(32, 8)
        y = m.randint(0, 4, (32,))
        crit = m.nn.CrossEntropyLoss()
        out = []
        for _ in range(20):
            loss = crit(net(x), y)
            net.zero_grad()
            loss.backward()
            with m.no_grad():
                for p in net.parameters():
                    p.sub_(0.1 * p.grad)
            out.append(loss.item())
        losses[m.__name__] = out
    np.testing.assert_allclose(losses["pyctorch"], losses["torch"], rtol=1e-5)


def test_functional_by_hand():
    x = P.tensor([[-1.0, 0.0, 2.0]])
    assert P.nn.functional.relu(x).tolist() == [[0.0, 0.0, 2.0]]
    assert P.nn.functional.one_hot(P.tensor([0, 2]), 3).tolist() == [[1, 0, 0], [0, 0, 1]]
    n = P.nn.functional.normalize(P.tensor([[3.0, 4.0]]))
    assert np.allclose(n.tolist(), [[0.6, 0.8]])
    loss = P.nn.functional.mse_loss(P.tensor([1.0, 3.0]), P.tensor([0.0, 0.0]))
    assert loss.item() == 5.0
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        P.nn.functional.cross_entropy(P.zeros(2, 3), P.tensor([0, 7]))


@requires_torch
def test_mlp_with_adamw_matches_torch():
    losses = {}
    for m in (P, T):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(8, 16), m.nn.Tanh(), m.nn.Linear(16, 4))
        opt = m.optim.AdamW(net.parameters(), lr=1e-2)
        x = m.randn(32, 8)
        y = m.randint(0, 4, (32,))
        out = []
        for _ in range(20):
            loss = m.nn.functional.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(loss.item())
        losses[m.__name__] = out
    np.testing.assert_allclose(losses["pyctorch"], losses["torch"], rtol=1e-5)
