"""Pooling, padding and resampling on ResNet-like shapes, forward and forward + backward.

Cases (float32, NCHW):
  * max_pool2d 3x3 stride 2 padding 1 and avg_pool2d 3x3 stride 2 padding 1 on
    (8, 64, 112, 112) (the ResNet stem pool);
  * adaptive_avg_pool2d and adaptive_max_pool2d to 1x1 on (8, 512, 7, 7) (the ResNet head);
  * F.interpolate(scale_factor=2, mode="bilinear") on (8, 64, 56, 56);
  * F.pad(..., (3, 3, 3, 3), mode="reflect") on (8, 64, 112, 112).
"fwd" times the functional call; "fwd+bwd" also runs backward from a fixed gradient and
drops the input's .grad (no accumulation). Threads 1 and 2 by default. Target: candidate
time / torch time <= 1.0.
"""
import sys

from _harness import setup, thread_list

TARGET = 1.0


def _input(m, shape, device, grad):
    g = m.Generator().manual_seed(0)
    x = m.randn(*shape, generator=g).to(device)
    return x.requires_grad_() if grad else x


def case(m, fn, shape, device, backward):
    x = _input(m, shape, device, backward)
    F = m.nn.functional
    if not backward:
        return lambda: fn(F, x)
    with m.no_grad():
        gout = m.ones_like(fn(F, x.detach())) * 0.5

    def run():
        fn(F, x).backward(gout)
        x.grad = None
    return run


CASES = [
    ("max_pool2d", "3x3 s2 p1 8x64x112x112", lambda F, x: F.max_pool2d(x, 3, 2, 1), (8, 64, 112, 112)),
    ("avg_pool2d", "3x3 s2 p1 8x64x112x112", lambda F, x: F.avg_pool2d(x, 3, 2, 1), (8, 64, 112, 112)),
    ("adaptive_avg_pool2d", "->1x1 8x512x7x7", lambda F, x: F.adaptive_avg_pool2d(x, 1), (8, 512, 7, 7)),
    ("adaptive_max_pool2d", "->1x1 8x512x7x7", lambda F, x: F.adaptive_max_pool2d(x, 1), (8, 512, 7, 7)),
    ("bilinear x2", "8x64x56x56", lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"), (8, 64, 56, 56)),
    ("reflect pad", "(3,3,3,3) 8x64x112x112", lambda F, x: F.pad(x, (3, 3, 3, 3), mode="reflect"), (8, 64, 112, 112)),
]
QUICK_SHAPES = {(8, 64, 112, 112): (2, 16, 56, 56), (8, 512, 7, 7): (8, 128, 7, 7), (8, 64, 56, 56): (2, 16, 28, 28)}


def main():
    args, suite = setup("pool", __doc__, threads="1,2")
    for n in thread_list(args):
        suite.set_threads(n)
        for name, params, fn, shape in CASES:
            if args.quick:
                shape = QUICK_SHAPES[shape]
            for backward in (False, True):
                suite.bench(name + (" fwd+bwd" if backward else " fwd"), "%s threads=%d" % (params, n),
                            lambda m, fn=fn, shape=shape, backward=backward: case(m, fn, shape, suite.device, backward),
                            target=TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
