"""examples/train_cnn.py: the generated dataset, a tiny run with 2 DataLoader workers, its loss curve picture
(matplotlib) or, without matplotlib, the notice."""
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
import train_cnn  # noqa: E402

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

TINY = ["--epochs", "2", "--train-size", "192", "--val-size", "96", "--batch-size", "32", "--image-size", "16",
        "--num-workers", "2", "--threads", "1", "--no-bar"]


def run_cnn(out_dir, *extra, hide_matplotlib=False):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = os.path.join(EXAMPLES, "train_cnn.py")
    # A None entry in sys.modules makes `import matplotlib` raise ImportError, as on a machine without it.
    launcher = ["-c", "import runpy, sys; sys.modules['matplotlib'] = None; sys.argv = sys.argv[1:]; "
                      "runpy.run_path(sys.argv[0], run_name='__main__')"] if hide_matplotlib else []
    proc = subprocess.run([sys.executable, *launcher, script, *TINY, "--out-dir", str(out_dir), *extra],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(os.path.join(out_dir, "cnn_metrics.json")) as f:
        return proc, json.load(f)


@pytest.fixture(scope="module")
def pyctorch_run(tmp_path_factory):
    return run_cnn(tmp_path_factory.mktemp("cnn"))


def test_tiny_run_with_two_workers(pyctorch_run):
    proc, m = pyctorch_run
    assert "2 loader workers" in proc.stdout and "final validation accuracy" in proc.stdout
    assert len(m["losses"]) == 2 * (192 // 32) and all(math.isfinite(v) for v in m["losses"])
    assert len(m["val_acc"]) == 2 and all(0.0 <= a <= 1.0 for a in m["val_acc"])
    assert m["images_per_s"] > 0
    assert len(m["val_loss"]) == 2 and all(math.isfinite(v) and v > 0 for v in m["val_loss"])
    assert "validation loss" in proc.stdout


@pytest.mark.skipif(not HAVE_MATPLOTLIB, reason="the loss curve picture is drawn by matplotlib")
def test_loss_curve_png(pyctorch_run, tmp_path):
    import matplotlib.image
    proc, m = pyctorch_run
    path = m["png"]
    assert os.path.basename(path) == "cnn_loss.png" and f"loss curve: {path}" in proc.stdout
    assert matplotlib.image.imread(path).shape[:2] == (440, 720)


def test_without_matplotlib_the_demo_runs_and_says_so(tmp_path):
    proc, m = run_cnn(tmp_path, "--epochs", "1", "--num-workers", "0", hide_matplotlib=True)
    assert "matplotlib is not installed: skipping the loss curve picture" in proc.stdout, proc.stdout
    assert "loss curve:" not in proc.stdout and m["png"] is None
    assert not os.path.exists(os.path.join(tmp_path, "cnn_loss.png"))


@requires_torch
def test_torch_gives_the_same_losses(pyctorch_run, tmp_path):
    """Same seed: same shuffling, same worker seeds, hence the same augmentations and losses."""
    _, ours = pyctorch_run
    _, theirs = run_cnn(tmp_path, "--framework", "torch")
    for a, b in zip(ours["losses"][:4], theirs["losses"][:4]):
        assert abs(a - b) <= 1e-4 * abs(b), (ours["losses"][:4], theirs["losses"][:4])


def test_dataset_is_deterministic_per_index():
    ds = train_cnn.Patterns("pyctorch", 12, 16, seed=3, augment=False)
    assert len(ds) == 12
    for i in (0, 5, 11):
        a, la = ds[i]
        b, lb = ds[i]
        assert pyctorch.equal(a, b) and la == lb == i % 6
        assert a.shape == (3, 16, 16) and a.dtype == pyctorch.float32
    assert not pyctorch.equal(ds[0][0], ds[6][0])  # same class, different picture
    with pytest.raises(IndexError):
        ds[12]


def test_augmentation_uses_the_global_rng():
    ds = train_cnn.Patterns("pyctorch", 6, 16, seed=3, augment=True)
    pyctorch.manual_seed(0)
    a = ds[1][0]
    pyctorch.manual_seed(0)
    assert pyctorch.equal(a, ds[1][0])
    plain = train_cnn.Patterns("pyctorch", 6, 16, seed=3, augment=False)[1][0]
    # Vertical stripes: the augmented image is the plain one flipped and/or rolled.
    candidates = [plain.flip(-1) if f else plain for f in (0, 1)]
    assert any(pyctorch.equal(a, c.roll(shifts=(dy, dx), dims=(1, 2)))
               for c in candidates for dy in range(-3, 4) for dx in range(-3, 4))
