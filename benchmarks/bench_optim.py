"""Optimizer steps over ~10M float32 parameters (10 tensors of 1M elements and 100 of 1000).

pyctorch's default step of Adam, AdamW and SGD is one fused C call per param group
(csrc/aten/cpu/optim.c: every element read and written once, OpenMP over chunks). It is timed
against torch's default step on CPU (the single-tensor for-loop: ~10 passes over memory), torch's
foreach=True step and torch's fused=True step (its own one-pass C++ kernel). Target: candidate time
/ torch default time <= 0.7; the foreach and fused rows are reported for reference.
"""
import sys

from _harness import setup, thread_list

TARGET = 0.7
BIG, SMALL = (10, 1 << 20), (100, 1000)


def step_case(cls, kwargs, torch_mode):
    """make(module): a zero-argument step of optimizer `cls` over fresh params with gradients set."""
    def make(m):
        g = m.Generator().manual_seed(0)
        sizes = [BIG[1]] * BIG[0] + [SMALL[1]] * SMALL[0]
        params = [m.randn(n, generator=g).requires_grad_() for n in sizes]
        for p in params:
            p.grad = m.randn(p.shape[0], generator=g) * 0.01
        kw = dict(kwargs)
        if m.__name__ == "torch" and torch_mode != "default":
            kw[torch_mode] = True
        opt = getattr(m.optim, cls)(params, **kw)
        opt.step()  # the state exists before timing
        return opt.step
    return make


def main():
    args, suite = setup("optim", __doc__, threads="1,2")
    n_params = BIG[0] * BIG[1] + SMALL[0] * SMALL[1]
    cases = [("AdamW", dict(lr=1e-3, weight_decay=0.01)), ("Adam", dict(lr=1e-3)),
             ("SGD", dict(lr=1e-3, momentum=0.9))]
    for n in thread_list(args):
        suite.set_threads(n)
        for cls, kw in cases:
            modes = ("default", "foreach", "fused")
            for mode in modes:
                suite.bench("%s step" % cls, "%.1fM params torch=%s thr=%d" % (n_params / 1e6, mode, n),
                            step_case(cls, kw, mode), target=TARGET if mode == "default" else None,
                            metrics=lambda s: {"Mparam/s": n_params / s / 1e6})
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
