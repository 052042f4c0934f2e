"""Scaled dot-product attention: F.scaled_dot_product_attention forward, and forward + backward.

Cases: B=4, H=8, E=64, T = 128, 512, 2048 (--quick: 128, 512), is_causal False and True, float32 and
bfloat16 (--dtypes), (B, H, T, E) contiguous inputs; 1 and 2 threads (--threads). torch runs its fused
CPU flash-attention kernel, pyctorch its own (csrc/aten/cpu/attention.c; bfloat16 computes in float32,
Note [Reduced-precision attention]). GFLOP/s counts 4*B*H*T*T*E for the forward and
2.5 times that for the backward (halved with is_causal). Target: candidate time / torch time <= 1.0.
"""
import sys

from _harness import setup, thread_list

TARGET = 1.0
B, H, E = 4, 8, 64


def flops(t, causal, backward):
    f = 4.0 * B * H * t * t * E * (3.5 if backward else 1.0)
    return f / 2 if causal else f


def forward(m, t, causal, dtype):
    g = m.Generator().manual_seed(0)
    q, k, v = (m.randn(B, H, t, E, generator=g).to(getattr(m, dtype)) for _ in range(3))
    sdpa = m.nn.functional.scaled_dot_product_attention

    def run():
        sdpa(q, k, v, is_causal=causal)
    return run


def forward_backward(m, t, causal, dtype):
    g = m.Generator().manual_seed(0)
    q, k, v = (m.randn(B, H, t, E, generator=g).to(getattr(m, dtype)).requires_grad_() for _ in range(3))
    go = m.randn(B, H, t, E, generator=g).to(getattr(m, dtype))
    sdpa = m.nn.functional.scaled_dot_product_attention

    def run():
        sdpa(q, k, v, is_causal=causal).backward(go)
        q.grad = k.grad = v.grad = None
    return run


def main():
    args, suite = setup("attention", __doc__, threads="1,2", extra_args=lambda p: p.add_argument(
        "--dtypes", default="float32,bfloat16", help="comma-separated dtypes (default: %(default)s)"))
    lengths = (128, 512) if args.quick else (128, 512, 2048)
    for n in thread_list(args):
        suite.set_threads(n)
        for dt in args.dtypes.split(","):
            for t in lengths:
                # the 2048 cases take seconds per call: fewer blocks
                kw = dict(repeat=3, min_block_s=0.0) if t >= 2048 else {}
                for causal in (False, True):
                    params = "T=%d causal=%d threads=%d" % (t, causal, n) + ("" if dt == "float32" else " " + dt)
                    suite.bench("sdpa fwd", params, lambda m, t=t, c=causal, d=dt: forward(m, t, c, d),
                                target=TARGET,
                                metrics=lambda s, t=t, c=causal: {"GFLOP/s": flops(t, c, False) / s / 1e9}, **kw)
                    suite.bench("sdpa fwd+bwd", params, lambda m, t=t, c=causal, d=dt: forward_backward(m, t, c, d),
                                target=TARGET,
                                metrics=lambda s, t=t, c=causal: {"GFLOP/s": flops(t, c, True) / s / 1e9}, **kw)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
