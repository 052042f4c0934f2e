"""The models the fx tests trace, written once against `lib` (pyctorch or torch) so both frameworks trace the
same code. Each entry: build(lib) -> nn.Module or function, inputs(lib) -> tuple of example inputs,
concrete_args (or None)."""
import numpy as np


def _tensor(lib, shape, seed):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def mlp(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            return self.head(F.gelu(self.body(x))).softmax(dim=-1)
    return MLP()


def cnn(lib):
    nn = lib.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(8, 8, 3, stride=2)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            x = self.pool(lib.relu(self.bn1(self.conv1(x))))
            x = self.gap(self.conv2(x).relu())
            return self.fc(lib.flatten(x, 1))
    return CNN().eval()


def residual(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            out = self.bn2(self.conv2(lib.relu(self.bn1(self.conv1(x)))))
            return lib.relu(out + x)
    return Block().eval()


def attention_block(lib):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, d=16, heads=2):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))
    return Block()


def mha_block(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.attn = nn.MultiheadAttention(d, 2, batch_first=True)
            self.norm = nn.LayerNorm(d)

        def forward(self, x):
            out = self.attn(x, x, x, need_weights=False)[0]
            return self.norm(x + out)
    return Block().eval()


def torch_functions(lib):
    def fn(x, y):
        z = lib.sigmoid(x) * lib.tanh(y) - lib.exp(-x.abs())
        w = lib.cat([z, y], dim=-1).sum(-1, keepdim=True)
        return lib.matmul(z.t(), w) / 2 + lib.clamp(z, min=-0.5, max=0.5).mean()
    return fn


def methods(lib):
    nn = lib.nn

    class Methods(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(6))
            self.register_buffer("shift", lib.zeros(6))

        def forward(self, x):
            n = x.size(0)
            y = x.view(n, 2, 3).permute(0, 2, 1).reshape(n, -1) * self.scale
            y = y[:, 1:] + y[:, :-1]
            y = y.unsqueeze(1).expand(n, 2, 5).flatten(1)
            return y[0], x.shape[1] * y.mean(dim=0) + self.shift[:1]
    return Methods()


def concrete(lib):
    def fn(x, scale, transpose):
        if transpose:
            x = x.t()
        return x * scale
    return fn


def parameter_functional(lib):
    nn, F = lib.nn, lib.nn.functional

    class Affine(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(4, 4) * 0.5)
            self.bias = nn.Parameter(lib.zeros(4))

        def forward(self, x):
            return F.linear(x, self.weight, self.bias) + lib.tensor([1.0, 2.0, 3.0, 4.0])
    return Affine()


def shared_and_nested(lib):
    nn = lib.nn

    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x).tanh()

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x) + self.inner(x)
            return x
    return Outer()


# name -> (build, input shapes, concrete_args)
MODELS = {
    "mlp": (mlp, [(5, 8)], None),
    "cnn": (cnn, [(2, 3, 8, 8)], None),
    "residual": (residual, [(2, 4, 6, 6)], None),
    "attention_block": (attention_block, [(2, 5, 16)], None),
    "mha_block": (mha_block, [(2, 5, 8)], None),
    "torch_functions": (torch_functions, [(4, 3), (4, 3)], None),
    "methods": (methods, [(3, 6)], None),
    "concrete": (concrete, [(2, 3), (2, 3)], {"transpose": False}),
    "parameter_functional": (parameter_functional, [(3, 4)], None),
    "shared_and_nested": (shared_and_nested, [(2, 4)], None),
}


def build_pair(name, torch):
    """The model `name` built for pyctorch and for torch with equal weights, and equal example inputs."""
    import pyctorch
    build, shapes, concrete_args = MODELS[name]
    pyctorch.manual_seed(0)
    ours = build(pyctorch)
    theirs = build(torch)
    if isinstance(ours, pyctorch.nn.Module):
        state = {k: torch.tensor(v.detach().numpy()) for k, v in ours.state_dict().items()}
        theirs.load_state_dict(state)
    ours_inputs = tuple(_tensor(pyctorch, s, i) for i, s in enumerate(shapes))
    theirs_inputs = tuple(_tensor(torch, s, i) for i, s in enumerate(shapes))
    return ours, theirs, ours_inputs, theirs_inputs, concrete_args


def subclassed_layers(lib):
    """User subclasses of library layers are not leaves: their forward (the library's code) is traced."""
    nn = lib.nn

    class ScaledLinear(nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2

    class PaddedConv(nn.Conv2d):
        def forward(self, x):
            return super().forward(x).relu()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = PaddedConv(2, 3, 3, padding=1)
            self.lin = ScaledLinear(3, 4)

        def forward(self, x):
            return self.lin(self.conv(x).mean(dim=(2, 3)))
    return Net()


MODELS["subclassed_layers"] = (subclassed_layers, [(2, 2, 5, 5)], None)
