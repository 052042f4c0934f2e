"""float32 matmul: square sizes and transformer-layer shapes.

GFLOP/s = 2*M*N*K (times the batch) / time.  Target: ratio <= 1.0.
Threads default to all cores (--threads all); 4096^3 only without --quick.
"""
import sys

from _harness import rand, setup, thread_list

TARGET = 1.0

# (name, A shape, B shape, transpose B (x @ W.t(), as nn.Linear does))
TRANSFORMER = [
    ("qkv/ffn-up",     (8 * 128, 768),  (768, 3072), False),
    ("ffn-down",       (8 * 128, 3072), (3072, 768), False),
    ("proj",           (4 * 512, 768),  (768, 768),  False),
    ("linear x@W.t()", (8 * 128, 768),  (3072, 768), True),
    ("attn q@k^T",     (12, 128, 64),   (12, 64, 128), False),
    ("attn p@v",       (12, 128, 128),  (12, 128, 64), False),
    # both batches broadcast (matmul is a composite over expand/reshape/bmm: Note [Composite ops])
    ("matmul bcast batch", (8, 1, 64, 64), (6, 64, 64), False),
]


def flops(a_shape, b_shape, transposed):
    *batch_a, m, k = a_shape
    batch_b = list(b_shape[:-2])
    n = b_shape[-2] if transposed else b_shape[-1]
    count = 2 * m * n * k
    width = max(len(batch_a), len(batch_b))  # the batch dims broadcast against each other
    batch_a, batch_b = [1] * (width - len(batch_a)) + batch_a, [1] * (width - len(batch_b)) + batch_b
    for da, db in zip(batch_a, batch_b):
        count *= max(da, db)
    return count


def main():
    args, suite = setup("gemm", __doc__, threads="all")
    sizes = [256, 512, 1024, 2048] + ([] if args.quick else [4096])
    cases = [("matmul %d" % s, (s, s), (s, s), False) for s in sizes] + TRANSFORMER
    for threads in thread_list(args):
        suite.set_threads(threads)
        for name, a_shape, b_shape, tb in cases:
            def make(m, a_shape=a_shape, b_shape=b_shape, tb=tb):
                a = rand(m, a_shape, suite.device)
                b = rand(m, b_shape, suite.device)
                if tb:
                    return lambda: a @ b.t()
                return lambda: a @ b

            fl = flops(a_shape, b_shape, tb)
            params = "%s@%s%s t=%d" % (
                "x".join(map(str, a_shape)), "x".join(map(str, b_shape)),
                ".T" if tb else "", threads)
            suite.bench(name, params, make, TARGET,
                        metrics=lambda t, fl=fl: {"GFLOP/s": fl / t / 1e9})
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
