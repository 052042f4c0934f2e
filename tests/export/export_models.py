"""Models exported by tests/export and tests/onnx, written against a torch-like module (pyctorch or torch),
so the same definitions build both frameworks' copies."""
import math


def models(torch):
    nn, F = torch.nn, torch.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2, self.fc3 = nn.Linear(6, 16), nn.Linear(16, 16), nn.Linear(16, 3)

        def forward(self, x):
            return self.fc3(F.gelu(self.fc2(torch.relu(self.fc1(x))))).softmax(-1)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
            self.conv2, self.bn2 = nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.head = nn.Linear(8 * 2 * 2, 5)

        def forward(self, x):
            x = self.pool(F.relu(self.bn1(self.conv1(x))))
            x = F.relu(self.bn2(self.conv2(x)))
            x = F.adaptive_avg_pool2d(x, (2, 2))
            return self.head(torch.flatten(x, 1))

    class LSTMNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(5, 7, num_layers=2, batch_first=True)
            self.head = nn.Linear(7, 2)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return self.head(out[:, -1]), h

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self, vocab=11, d=16, heads=2, layers=2, block=8):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
            self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            T = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(T))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return {"mlp": MLP, "cnn": CNN, "lstm": LSTMNet, "gpt": GPT}


def example_inputs(torch, name, batch=3):
    g = torch.Generator().manual_seed(1)
    if name == "mlp":
        return (torch.randn(batch, 6, generator=g),)
    if name == "cnn":
        return (torch.randn(batch, 3, 8, 8, generator=g),)
    if name == "lstm":
        return (torch.randn(batch, 4, 5, generator=g),)
    return (torch.randint(0, 11, (batch, 6), generator=g),)


def build(torch, name, seed=0):
    torch.manual_seed(seed)
    model = models(torch)[name]()
    if name == "cnn":  # non-trivial running statistics for eval-mode BatchNorm
        with torch.no_grad():
            for bn in (model.bn1, model.bn2):
                bn.running_mean.uniform_(-0.5, 0.5)
                bn.running_var.uniform_(0.5, 2.0)
    return model.eval()


_ = math
