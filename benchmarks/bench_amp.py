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
from bench_models import gpt

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
        suite.bench("tiny GPT step bf16", "autocast 4x128 T=64 B=8 threads=%d" % n, lambda m: gpt(m, autocast=True),
                    target=TARGET)
        suite.bench("tiny GPT step fp32", "reference 4x128 T=64 B=8 threads=%d" % n, lambda m: gpt(m))
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
