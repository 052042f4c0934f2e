"""conv2d, float32 and bfloat16, on ResNet-like layers (batch 8): forward alone, and forward + backward
(input, weight and bias gradients through autograd). bfloat16 is what autocast runs a convolution in on
the CPU (pyctorch: the bfloat16 GEMM with float32 accumulation where the CPU has AVX512-BF16, Note
[bfloat16 convolution] in csrc/aten/cpu/conv_engine.c; torch: oneDNN). GFLOP/s counts 2*N*O*(C/groups)*kh*kw*OH*OW per direction
(forward), three times that for forward + backward. Target: ratio <= 1.0 (torch runs oneDNN).

Cases: the 7x7/2 stem (3 -> 64 on 112x112), 64 -> 64 3x3 on 56x56, 128 -> 128 3x3 on 28x28,
256 -> 256 1x1 on 14x14 (a plain GEMM), a 3x3 depthwise (64 channels on 56x56), and a stride-2
transposed 3x3 (64 -> 32 on 28x28, a decoder layer). --quick shrinks the batch to 2.
Small images (float32, batch 8 always): ResNet-18's layers on 32x32 inputs (timm and CIFAR training), the
stem at 32x32 and the 3x3 layers at 8x8, 4x4, 2x2 and 1x1 (Note [Batch columns], Note [Live taps] in
csrc/aten/cpu).
"""
import sys

from _harness import setup, thread_list

TARGET = 1.0

# name, C, O, H, kernel, stride, padding, groups, transposed
CASES = [
    ("stem 7x7/2", 3, 64, 112, 7, 2, 3, 1, False),
    ("3x3 64", 64, 64, 56, 3, 1, 1, 1, False),
    ("3x3 128", 128, 128, 28, 3, 1, 1, 1, False),
    ("1x1 256", 256, 256, 14, 1, 1, 0, 1, False),
    ("dw 3x3 64", 64, 64, 56, 3, 1, 1, 64, False),
    ("convT 3x3/2", 64, 32, 28, 3, 2, 1, 1, True),
]


# ResNet-18 on 32x32 inputs, batch 8: name, C, O, H, kernel, stride, padding
SMALL_CASES = [
    ("r18@32 stem 7x7/2", 3, 64, 32, 7, 2, 3),
    ("r18@32 3x3 8x8", 64, 64, 8, 3, 1, 1),
    ("r18@32 3x3 4x4", 128, 128, 4, 3, 1, 1),
    ("r18@32 3x3 2x2", 256, 256, 2, 3, 1, 1),
    ("r18@32 3x3/2 2x2->1x1", 256, 512, 2, 3, 2, 1),
    ("r18@32 3x3 1x1", 512, 512, 1, 3, 1, 1),
]


def out_size(h, k, s, p, transposed):
    return (h - 1) * s - 2 * p + k + (s - 1) if transposed else (h + 2 * p - k) // s + 1


def make_case(m, n, c, o, h, k, s, p, g, transposed, backward, dtype):
    gen = m.Generator().manual_seed(0)
    dt = getattr(m, dtype)
    x = m.randn(n, c, h, h, generator=gen).to(dt)
    w = (m.randn(*((c, o // g) if transposed else (o, c // g)), k, k, generator=gen) * 0.1).to(dt)
    b = m.randn(o, generator=gen).to(dt)
    F = m.nn.functional
    if transposed:
        def fn(x, w, b):
            return F.conv_transpose2d(x, w, b, s, p, s - 1, g)
    else:
        def fn(x, w, b):
            return F.conv2d(x, w, b, s, p, 1, g)
    if not backward:
        return lambda: fn(x, w, b)
    x.requires_grad_()
    w.requires_grad_()
    b.requires_grad_()
    go = m.randn(*fn(x, w, b).shape, generator=gen).to(dt)

    def run():
        fn(x, w, b).backward(go)
        x.grad = w.grad = b.grad = None
    return run


def main():
    args, suite = setup("conv", __doc__, threads="1,2")
    n = 2 if args.quick else 8
    for threads in thread_list(args):
        suite.set_threads(threads)
        for dtype in ("float32", "bfloat16"):
            for backward in (False, True):
                for name, c, o, h, k, s, p, g, tr in CASES:
                    oh = out_size(h, k, s, p, tr)
                    small = h if tr else oh   # positions of the ordinary convolution's output side
                    fl = 2.0 * n * (c if tr else o) * ((o if tr else c) // g) * k * k * small * small
                    fl *= 3 if backward else 1
                    params = "N=%d %dx%d %d->%d t=%d" % (n, h, h, c, o, threads)
                    label = name + (" fwd+bwd" if backward else " fwd") + ("" if dtype == "float32" else " bf16")
                    suite.bench(label, params,
                                lambda m, a=(n, c, o, h, k, s, p, g, tr, backward, dtype): make_case(m, *a), TARGET,
                                metrics=lambda t, fl=fl: {"GFLOP/s": fl / t / 1e9})
        for backward in (False, True):
            for name, c, o, h, k, s, p in SMALL_CASES:
                oh = out_size(h, k, s, p, False)
                fl = 2.0 * 8 * o * c * k * k * oh * oh * (3 if backward else 1)
                suite.bench(name + (" fwd+bwd" if backward else " fwd"), "N=8 %dx%d %d->%d t=%d" % (h, h, c, o, threads),
                            lambda m, a=(8, c, o, h, k, s, p, 1, False, backward, "float32"): make_case(m, *a),
                            TARGET, metrics=lambda t, fl=fl: {"GFLOP/s": fl / t / 1e9})
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
