"""examples/train_gpt.py end to end, with a tiny model: it trains, writes a checkpoint, a metrics file and,
with matplotlib, the loss curves as a PNG (without it, a notice), --resume continues with the losses of an
uninterrupted run, and --framework torch gives pyctorch's losses for the same seed."""
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

import pyctorch
from conftest import requires_torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, EXAMPLES)
import train_gpt  # noqa: E402

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

TINY = ["--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "16", "--batch-size", "8",
        "--data-chars", "200000", "--eval-interval", "3", "--eval-iters", "2", "--warmup-steps", "2",
        "--lr-decay-steps", "6", "--sample-chars", "20", "--threads", "1", "--no-bar"]


def run_gpt(out_dir, *extra, expect_rc=0, hide_matplotlib=False):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = os.path.join(EXAMPLES, "train_gpt.py")
    # A None entry in sys.modules makes `import matplotlib` raise ImportError, as on a machine without it.
    launcher = ["-c", "import runpy, sys; sys.modules['matplotlib'] = None; sys.argv = sys.argv[1:]; "
                      "runpy.run_path(sys.argv[0], run_name='__main__')"] if hide_matplotlib else []
    proc = subprocess.run([sys.executable, *launcher, script, *TINY, "--out-dir", str(out_dir), *extra],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == expect_rc, proc.stdout + proc.stderr
    return proc


def metrics(out_dir):
    with open(os.path.join(out_dir, "gpt_metrics.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """6 uninterrupted steps with pyctorch."""
    out = tmp_path_factory.mktemp("gpt_full")
    proc = run_gpt(out, "--steps", "6")
    return out, proc


def test_run_reports_and_writes_files(full_run):
    out, proc = full_run
    for text in ("final train loss", "val loss", "tokens/s", "wall", "---- sample ----",
                 f"checkpoint: {os.path.join(out, 'gpt.pt')}"):
        assert text in proc.stdout, proc.stdout
    assert (f"loss curve: {os.path.join(out, 'gpt_loss.png')}" in proc.stdout) == HAVE_MATPLOTLIB
    m = metrics(out)
    assert m["step"] == 6 and len(m["history"]["train"]) == 6
    assert [s for s, _ in m["history"]["val"]] == [0, 3, 6]  # step 0 and every --eval-interval
    assert all(math.isfinite(v) for _, v in m["history"]["train"]) and m["tokens_per_s"] > 0
    # The untrained model predicts about uniformly: loss near log(vocabulary size).
    assert abs(m["history"]["val"][0][1] - math.log(m["config"]["vocab_size"])) < 0.1


def test_checkpoint_contents(full_run):
    out, _ = full_run
    ckpt = pyctorch.load(os.path.join(out, "gpt.pt"))
    assert ckpt["step"] == 6
    assert ckpt["config"]["n_embd"] == 32 and ckpt["config"]["n_layer"] == 1
    assert set(ckpt["optimizer"]) == {"state", "param_groups"}
    assert [g["weight_decay"] for g in ckpt["optimizer"]["param_groups"]] == [0.1, 0.0]
    assert ckpt["model"]["wte.weight"].shape == (ckpt["config"]["vocab_size"], 32)
    assert ckpt["model"]["h.0.attn.c_attn.weight"].shape == (96, 32)
    # The checkpoint loads into a fresh model.
    cfg = ckpt["config"]
    model = train_gpt.make_gpt(pyctorch)(cfg)
    model.load_state_dict(ckpt["model"])
    assert pyctorch.equal(model.lm_head.weight, ckpt["model"]["wte.weight"])  # tied


@pytest.mark.skipif(not HAVE_MATPLOTLIB, reason="the loss curve picture is drawn by matplotlib")
def test_loss_curve_png(full_run):
    """matplotlib's PNG: 720 x 440 pixels, with the train (tab:blue) and val (tab:orange) curves."""
    import matplotlib.image
    import numpy as np
    out, _ = full_run
    path = os.path.join(out, "gpt_loss.png")
    assert metrics(out)["png"] == path
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    pixels = (matplotlib.image.imread(path)[..., :3] * 255).round().astype(np.uint8)
    assert pixels.shape == (440, 720, 3)
    colours = set(map(tuple, pixels.reshape(-1, 3).tolist()))
    assert (31, 119, 180) in colours and (255, 127, 14) in colours


def test_without_matplotlib_the_demo_runs_and_says_so(tmp_path):
    proc = run_gpt(tmp_path, "--steps", "2", "--sample-chars", "0", hide_matplotlib=True)
    assert "matplotlib is not installed: skipping the loss curve picture" in proc.stdout, proc.stdout
    assert "loss curve:" not in proc.stdout and "final train loss" in proc.stdout
    assert not os.path.exists(os.path.join(tmp_path, "gpt_loss.png")) and metrics(tmp_path)["png"] is None


def test_resume_continues_like_uninterrupted_run(full_run, tmp_path):
    out, _ = full_run
    run_gpt(tmp_path, "--steps", "3")
    assert pyctorch.load(os.path.join(tmp_path, "gpt.pt"))["step"] == 3
    proc = run_gpt(tmp_path, "--steps", "6", "--resume")
    assert "resumed" in proc.stdout and "at step 3" in proc.stdout
    full, resumed = metrics(out)["history"], metrics(tmp_path)["history"]
    assert len(resumed["train"]) == 6
    assert resumed["train"] == full["train"]  # bit-identical, steps 1-3 from the checkpoint and 4-6 after it
    assert resumed["val"] == full["val"]
    assert pyctorch.equal(pyctorch.load(os.path.join(tmp_path, "gpt.pt"))["model"]["wte.weight"],
                          pyctorch.load(os.path.join(out, "gpt.pt"))["model"]["wte.weight"])


def test_resume_without_checkpoint_fails(tmp_path):
    proc = run_gpt(tmp_path, "--steps", "2", "--resume", expect_rc=2)
    assert "no checkpoint" in proc.stderr


def test_autocast_flag(tmp_path):
    if hasattr(pyctorch, "autocast"):
        run_gpt(tmp_path, "--steps", "2", "--autocast", "bf16")
        assert all(math.isfinite(v) for _, v in metrics(tmp_path)["history"]["train"])
    else:
        proc = run_gpt(tmp_path, "--steps", "2", "--autocast", "bf16", expect_rc=2)
        assert "pyctorch has no torch.autocast" in proc.stderr


@requires_torch
def test_torch_gives_the_same_losses(full_run, tmp_path):
    out, _ = full_run
    run_gpt(tmp_path, "--steps", "6", "--framework", "torch")
    ours, theirs = metrics(out)["history"], metrics(tmp_path)["history"]
    for (s1, a), (s2, b) in zip(ours["train"], theirs["train"]):
        assert s1 == s2 and abs(a - b) <= 1e-4 * abs(b), (s1, a, b)
    for (_, a), (_, b) in zip(ours["val"], theirs["val"]):
        assert abs(a - b) <= 1e-4 * abs(b)


def test_lr_schedule():
    cfg = {"lr": 1.0, "min_lr": 0.1, "warmup_steps": 4, "lr_decay_steps": 14}
    lrs = [train_gpt.lr_at(s, cfg) for s in range(20)]
    assert lrs[:4] == pytest.approx([0.2, 0.4, 0.6, 0.8])     # linear warmup
    assert lrs[4] == pytest.approx(1.0)                        # peak, then cosine
    assert lrs[9] == pytest.approx(0.55)                       # half way: (lr + min_lr) / 2
    assert all(a >= b for a, b in zip(lrs[4:], lrs[5:]))
    assert lrs[14:] == pytest.approx([0.1] * 6)


def test_corpus_and_batches():
    raw = train_gpt.load_stdlib_text(5000)
    assert len(raw) == 5000 and raw == train_gpt.load_stdlib_text(5000)  # deterministic
    vocab, data = train_gpt.encode_corpus(pyctorch, raw)
    assert "".join(vocab[i] for i in data.tolist()) == raw.decode("ascii")
    g = pyctorch.Generator().manual_seed(0)
    x, y = train_gpt.get_batch(pyctorch, data, 4, 8, g, "cpu")
    assert x.shape == y.shape == (4, 8) and x.dtype == pyctorch.int64
    assert pyctorch.equal(x[:, 1:], y[:, :-1])  # targets are the inputs shifted by one


@requires_torch
def test_checkpoint_resumes_across_frameworks(full_run, tmp_path):
    """A pyctorch checkpoint (torch.save format, generator states included) continues on real torch."""
    out, _ = full_run
    run_gpt(tmp_path, "--steps", "3")
    run_gpt(tmp_path, "--steps", "6", "--resume", "--framework", "torch")
    full, resumed = metrics(out)["history"]["train"], metrics(tmp_path)["history"]["train"]
    assert resumed[:3] == full[:3]
    for (s1, a), (s2, b) in zip(full[3:], resumed[3:]):
        assert s1 == s2 and abs(a - b) <= 1e-4 * abs(a), (s1, a, b)
