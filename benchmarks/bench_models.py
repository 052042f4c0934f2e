"""Full training steps of small models: a tiny GPT and a small CNN (forward, backward, gradient
clipping, optimizer step), and timm's ResNet-18 and a small ViT, pyctorch against torch in one process.

tiny GPT: vocab 256, context 64, 4 layers, width 128, 4 heads, GELU(tanh) MLP, AdamW with
weight-decay groups, batch 8. small CNN: conv(3->32)/bn/relu/maxpool, conv(32->64)/bn/relu,
adaptive avg pool, linear; SGD with momentum, batch 32 of 3x32x32. Target: <= 0.7x torch.
timm (when installed; one copy imported per framework, benchmarks/_timm_loader.py): resnet18 with 10 classes on
a batch of 8 3x32x32 images (SGD training step, and evaluation forward), and vit_tiny_patch16_224 at 32x32 with
patch 8 (SGD training step, and create_model itself). Target for these: <= 1.0x torch.
"""
import sys

import numpy as np

from _harness import setup, thread_list
from _timm_loader import timm_for

TARGET = 0.7


def gpt(m, vocab=256, block=64, embd=128, heads=4, layers=4, batch=8, autocast=False, compile=None):
    """The train step; autocast=True runs the forward under bfloat16 autocast (bench_amp.py); compile: None
    (eager) or the keyword arguments of m.compile for the model (bench_compile.py)."""
    nn, F = m.nn, m.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(embd), nn.LayerNorm(embd)
            self.qkv, self.proj = nn.Linear(embd, 3 * embd), nn.Linear(embd, embd)
            self.mlp = nn.Sequential(nn.Linear(embd, 4 * embd), nn.GELU(approximate="tanh"), nn.Linear(4 * embd, embd))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(embd, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(b, t, c)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, embd), nn.Embedding(block, embd)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f, self.head = nn.LayerNorm(embd), nn.Linear(embd, vocab, bias=False)

        def forward(self, idx, tgt):
            x = self.tok(idx) + self.pos(m.arange(idx.shape[1]))
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, vocab), tgt.view(-1))

    m.manual_seed(0)
    model = GPT()
    rs = np.random.RandomState(0)
    idx, tgt = m.tensor(rs.randint(0, vocab, (batch, block))), m.tensor(rs.randint(0, vocab, (batch, block)))
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = m.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}], lr=1e-3)
    forward = model if compile is None else m.compile(model, **compile)

    def run():
        opt.zero_grad()
        if autocast:
            with m.autocast("cpu", dtype=m.bfloat16):
                loss = forward(idx, tgt)
        else:
            loss = forward(idx, tgt)
        loss.backward()
        m.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return run


def cnn(m, batch=32):
    nn = m.nn
    m.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    rs = np.random.RandomState(0)
    x = m.tensor(rs.randn(batch, 3, 32, 32).astype(np.float32))
    y = m.tensor(rs.randint(0, 10, batch))
    opt = m.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def run():
        opt.zero_grad()
        m.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return run


def timm_step(m, name, train=True, **kwargs):
    timm = timm_for(m)
    m.manual_seed(0)
    model = timm.create_model(name, pretrained=False, num_classes=10, **kwargs)
    rs = np.random.RandomState(0)
    x = m.tensor(rs.randn(8, 3, 32, 32).astype(np.float32))
    y = m.tensor(rs.randint(0, 10, 8))
    opt = m.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    if not train:
        model.eval()

        def evaluate():
            with m.no_grad():
                model(x)
        return evaluate

    def run():
        opt.zero_grad()
        m.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return run


VIT = dict(img_size=32, patch_size=8, depth=4)


def timm_create(m, name, **kwargs):
    timm = timm_for(m)
    return lambda: timm.create_model(name, pretrained=False, num_classes=10, **kwargs)


def main():
    args, suite = setup("models", __doc__, threads="1,2")
    for n in thread_list(args):
        suite.set_threads(n)
        suite.bench("tiny GPT train step", "4x128 T=64 B=8 threads=%d" % n, lambda m: gpt(m), target=TARGET)
        suite.bench("small CNN train step", "B=32 32x32 threads=%d" % n, lambda m: cnn(m), target=TARGET)
        if timm_for(suite.modules()[0]) is None:
            continue
        suite.bench("timm resnet18 train step", "B=8 32x32 threads=%d" % n, lambda m: timm_step(m, "resnet18"),
                    target=1.0)
        suite.bench("timm resnet18 eval forward", "B=8 32x32 threads=%d" % n,
                    lambda m: timm_step(m, "resnet18", train=False), target=1.0)
        suite.bench("timm ViT train step", "tiny 4 blocks 32x32/8 B=8 threads=%d" % n,
                    lambda m: timm_step(m, "vit_tiny_patch16_224", **VIT), target=1.0)
        suite.bench("timm ViT create_model", "tiny 4 blocks threads=%d" % n,
                    lambda m: timm_create(m, "vit_tiny_patch16_224", **VIT), target=1.0)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
