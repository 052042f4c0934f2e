"""Mixed precision on the CPU: bfloat16 GEMMs and a tiny GPT train step under bfloat16 autocast.

bf16 matmul: square 1024 and 2048 products of bfloat16 tensors (pyctorch: the AVX512-BF16 kernel
of csrc/aten/cpu/gemm_lowp.c where the CPU has it; torch: oneDNN). bf16 linear: F.linear of a
1024x768 input with a 3072x768 weight (the MLP up-projection of a GPT-2 small layer).
tiny GPT: the model of bench_models.py (vocab 256, context 64, 4 layers, width 128, batch 8),
forward under torch.autocast("cpu", dtype=torch.bfloat16), backward, clipping, AdamW; and the same
step in float32 for reference. Target: <= 1.0x torch.
"""
import sys

import numpy as np

from _harness import setup, thread_list

TARGET = 1.0


def matmul(m, n):
    rs = np.random.RandomState(0)
    a = m.tensor(rs.randn(n, n).astype(np.float32)).bfloat16()
    b = m.tensor(rs.randn(n, n).astype(np.float32)).bfloat16()
    return lambda: a @ b


def linear(m):
    rs = np.random.RandomState(0)
    x = m.tensor(rs.randn(1024, 768).astype(np.float32)).bfloat16()
    w = m.tensor(rs.randn(3072, 768).astype(np.float32)).bfloat16()
    F = m.nn.functional
    return lambda: F.linear(x, w)


def gpt(m, amp, vocab=256, block=64, embd=128, heads=4, layers=4, batch=8):
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

    def run():
        opt.zero_grad()
        with m.autocast("cpu", dtype=m.bfloat16, enabled=amp):
            loss = model(idx, tgt)
        loss.backward()
        m.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return run


def gflops(flop):
    return lambda s: {"GFLOP/s": flop / s / 1e9}


def main():
    args, suite = setup("amp", __doc__, threads="1,2")
    for n in thread_list(args):
        suite.set_threads(n)
        for size in (1024, 2048):
            suite.bench("bf16 matmul", "%dx%d threads=%d" % (size, size, n), lambda m, size=size: matmul(m, size),
                        target=TARGET, metrics=gflops(2.0 * size ** 3))
        suite.bench("bf16 linear", "1024x768 @ 3072x768^T threads=%d" % n, linear, target=TARGET,
                    metrics=gflops(2.0 * 1024 * 768 * 3072))
        suite.bench("tiny GPT step bf16", "autocast 4x128 T=64 B=8 threads=%d" % n, lambda m: gpt(m, True),
                    target=TARGET)
        suite.bench("tiny GPT step fp32", "reference 4x128 T=64 B=8 threads=%d" % n, lambda m: gpt(m, False))
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
