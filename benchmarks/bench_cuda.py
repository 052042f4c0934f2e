"""The CUDA backend against torch on the same GPU, in one process (every timing synchronizes the device).

Targets (issue 9): a launch-bound loop of 1-element adds <= 0.5x torch; bf16 and fp32/TF32 GEMM <= 1.05x; memory-bound
pointwise and reductions on 256 MB <= 1.0x (and >= 85% of the copy bandwidth measured here); softmax, layer_norm and
cross_entropy forward+backward <= 1.0x; conv2d and max_pool2d forward+backward (issue 17: im2col + GEMM and a gather
backward, no cuDNN: reported, no target yet); gather, index_select and scatter_add (issue 17: reported, no target
yet); scaled_dot_product_attention forward+backward (bf16, causal) <= 1.1x; a small
GPT training step (bf16 autocast, AdamW) tokens/s >= 1.0x. Ops without a CUDA kernel yet run the CPU fallback (Note
[CUDA fallback]): their ratios say how far they are. --quick shrinks the sizes. Without a GPU the suite is skipped.
"""
import sys

from _harness import setup

MB = 1024 * 1024


def _sizes(quick):
    return dict(gemm=[1024] if quick else [1024, 4096, 8192], big=(16 if quick else 64) * MB // 4,
                rows=(1024 if quick else 8192), seq=(256 if quick else 1024))


def _on(m, shape, dtype="float32", grad=False):
    t = m.randn(*shape, device="cuda", dtype=getattr(m, dtype))
    return t.requires_grad_() if grad else t


def _fwd_bwd(f):
    def run(x, *rest):
        out = f(x, *rest)
        out.float().sum().backward()
        x.grad = None
    return run


def _gpt_step(m, seq):
    m.manual_seed(0)
    d, heads, vocab, batch = 256, 4, 1024, 4
    layer = m.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
    model = m.nn.Sequential(m.nn.Embedding(vocab, d), m.nn.TransformerEncoder(layer, 2), m.nn.Linear(d, vocab)).cuda()
    opt = m.optim.AdamW(model.parameters(), lr=1e-4)
    x = m.randint(0, vocab, (batch, seq), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with m.autocast("cuda", dtype=m.bfloat16):
            loss = m.nn.functional.cross_entropy(model(x).float().reshape(-1, vocab), x.reshape(-1))
        loss.backward()
        opt.step()
    return step


def main():
    args, suite = setup("cuda", __doc__, extra_args=lambda p: p.set_defaults(device="cuda"))
    s = _sizes(args.quick)
    one = lambda m: (lambda a: (lambda: a + a))(m.ones(1, device="cuda"))  # noqa: E731
    suite.bench("add 1 element (host overhead)", "launch-bound", one, target=0.5)
    for n in s["gemm"]:
        for dt in ("bfloat16", "float32"):
            flops = 2.0 * n ** 3
            suite.bench(f"matmul {dt} {n}", f"{n}x{n}x{n}",
                        lambda m, n=n, dt=dt: (lambda a, b: (lambda: a @ b))(_on(m, (n, n), dt), _on(m, (n, n), dt)),
                        target=1.05, metrics=lambda t, f=flops: {"TFLOP/s": f / t / 1e12})
    big = s["big"]
    gbs = lambda nbytes: (lambda t: {"GB/s": nbytes / t / 1e9})  # noqa: E731
    suite.bench("copy", f"{big * 4 // MB} MB", lambda m: (lambda a: (lambda: a.clone()))(_on(m, (big,))),
                metrics=gbs(8 * big))
    suite.bench("a * b + 1", f"{big * 4 // MB} MB",
                lambda m: (lambda a, b: (lambda: a * b + 1))(_on(m, (big,)), _on(m, (big,))), target=1.0,
                metrics=gbs(12 * big))
    suite.bench("sum", f"{big * 4 // MB} MB", lambda m: (lambda a: (lambda: a.sum()))(_on(m, (big,))), target=1.0,
                metrics=gbs(4 * big))
    rows = s["rows"]
    suite.bench("softmax fwd+bwd", f"{rows}x1024", lambda m: (lambda x: (lambda: _fwd_bwd(
        lambda t: m.softmax(t, -1))(x)))(_on(m, (rows, 1024), grad=True)), target=1.0)
    suite.bench("layer_norm fwd+bwd", f"{rows}x1024", lambda m: (lambda x: (lambda: _fwd_bwd(
        lambda t: m.nn.functional.layer_norm(t, (1024,)))(x)))(_on(m, (rows, 1024), grad=True)), target=1.0)
    suite.bench("cross_entropy fwd+bwd", f"{rows}x32000", lambda m: (lambda x, y: (lambda: _fwd_bwd(
        lambda t: m.nn.functional.cross_entropy(t, y))(x)))(_on(m, (rows // 8, 32000), grad=True),
                                                      m.randint(0, 32000, (rows // 8,), device="cuda")), target=1.0)
    batch = 8 if args.quick else 32
    suite.bench("conv2d 3x3 fwd+bwd", f"{batch}x64x56x56", lambda m: (lambda x, w: (lambda: _fwd_bwd(
        lambda t, k: m.nn.functional.conv2d(t, k, padding=1))(x, w)))(_on(m, (batch, 64, 56, 56), grad=True),
                                                                  _on(m, (64, 64, 3, 3), grad=True)))
    suite.bench("max_pool2d 3x3/2 fwd+bwd", f"{batch}x64x112x112", lambda m: (lambda x: (lambda: _fwd_bwd(
        lambda t: m.nn.functional.max_pool2d(t, 3, 2, 1))(x)))(_on(m, (batch, 64, 112, 112), grad=True)))
    # the index family (Note [Device indexing]): gather and index_select forward+backward (their backward is a
    # scatter_add / index_add in the CPU's order, no atomics), and a 1-d scatter_add with few destinations (atomics)
    n_idx = rows * 64
    suite.bench("gather fwd+bwd", f"{rows}x1024 -> {rows}x64", lambda m: (lambda x, i: (lambda: _fwd_bwd(
        lambda t, j: m.gather(t, 1, j))(x, i)))(_on(m, (rows, 1024), grad=True),
                                               m.randint(0, 1024, (rows, 64), device="cuda")))
    suite.bench("index_select fwd+bwd", f"32000x1024[{rows}]", lambda m: (lambda x, i: (lambda: _fwd_bwd(
        lambda t, j: m.index_select(t, 0, j))(x, i)))(_on(m, (32000, 1024), grad=True),
                                                     m.randint(0, 32000, (rows,), device="cuda")))
    suite.bench("scatter_add 2-d", f"{rows}x1024 <- {rows}x1024", lambda m: (lambda x, i, v: (lambda: x.scatter_add(
        1, i, v)))(_on(m, (rows, 1024)), m.randint(0, 1024, (rows, 1024), device="cuda"), _on(m, (rows, 1024))))
    suite.bench("scatter_add 1-d (1024 bins)", f"{n_idx} values", lambda m: (lambda x, i, v: (lambda: x.scatter_add(
        0, i, v)))(_on(m, (1024,)), m.randint(0, 1024, (n_idx,), device="cuda"), _on(m, (n_idx,))))
    seq = s["seq"]
    suite.bench("sdpa causal bf16 fwd+bwd", f"8x16x{seq}x64", lambda m: (lambda q, k, v: (lambda: _fwd_bwd(
        lambda a, b, c: m.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True))(q, k, v)))(
        *(_on(m, (8, 16, seq, 64), "bfloat16", grad=True) for _ in range(3))), target=1.1)
    suite.bench("GPT step (bf16 autocast, AdamW)", f"4x{seq} tokens", lambda m: _gpt_step(m, seq),
                number=2, repeat=3, metrics=lambda t: {"tokens/s": 4 * seq / t})
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
