"""End to end: a small CNN (conv/bn/relu/pool/linear) and a tiny GPT (embedding, causal self-attention,
layer norm, GELU MLP, AdamW with weight-decay groups, cosine schedule, gradient clipping), built from
the same seed and trained 50 steps in pyctorch and in torch: the losses agree at every step."""
import math

import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T

STEPS = 50


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


def gpt(lib, vocab=48, block=16, embd=32, heads=4, layers=2):
    nn, F = lib.nn, lib.nn.functional

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(embd, 3 * embd)
            self.proj = nn.Linear(embd, embd)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(embd, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(embd)
            self.attn = SelfAttention()
            self.ln2 = nn.LayerNorm(embd)
            self.mlp = nn.Sequential(nn.Linear(embd, 4 * embd), nn.GELU(approximate="tanh"), nn.Linear(4 * embd, embd))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, embd)
            self.pos = nn.Embedding(block, embd)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(embd)
            self.head = nn.Linear(embd, vocab, bias=False)

        def forward(self, idx, targets):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(t))
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    return GPT()


def train(lib, kind):
    lib.manual_seed(0)
    rs = np.random.RandomState(0)
    if kind == "cnn":
        model = cnn(lib)
        x = lib.tensor(rs.randn(8, 3, 12, 12).astype(np.float32))
        y = lib.tensor(rs.randint(0, 10, 8))
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
        sched = None

        def loss_fn():
            return lib.nn.functional.cross_entropy(model(x), y)
    else:
        model = gpt(lib)
        idx = lib.tensor(rs.randint(0, 48, (4, 16)))
        tgt = lib.tensor(rs.randint(0, 48, (4, 16)))
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
        opt = lib.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                              lr=3e-3, betas=(0.9, 0.95))
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)

        def loss_fn():
            return model(idx, tgt)
    init = {k: np.array(v.tolist()) for k, v in model.state_dict().items()}
    losses = []
    model.train()
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(loss.item())
    return init, losses


@requires_torch
@pytest.mark.parametrize("kind", ["cnn", "gpt"])
def test_training_matches_torch(kind):
    init_p, losses_p = train(P, kind)
    init_t, losses_t = train(T, kind)
    assert list(init_p) == list(init_t)
    for k in init_t:  # the same seed gives torch's initial weights
        np.testing.assert_array_equal(init_p[k].astype(np.float32), init_t[k].astype(np.float32), err_msg=k)
    assert losses_t[-1] < losses_t[0] * 0.8  # it trains
    for step, (a, b) in enumerate(zip(losses_p, losses_t)):
        assert math.isclose(a, b, rel_tol=1e-4), f"step {step}: pyctorch {a} torch {b}"
