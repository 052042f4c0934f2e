"""The demo's training steps (examples/train_gpt.py, examples/train_cnn.py), pyctorch against torch in one
process, with the demo's default sizes and the demo's own code (model, batch sampling, learning-rate
update, gradient clipping, AdamW step, loss.item()).

char GPT: 2 layers, width 128, 4 heads, context 64, batch 32 (2048 tokens per step), vocabulary of the
stdlib text (96); fp32, and bf16 autocast where the candidate has torch.autocast.
CNN: 3 conv/bn/relu stages on 64 generated 3x32x32 images per batch (the batch is drawn once: the loader
is not timed here). Target: the candidate's tokens/s >= 1.2x torch's, i.e. ratio <= 0.83.
"""
import os
import sys

from _harness import REPO_ROOT, setup, thread_list

sys.path.insert(0, os.path.join(REPO_ROOT, "examples"))
import train_cnn  # noqa: E402
import train_gpt  # noqa: E402

TARGET = 1 / 1.2
GPT_CFG = dict(n_layer=2, n_head=4, n_embd=128, block_size=64, batch_size=32, dropout=0.0, lr=3e-3,
               weight_decay=0.1, grad_clip=1.0, seed=1337)
_TEXT = train_gpt.load_stdlib_text(400_000)


def gpt_step(m, autocast=None):
    cfg = dict(GPT_CFG)
    vocab, data = train_gpt.encode_corpus(m, _TEXT)
    cfg["vocab_size"] = len(vocab)
    m.manual_seed(cfg["seed"])
    model = train_gpt.make_gpt(m)(cfg)
    opt = train_gpt.configure_optimizer(m, model, cfg)
    gen = m.Generator().manual_seed(cfg["seed"])
    ctx = train_gpt.autocast_context(m, autocast, "cpu")

    def run():
        x, y = train_gpt.get_batch(m, data, cfg["batch_size"], cfg["block_size"], gen, "cpu")
        train_gpt.train_step(m, model, opt, x, y, 1e-3, cfg["grad_clip"], ctx)
    return run


def cnn_step(m, batch=64):
    m.manual_seed(0)
    ds = train_cnn.Patterns(m.__name__, batch, 32, seed=1, augment=True)
    x = m.stack([ds[i][0] for i in range(batch)])
    y = m.tensor([ds[i][1] for i in range(batch)])
    model = train_cnn.make_net(m, len(train_cnn.CLASSES))
    opt = m.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

    def run():
        loss = m.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()
    return run


def main():
    args, suite = setup("demo", __doc__, threads="1,2")
    tokens = GPT_CFG["batch_size"] * GPT_CFG["block_size"]
    per_s = lambda n: (lambda s: {"per_s": n / s})  # noqa: E731
    modes = [None] + (["bf16"] if all(hasattr(m, "autocast") for m in suite.modules()) else [])
    if len(modes) == 1:
        print("   note: %s has no torch.autocast: the bf16 case is left out" % args.candidate)
    for n in thread_list(args):
        suite.set_threads(n)
        for mode in modes:
            suite.bench("demo GPT step", "%s 2x128 T=64 B=32 thr=%d" % (mode or "fp32", n),
                        lambda m: gpt_step(m, mode), target=TARGET, metrics=per_s(tokens))
        suite.bench("demo CNN step", "B=64 3x32x32 thr=%d" % n, cnn_step, target=TARGET, metrics=per_s(64))
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
