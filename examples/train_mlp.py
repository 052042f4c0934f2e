"""A real (small) training run on pyctorch: a 2-layer MLP classifying a generated
3-arm spiral, trained with minibatch SGD and hand-written backpropagation (autograd is
the next milestone; this script switches to it once it lands). Prints a progress bar
with loss and samples/s, then the final accuracy and timing.

    python examples/train_mlp.py [--steps 400] [--hidden 256] [--batch 256] [--framework torch]

`--framework torch` runs the very same code on real torch for comparison.
"""
import argparse
import math
import sys
import time


def progress(step, total, loss, rate, width=30):
    done = int(width * step / total)
    bar = "#" * done + "-" * (width - done)
    sys.stdout.write(f"\r[{bar}] {step:4d}/{total} loss {loss:.4f} {rate:,.0f} samples/s")
    sys.stdout.flush()


def spiral(torch, n_per_class, classes, generator_seed=0):
    """3 interleaved spiral arms with noise, as float32 features and int64 labels."""
    torch.manual_seed(generator_seed)
    xs, ys = [], []
    for c in range(classes):
        r = torch.linspace(0.05, 1.0, n_per_class)
        theta = torch.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + torch.randn(n_per_class) * 0.2
        xs.append(torch.stack([r * torch.sin(theta), r * torch.cos(theta)], dim=1))
        ys.append(torch.full((n_per_class,), c, dtype=torch.int64))
    return torch.cat(xs), torch.cat(ys)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--framework", choices=["pyctorch", "torch"], default="pyctorch")
    args = ap.parse_args()
    if args.framework == "torch":
        import torch
    else:
        import pyctorch as torch

    classes, n = 3, 2000
    X, Y = spiral(torch, n, classes)
    N = X.shape[0]
    torch.manual_seed(1)
    W1 = torch.randn(2, args.hidden) * math.sqrt(2.0 / 2)
    b1 = torch.zeros(args.hidden)
    W2 = torch.randn(args.hidden, classes) * math.sqrt(1.0 / args.hidden)
    b2 = torch.zeros(classes)

    print(f"{args.framework}: MLP 2-{args.hidden}-{classes} on {N} spiral points, batch {args.batch}, {args.steps} steps")
    start = time.perf_counter()
    seen = 0
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, N, (args.batch,))
        x, y = X[idx], Y[idx]
        # forward
        pre = x @ W1 + b1
        h = pre.clamp(min=0)
        logits = h @ W2 + b2
        logp = torch.log_softmax(logits, dim=1)
        loss = -logp.gather(1, y.unsqueeze(1)).mean()
        # backward (softmax cross-entropy, linear layers, ReLU)
        g = logp.exp()
        g[torch.arange(args.batch), y] -= 1
        g /= args.batch
        gW2 = h.t() @ g
        gb2 = g.sum(0)
        gh = g @ W2.t()
        gpre = gh * (pre > 0)
        gW1 = x.t() @ gpre
        gb1 = gpre.sum(0)
        for p, gp in ((W1, gW1), (b1, gb1), (W2, gW2), (b2, gb2)):
            p.sub_(gp, alpha=args.lr)
        seen += args.batch
        if step % 10 == 0 or step == args.steps:
            progress(step, args.steps, loss.item(), seen / (time.perf_counter() - start))
    elapsed = time.perf_counter() - start
    pred = (X @ W1 + b1).clamp(min=0) @ W2 + b2
    acc = (pred.argmax(1) == Y).float().mean().item()
    print(f"\nfinal loss {loss.item():.4f}  train accuracy {acc * 100:.1f}%  "
          f"{elapsed:.2f} s  {seen / elapsed:,.0f} samples/s")


if __name__ == "__main__":
    main()
