"""Train a small CNN on generated images of six pattern classes, loaded by the multi-process DataLoader.

Nothing to download: image i of a split is drawn in the dataset's __getitem__ from a generator seeded with
(split seed, i), so every index always gives the same picture: horizontal stripes, vertical stripes, a
disk, a ring, a cross or a checkerboard, at a random position, scale and phase, in two random colours, with
Gaussian noise. The training split adds a random augmentation with the global torch RNG (horizontal flip
and a cyclic shift of up to 3 pixels), which in worker processes is seeded per worker by the DataLoader.

    python examples/train_cnn.py                      # pyctorch, 2 loader workers
    python examples/train_cnn.py --framework torch    # the very same code on real torch, for comparison

Prints a progress bar (loss, images/s) per epoch, the validation loss and accuracy after each epoch, and at
the end the final validation accuracy, images/s and wall time; draws the training and validation loss curves
as a PNG with matplotlib (skipped, with a notice, where matplotlib is not installed).
"""
import importlib
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _framework import demo_parser, load_framework  # noqa: E402
from _loss_plot import save_loss_plot  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
CLASSES = ("horizontal stripes", "vertical stripes", "disk", "ring", "cross", "checkerboard")


def parse_args(argv=None):
    ap = demo_parser(__doc__)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--train-size", type=int, default=6000, help="images per training epoch")
    ap.add_argument("--val-size", type=int, default=1000)
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--num-workers", type=int, default=2, help="DataLoader worker processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", default=DEFAULT_OUT, help="where cnn_metrics.json and cnn_loss.png are written")
    ap.add_argument("--no-bar", action="store_true", help="no progress bar")
    return ap, ap.parse_args(argv)


class Patterns:
    """A map-style dataset of generated 3 x size x size images and their class (balanced: i % 6)."""

    def __init__(self, framework, n, size, seed, augment):
        self.framework, self.n, self.size, self.seed, self.augment = framework, n, size, seed, augment

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(f"index {i} out of range for {self.n} images")
        torch = importlib.import_module(self.framework)
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        s, label = self.size, i % len(CLASSES)
        p = torch.rand(6, generator=g).tolist()               # position, scale, phase parameters
        coords = torch.arange(s, dtype=torch.float32)
        yy, xx = coords.view(s, 1), coords.view(1, s)          # broadcast to (s, s)
        cy, cx = s * (0.3 + 0.4 * p[0]), s * (0.3 + 0.4 * p[1])
        if label == 0 or label == 1:                           # stripes across y (horizontal) or x (vertical)
            period = s * (0.12 + 0.15 * p[2])
            t = (yy if label == 0 else xx).expand(s, s)
            mask = torch.sin(t * (2 * math.pi / period) + 2 * math.pi * p[3]) > 0
        elif label == 2 or label == 3:                         # disk, ring
            r = s * (0.15 + 0.15 * p[2])
            d = ((yy - cy) ** 2 + (xx - cx) ** 2).sqrt()
            mask = d < r if label == 2 else (d - r).abs() < 0.06 * s + 0.5
        elif label == 4:                                       # cross
            w = s * (0.05 + 0.05 * p[2])
            mask = ((yy - cy).abs() < w) | ((xx - cx).abs() < w)
        else:                                                  # checkerboard
            cell = s * (0.1 + 0.1 * p[2])
            mask = (torch.floor((yy + s * p[3]) / cell) + torch.floor((xx + s * p[4]) / cell)) % 2 == 0
        fg = torch.rand(3, 1, 1, generator=g)
        bg = (fg + 0.3 + 0.4 * p[5]) % 1.0                    # a colour at least 0.3 away in every channel
        img = bg + (fg - bg) * mask.float() + 0.15 * torch.randn(3, s, s, generator=g)  # (3, s, s)
        if self.augment:                                       # global RNG: per worker seeding
            if torch.rand(1).item() < 0.5:
                img = img.flip(-1)
            shift = torch.randint(-3, 4, (2,)).tolist()
            img = img.roll(shifts=(shift[0], shift[1]), dims=(1, 2))
        return img, label


def make_net(torch, n_classes):
    nn = torch.nn

    def stage(c_in, c_out):
        return [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU()]

    return nn.Sequential(*stage(3, 16), nn.MaxPool2d(2),       # (B, 16, s/2, s/2)
                         *stage(16, 32), nn.MaxPool2d(2),      # (B, 32, s/4, s/4)
                         *stage(32, 64),                       # (B, 64, s/4, s/4)
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, n_classes))


def evaluate(torch, model, loader, device):
    """(mean cross-entropy loss, accuracy) over the loader."""
    model.eval()
    correct = total = 0
    loss_sum = 0.0
    with torch.no_grad():
        for x, y in loader:
            logits, y = model(x.to(device)), y.to(device)
            loss_sum += torch.nn.functional.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
            total += y.numel()
    model.train()
    return loss_sum / total, correct / total


def main(argv=None):
    wall0 = time.perf_counter()
    ap, args = parse_args(argv)
    torch = load_framework(ap, args)
    DataLoader = torch.utils.data.DataLoader

    torch.manual_seed(args.seed)
    train_set = Patterns(args.framework, args.train_size, args.image_size, seed=2 * args.seed + 1, augment=True)
    val_set = Patterns(args.framework, args.val_size, args.image_size, seed=2 * args.seed + 2, augment=False)
    workers = dict(num_workers=args.num_workers, persistent_workers=args.num_workers > 0)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True, **workers)
    val_loader = DataLoader(val_set, batch_size=256, shuffle=False, **workers)
    model = make_net(torch, len(CLASSES)).to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    total_steps = args.epochs * len(train_loader)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=max(1, total_steps))
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args.framework}: CNN with {n_params:,} parameters on {args.train_size} generated "
          f"{args.image_size}x{args.image_size} images of {len(CLASSES)} classes, {args.num_workers} loader "
          f"workers, {torch.get_num_threads()} threads")

    losses, val_acc, val_loss, images, train_time = [], [], [], 0, 0.0
    if not args.no_bar:
        from tqdm import tqdm
    for epoch in range(1, args.epochs + 1):
        bar = None if args.no_bar else tqdm(total=len(train_loader), desc=f"epoch {epoch}/{args.epochs}",
                                            unit="batch", dynamic_ncols=True, file=sys.stdout)
        t0 = time.perf_counter()
        for x, y in train_loader:
            x, y = x.to(args.device), y.to(args.device)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            images += x.shape[0]
            if bar is not None:
                rate = images / (train_time + time.perf_counter() - t0)
                bar.set_postfix(loss=f"{losses[-1]:.3f}", img_s=f"{rate:,.0f}", refresh=False)
                bar.update(1)
        train_time += time.perf_counter() - t0
        if bar is not None:
            bar.close()
        loss_value, acc = evaluate(torch, model, val_loader, args.device)
        val_loss.append(loss_value)
        val_acc.append(acc)
        print(f"epoch {epoch}: last loss {losses[-1]:.4f}, validation loss {val_loss[-1]:.4f}, "
              f"validation accuracy {val_acc[-1] * 100:.1f}%")

    wall = time.perf_counter() - wall0
    images_per_s = images / train_time if train_time else float("nan")
    os.makedirs(args.out_dir, exist_ok=True)
    metrics_path = os.path.join(args.out_dir, "cnn_metrics.json")
    png_path = os.path.join(args.out_dir, "cnn_loss.png")
    steps_per_epoch = len(losses) // args.epochs
    curves = [("train (per batch)", list(range(1, len(losses) + 1)), losses),
              ("val", [steps_per_epoch * e for e in range(1, args.epochs + 1)], val_loss)]
    drawn = save_loss_plot(png_path, curves, title=f"CNN on generated patterns ({args.framework})")
    with open(metrics_path, "w") as f:
        json.dump({"framework": args.framework, "losses": losses, "val_loss": val_loss, "val_acc": val_acc,
                   "images_per_s": images_per_s, "wall_s": wall, "png": png_path if drawn else None,
                   "config": vars(args)}, f)
    print(f"final validation accuracy {val_acc[-1] * 100:.1f}% | {images_per_s:,.0f} images/s (training, "
          f"loading included) | wall {wall:.1f} s")
    if drawn:
        print(f"loss curve: {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
