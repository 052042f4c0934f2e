"""Train a small character-level GPT (nanoGPT-like) on the Python standard library's own source code.

Nothing to download: the text is the sorted *.py files next to os.py, concatenated (ASCII only) up to
--data-chars characters; characters are the tokens, the last 10% is the validation split. The model is
token + position embeddings, pre-LayerNorm blocks of causal self-attention
(F.scaled_dot_product_attention) and a GELU MLP, a tied output head; AdamW with weight-decay groups,
cosine learning rate with linear warmup, gradient clipping.

    python examples/train_gpt.py                      # pyctorch, defaults sized for ~1-2 min on 2 CPU cores
    python examples/train_gpt.py --framework torch    # the very same code on real torch, for comparison
    python examples/train_gpt.py --steps 2000 --resume  # continue the saved run up to step 2000

It shows a progress bar (loss, tokens/s), evaluates train and validation loss every --eval-interval steps,
saves a checkpoint (model, optimizer, step, config, RNG states, loss history) to --out-dir at every
evaluation, at the end and on Ctrl-C, samples --sample-chars characters at the end, and draws the training
and validation loss curves as a PNG with matplotlib (skipped, with a notice, where matplotlib is not
installed). --resume continues a saved run at its step with the losses an uninterrupted run would have had;
it keeps the checkpoint's model and training hyperparameters, --steps sets the new total.
"""
import contextlib
import glob
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loss_plot import save_loss_plot  # noqa: E402
from _framework import demo_parser, load_framework  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
# Options that define the run: on --resume they come from the checkpoint (a resumed run is the same run).
RESUMED = ("n_layer", "n_head", "n_embd", "block_size", "dropout", "batch_size", "lr", "min_lr", "warmup_steps",
           "lr_decay_steps", "weight_decay", "grad_clip", "seed", "data_chars", "autocast")


def parse_args(argv=None):
    ap = demo_parser(__doc__)
    ap.add_argument("--autocast", choices=["bf16"], default=None,
                    help="run forward and loss under torch.autocast with bfloat16")
    ap.add_argument("--steps", type=int, default=800, help="total optimizer steps")
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=128)
    ap.add_argument("--block-size", type=int, default=64, help="context length in characters")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    ap.add_argument("--min-lr", type=float, default=None, help="final learning rate (default: lr / 10)")
    ap.add_argument("--warmup-steps", type=int, default=30)
    ap.add_argument("--lr-decay-steps", type=int, default=None, help="cosine decay length (default: --steps)")
    ap.add_argument("--weight-decay", type=float, default=0.1, help="on matrices and embeddings only")
    ap.add_argument("--grad-clip", type=float, default=1.0, help="max gradient norm (0: off)")
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--data-chars", type=int, default=2_000_000, help="characters of stdlib source to use")
    ap.add_argument("--eval-interval", type=int, default=100)
    ap.add_argument("--eval-iters", type=int, default=8, help="batches per loss estimate")
    ap.add_argument("--sample-chars", type=int, default=300, help="characters generated at the end")
    ap.add_argument("--prompt", default="def ")
    ap.add_argument("--out-dir", default=DEFAULT_OUT)
    ap.add_argument("--resume", action="store_true", help="continue from OUT_DIR/gpt.pt")
    ap.add_argument("--no-bar", action="store_true", help="no progress bar (logs)")
    args = ap.parse_args(argv)
    return ap, args


# ---------------------------------------------------------------------------------------------- data
def load_stdlib_text(max_chars):
    """The sorted top-level *.py files of the standard library, ASCII only, concatenated to max_chars."""
    root = os.path.dirname(os.__file__)
    parts, total = [], 0
    for path in sorted(glob.glob(os.path.join(root, "*.py"))):
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "ignore").encode("ascii", "ignore")
        parts.append(text[:max_chars - total])
        total += len(parts[-1])
        if total >= max_chars:
            break
    return b"".join(parts)


def encode_corpus(torch, raw):
    """(vocabulary as a str, int64 tensor of token ids) for ASCII bytes raw."""
    chars = sorted(set(raw))
    table = bytearray(256)
    for i, c in enumerate(chars):
        table[c] = i
    ids = bytearray(raw.translate(bytes(table)))
    return "".join(map(chr, chars)), torch.frombuffer(ids, dtype=torch.uint8).long()


def get_batch(torch, data, batch_size, block_size, generator, device):
    """batch_size random windows of block_size + 1 tokens: inputs and next-token targets, (B, T) each."""
    ix = torch.randint(len(data) - block_size - 1, (batch_size,), generator=generator)  # (B,)
    chunk = data[ix.unsqueeze(1) + torch.arange(block_size + 1)]                       # (B, T+1)
    x, y = chunk[:, :-1], chunk[:, 1:]
    return x.to(device), y.to(device)


# --------------------------------------------------------------------------------------------- model
def make_gpt(torch):
    """The GPT class for the framework module torch (pyctorch or torch)."""
    nn, F = torch.nn, torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.n_head, self.n_embd, self.dropout = cfg["n_head"], cfg["n_embd"], cfg["dropout"]
            self.c_attn = nn.Linear(self.n_embd, 3 * self.n_embd)
            self.c_proj = nn.Linear(self.n_embd, self.n_embd)
            self.resid_dropout = nn.Dropout(self.dropout)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(C, dim=2)                              # (B, T, C) each
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)       # (B, nh, T, hs)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                               is_causal=True)                    # (B, nh, T, hs)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.c_fc = nn.Linear(cfg["n_embd"], 4 * cfg["n_embd"])
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * cfg["n_embd"], cfg["n_embd"])
            self.dropout = nn.Dropout(cfg["dropout"])

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.ln_1 = nn.LayerNorm(cfg["n_embd"])
            self.attn = CausalSelfAttention(cfg)
            self.ln_2 = nn.LayerNorm(cfg["n_embd"])
            self.mlp = MLP(cfg)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            if cfg["n_embd"] % cfg["n_head"]:
                raise ValueError(f"--n-embd {cfg['n_embd']} is not a multiple of --n-head {cfg['n_head']}")
            self.block_size = cfg["block_size"]
            self.wte = nn.Embedding(cfg["vocab_size"], cfg["n_embd"])
            self.wpe = nn.Embedding(cfg["block_size"], cfg["n_embd"])
            self.drop = nn.Dropout(cfg["dropout"])
            self.h = nn.ModuleList([Block(cfg) for _ in range(cfg["n_layer"])])
            self.ln_f = nn.LayerNorm(cfg["n_embd"])
            self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab_size"], bias=False)
            self.lm_head.weight = self.wte.weight  # weight tying
            self.apply(self._init_weights)
            for name, p in self.named_parameters():  # GPT-2's scaled init of the residual projections
                if name.endswith("c_proj.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg["n_layer"]))

        @staticmethod
        def _init_weights(module):
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            if T > self.block_size:
                raise ValueError(f"sequence of length {T} is longer than the block size {self.block_size}")
            pos = torch.arange(T, device=idx.device)                             # (T,)
            x = self.drop(self.wte(idx) + self.wpe(pos))                         # (B, T, C)
            for block in self.h:
                x = block(x)
            x = self.ln_f(x)
            if targets is None:                                                  # generation: last position
                return self.lm_head(x[:, -1:, :]), None
            logits = self.lm_head(x)                                             # (B, T, V)
            return logits, F.cross_entropy(logits.view(B * T, -1), targets.reshape(B * T))

    return GPT


def configure_optimizer(torch, model, cfg):
    """AdamW; weight decay on matrices and embeddings (dim >= 2), none on biases and LayerNorm weights."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg["lr"], betas=(0.9, 0.99))


def lr_at(step, cfg):
    """Learning rate of (0-based) step: linear warmup, then cosine decay to min_lr at lr_decay_steps."""
    if step < cfg["warmup_steps"]:
        return cfg["lr"] * (step + 1) / (cfg["warmup_steps"] + 1)
    if step >= cfg["lr_decay_steps"]:
        return cfg["min_lr"]
    ratio = (step - cfg["warmup_steps"]) / max(1, cfg["lr_decay_steps"] - cfg["warmup_steps"])
    return cfg["min_lr"] + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (cfg["lr"] - cfg["min_lr"])


def autocast_context(torch, mode, device):
    """A zero-argument factory of the context the forward pass runs in: bf16 autocast, or nothing."""
    if mode is None:
        return contextlib.nullcontext
    return lambda: torch.autocast(device_type=str(device).split(":")[0], dtype=torch.bfloat16)


def train_step(torch, model, optimizer, x, y, lr, grad_clip, autocast):
    """One optimizer step on the batch (x, y) at learning rate lr; returns the loss as a float."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    with autocast():
        _, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.item()


def estimate_loss(torch, model, splits, cfg, eval_iters, device, autocast):
    """Mean loss over eval_iters batches per split; the same batches at every evaluation."""
    out = {}
    model.eval()
    with torch.no_grad():
        for k, (name, data) in enumerate(splits.items()):
            gen = torch.Generator().manual_seed(cfg["seed"] + 1 + k)
            total = 0.0
            for _ in range(eval_iters):
                x, y = get_batch(torch, data, cfg["batch_size"], cfg["block_size"], gen, device)
                with autocast():
                    total += model(x, y)[1].item()
            out[name] = total / eval_iters
    model.train()
    return out


def generate(torch, model, prompt_ids, n, device, seed, temperature=0.8, top_k=20):
    """n new tokens after prompt_ids, sampled from softmax(logits / temperature) restricted to the top k."""
    F = torch.nn.functional
    gen = torch.Generator(device=device).manual_seed(seed)
    idx = torch.tensor([prompt_ids], dtype=torch.long, device=device)           # (1, t)
    model.eval()
    with torch.no_grad():
        for _ in range(n):
            logits = model(idx[:, -model.block_size:])[0][:, -1, :] / temperature  # (1, V)
            kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
            nxt = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=gen)  # (1, 1)
            idx = torch.cat((idx, nxt), dim=1)
    model.train()
    return idx[0].tolist()


# ---------------------------------------------------------------------------------------------- main
def main(argv=None):
    wall0 = time.perf_counter()
    ap, args = parse_args(argv)
    torch = load_framework(ap, args)
    if args.autocast and not hasattr(torch, "autocast"):
        ap.error(f"--autocast {args.autocast}: {args.framework} has no torch.autocast yet; run without it")

    os.makedirs(args.out_dir, exist_ok=True)
    ckpt_path = os.path.join(args.out_dir, "gpt.pt")
    png_path = os.path.join(args.out_dir, "gpt_loss.png")
    metrics_path = os.path.join(args.out_dir, "gpt_metrics.json")

    cfg = {k: getattr(args, k) for k in RESUMED}
    cfg["min_lr"] = args.lr / 10 if args.min_lr is None else args.min_lr
    cfg["lr_decay_steps"] = args.steps if args.lr_decay_steps is None else args.lr_decay_steps
    ckpt = None
    if args.resume:
        if not os.path.exists(ckpt_path):
            ap.error(f"--resume: no checkpoint at {ckpt_path}")
        ckpt = torch.load(ckpt_path, map_location=args.device)
        for k in RESUMED:
            given = getattr(args, k)
            if given != ap.get_default(k) and given != ckpt["config"][k]:
                print(f"note: --{k.replace('_', '-')} {given} ignored: the checkpoint's {ckpt['config'][k]} is used")
        cfg.update({k: ckpt["config"][k] for k in RESUMED})
    autocast = autocast_context(torch, cfg["autocast"], args.device)

    raw = load_stdlib_text(cfg["data_chars"])
    vocab, data = encode_corpus(torch, raw)
    n_train = int(0.9 * len(data))
    splits = {"train": data[:n_train], "val": data[n_train:]}
    cfg["vocab_size"] = len(vocab)

    torch.manual_seed(cfg["seed"])
    model = make_gpt(torch)(cfg).to(args.device)
    optimizer = configure_optimizer(torch, model, cfg)
    batch_gen = torch.Generator().manual_seed(cfg["seed"])
    history = {"train": [], "val": [], "eval_train": []}  # train: (step, loss) per step; val: (step, loss)
    step = 0
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        batch_gen.set_state(ckpt["batch_rng"])
        torch.set_rng_state(ckpt["rng"])
        step, history = ckpt["step"], ckpt["history"]
        print(f"resumed {ckpt_path} at step {step}")

    n_params = sum(p.numel() for p in model.parameters())
    tokens_per_step = cfg["batch_size"] * cfg["block_size"]
    print(f"{args.framework}: GPT {cfg['n_layer']} layers, {cfg['n_head']} heads, {cfg['n_embd']} dims, "
          f"{n_params / 1e6:.2f}M parameters; {len(data):,} chars of stdlib source, vocab {len(vocab)}; "
          f"{args.device}, {torch.get_num_threads()} threads{', bf16 autocast' if cfg['autocast'] else ''}")

    def save_checkpoint():
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                    "config": cfg, "vocab": vocab, "batch_rng": batch_gen.get_state(),
                    "rng": torch.get_rng_state(), "history": history}, ckpt_path)

    def evaluate():
        est = estimate_loss(torch, model, splits, cfg, args.eval_iters, args.device, autocast)
        history["val"].append((step, est["val"]))
        history["eval_train"].append((step, est["train"]))
        return est

    if step == 0:  # the starting point of the curves
        evaluate()
    bar = None
    if not args.no_bar:
        from tqdm import tqdm
        bar = tqdm(total=args.steps, initial=step, unit="step", dynamic_ncols=True, file=sys.stdout)
    train_time, train_tokens, est = 0.0, 0, None
    model.train()
    try:
        while step < args.steps:
            t0 = time.perf_counter()
            x, y = get_batch(torch, splits["train"], cfg["batch_size"], cfg["block_size"], batch_gen, args.device)
            loss_value = train_step(torch, model, optimizer, x, y, lr_at(step, cfg), cfg["grad_clip"], autocast)
            step += 1
            train_time += time.perf_counter() - t0
            train_tokens += tokens_per_step
            history["train"].append((step, loss_value))
            if bar is not None:
                bar.set_postfix(loss=f"{loss_value:.3f}", tok_s=f"{train_tokens / train_time:,.0f}", refresh=False)
                bar.update(1)
            if step % args.eval_interval == 0 or step == args.steps:
                est = evaluate()
                msg = f"step {step}: train loss {est['train']:.4f}, val loss {est['val']:.4f}"
                (bar.write if bar is not None else print)(msg)
                save_checkpoint()
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        save_checkpoint()
        print(f"\ninterrupted at step {step}: checkpoint saved to {ckpt_path}; continue with --resume")
        return 130
    if bar is not None:
        bar.close()
    if est is None:  # nothing trained: a resumed run already at --steps, or --steps 0
        if history["val"] and history["val"][-1][0] == step:
            est = {"train": history["eval_train"][-1][1], "val": history["val"][-1][1]}
        else:
            est = evaluate()
        save_checkpoint()

    if args.sample_chars > 0:
        prompt = [vocab.index(c) for c in args.prompt if c in vocab] or [vocab.index("\n")]
        out = generate(torch, model, prompt, args.sample_chars, args.device, cfg["seed"])
        print("---- sample ----\n" + "".join(vocab[i] for i in out) + "\n----------------")

    curves = [("train", [s for s, _ in history["train"]], [v for _, v in history["train"]]),
              ("val", [s for s, _ in history["val"]], [v for _, v in history["val"]])]
    drawn = save_loss_plot(png_path, curves, title=f"char GPT on stdlib source ({args.framework})")
    tokens_per_s = train_tokens / train_time if train_time else float("nan")
    wall = time.perf_counter() - wall0
    metrics = {"framework": args.framework, "threads": torch.get_num_threads(), "step": step,
               "final_train_loss": est["train"], "final_val_loss": est["val"], "tokens_per_s": tokens_per_s,
               "wall_s": wall, "train_s": train_time, "checkpoint": ckpt_path, "png": png_path if drawn else None,
               "history": history, "config": cfg}
    with open(metrics_path, "w") as f:
        json.dump(metrics, f)
    print(f"final train loss {est['train']:.4f} | val loss {est['val']:.4f} | {tokens_per_s:,.0f} tokens/s | "
          f"wall {wall:.1f} s")
    print(f"checkpoint: {ckpt_path}")
    if drawn:
        print(f"loss curve: {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
