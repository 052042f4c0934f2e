"""pyctorch.utils.tensorboard.SummaryWriter: the event files it writes, read back with tensorboard's own
reader, hold what was logged, and (where torch is installed) exactly what torch's SummaryWriter writes for
the same calls: tags, steps, values, histogram buckets, decoded image pixels, text, plugin contents."""
import glob
import io
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tensorboard", reason="pyctorch.utils.tensorboard writes through the tensorboard package")
PIL_Image = pytest.importorskip("PIL.Image", reason="image summaries are PNG-encoded by pillow")

from tensorboard.backend.event_processing import event_accumulator, event_file_loader  # noqa: E402
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402

import pyctorch  # noqa: E402
from conftest import HAVE_TORCH, requires_torch  # noqa: E402
from pyctorch.utils.tensorboard import SummaryWriter  # noqa: E402

rng = np.random.default_rng(0)
WEIGHTS = rng.normal(size=1000).astype(np.float32)
COUNTS = rng.integers(0, 20, size=300)
IMG_CHW = rng.random((3, 8, 6)).astype(np.float32)          # floats in [0, 1]
IMG_HWC_U8 = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)  # uint8 as is
IMG_HW = np.linspace(-0.2, 1.2, 20, dtype=np.float32).reshape(4, 5)  # clipped at both ends
BATCH_NCHW = rng.random((5, 3, 4, 4)).astype(np.float32)    # 5 images: a grid of one row
BATCH_NHWC_GREY = rng.random((10, 3, 2, 1))                  # 10 grey float64 images: two rows of 8
LABELS = rng.integers(0, 2, 50)
PREDICTIONS = rng.random(50).astype(np.float32)
EMBEDDING = rng.normal(size=(6, 3)).astype(np.float32)
THUMBNAILS = rng.random((6, 3, 4, 5)).astype(np.float32)
PR_RAW = [[5, 3, 1], [4, 2, 0], [0, 2, 4], [0, 2, 4], [0.55, 0.6, 1.0], [1.0, 0.6, 0.2]]
HPARAMS = {"lr": 0.01, "batch": 32, "optimizer": "adamw", "nesterov": True, "unset": None}
LAYOUT = {"losses": {"both": ["Multiline", ["loss/train", "loss/val"]],
                     "band": ["Margin", ["acc", "acc_low", "acc_high"]]}}


def write_everything(writer_class, to_tensor, log_dir):
    """The same calls for either framework; `to_tensor` turns a numpy array into its tensor."""
    with writer_class(log_dir) as w:
        for step in range(4):
            w.add_scalar("loss/train", 2.0 / (step + 1), step)               # a Python float
            w.add_scalar("loss/val", to_tensor(np.array(1.5 - 0.1 * step, dtype=np.float32)), step)  # a 0-d tensor
            w.add_scalar("lr", np.float64(0.1) ** step, step, new_style=True)
            w.add_scalar("lr64", 1 / 3 + step, step, new_style=True, double_precision=True)
            w.add_scalars("losses", {"train": 1.0 + step, "val": to_tensor(np.array(2.0 + step))}, step)
        w.add_histogram("weights", to_tensor(WEIGHTS), 1)
        w.add_histogram("weights_auto", WEIGHTS, 1, bins="auto")
        w.add_histogram("counts", to_tensor(COUNTS), 2, bins=30, max_bins=7)
        w.add_histogram("counts_fd", COUNTS.astype(np.float64), 2, bins="fd")
        w.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=17.0,
                            bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3], global_step=5)
        w.add_image("chw", to_tensor(IMG_CHW), 0)
        w.add_image("hwc_uint8", to_tensor(IMG_HWC_U8), 0, dataformats="HWC")
        w.add_image("hw", IMG_HW, 1, dataformats="HW")
        w.add_images("batch", to_tensor(BATCH_NCHW), 2)
        w.add_images("grey", BATCH_NHWC_GREY, 3, dataformats="NHWC")
        w.add_text("notes", "héllo **markdown**", 0)
        w.add_text("notes", "second", 1)
        w.add_hparams(HPARAMS, {"hparam/accuracy": 0.75, "hparam/loss": to_tensor(np.array(0.5))},
                      hparam_domain_discrete={"optimizer": ["adamw", "sgd"], "batch": [16, 32]},
                      run_name="hp", global_step=3)
        w.add_pr_curve("pr", to_tensor(LABELS), to_tensor(PREDICTIONS), 0, num_thresholds=11)
        w.add_pr_curve_raw("pr_raw", *PR_RAW, global_step=1, num_thresholds=3)
        w.add_custom_scalars(LAYOUT)
        w.add_custom_scalars_marginchart(["a", "b", "c"], category="margins", title="abc")
        w.add_embedding(to_tensor(EMBEDDING), metadata=list("abcdef"), label_img=to_tensor(THUMBNAILS), tag="points",
                        global_step=2)


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    log_dir = str(tmp_path_factory.mktemp("pyctorch_tb"))
    write_everything(SummaryWriter, pyctorch.from_numpy, log_dir)
    return log_dir


@pytest.fixture(scope="module")
def theirs(tmp_path_factory):
    if not HAVE_TORCH:
        pytest.skip("torch is not installed (oracle comparisons skip)")
    import torch
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    log_dir = str(tmp_path_factory.mktemp("torch_tb"))
    write_everything(TorchWriter, torch.from_numpy, log_dir)
    return log_dir


# --------------------------------------------------------------------------------------------- reading
def run_dirs(log_dir):
    """{run directory relative to log_dir: that directory} for each directory holding an event file."""
    files = glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"), recursive=True)
    return {os.path.relpath(os.path.dirname(f), log_dir): os.path.dirname(f) for f in files}


def decode_png(data):
    return np.asarray(PIL_Image.open(io.BytesIO(data)))


def read_run(run_dir):
    """Everything tensorboard's EventAccumulator finds in one run, without wall times."""
    keep_all = {kind: 0 for kind in event_accumulator.DEFAULT_SIZE_GUIDANCE}  # 0: no sampling, every event
    acc = event_accumulator.EventAccumulator(run_dir, size_guidance=keep_all)
    acc.Reload()
    tags = acc.Tags()
    hist = lambda h: (h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit), list(h.bucket))  # noqa: E731
    return {
        "scalars": {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in tags["scalars"]},
        "histograms": {t: [(e.step, hist(e.histogram_value)) for e in acc.Histograms(t)] for t in tags["histograms"]},
        "images": {t: [(e.step, e.width, e.height, decode_png(e.encoded_image_string)) for e in acc.Images(t)]
                   for t in tags["images"]},
        "tensors": {t: [(e.step, e.tensor_proto) for e in acc.Tensors(t)] for t in tags["tensors"]},
        "plugins": {t: acc.SummaryMetadata(t).plugin_data for t in tags["tensors"]},
    }


def raw_events(run_dir):
    """Every event of the run's event files in order, wall time cleared."""
    events = []
    for path in sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))):
        for event in event_file_loader.EventFileLoader(path).Load():
            event.wall_time = 0
            events.append(event)
    return events


def hparams_plugin_data(run_dir):
    """{summary tag: HParamsPluginData} of the hparams plugin's summaries in a run."""
    found = {}
    for event in raw_events(run_dir):
        for value in event.summary.value:
            if value.metadata.plugin_data.plugin_name == "hparams":
                found[value.tag] = plugin_data_pb2.HParamsPluginData.FromString(value.metadata.plugin_data.content)
    return found


# -------------------------------------------------------------------------------- what we wrote, alone
def test_runs_and_scalars(ours):
    assert set(run_dirs(ours)) == {".", "losses_train", "losses_val", "hp"}
    main = read_run(ours)
    assert main["scalars"]["loss/train"] == [(s, pytest.approx(2.0 / (s + 1))) for s in range(4)]
    assert main["scalars"]["loss/val"] == [(s, pytest.approx(1.5 - 0.1 * s)) for s in range(4)]
    train = read_run(os.path.join(ours, "losses_train"))["scalars"]
    assert train == {"losses": [(s, 1.0 + s) for s in range(4)]}  # add_scalars: main tag, one run per tag
    # new_style scalars are tensors of the scalars plugin, float or double
    lr64 = main["tensors"]["lr64"]
    assert [step for step, _ in lr64] == [0, 1, 2, 3]
    assert lr64[1][1].dtype == 2 and lr64[1][1].double_val == [1 / 3 + 1]  # DT_DOUBLE, exact
    assert main["tensors"]["lr"][2][1].float_val == [pytest.approx(0.01)]
    assert main["plugins"]["lr"].plugin_name == "scalars"


def test_histograms(ours):
    hists = read_run(ours)["histograms"]
    (step, (lo, hi, num, total, squares, limits, counts)), = hists["weights"]
    assert step == 1 and num == 1000 and sum(counts) == 1000
    assert lo == pytest.approx(WEIGHTS.min()) and hi == pytest.approx(WEIGHTS.max())
    as_double = WEIGHTS.astype(float)
    assert total == pytest.approx(as_double.sum()) and squares == pytest.approx((as_double ** 2).sum())
    assert counts[0] == 0 and limits[0] <= WEIGHTS.min() < limits[1] and limits[-1] >= WEIGHTS.max()
    (_, (_, _, num, _, _, limits, counts)), = hists["counts"]
    # max_bins=7 merges the 30 bins in groups of 30 // 7 = 4: 8 remain, + the empty leading one
    assert num == 300 and sum(counts) == 300 and len(counts) == 8 + 1
    assert hists["raw"] == [(5, (0.0, 3.0, 6.0, 9.0, 17.0, [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))]


def test_images(ours):
    images = read_run(ours)["images"]
    (step, w, h, pixels), = images["chw"]
    assert (step, w, h) == (0, 6, 8)
    np.testing.assert_array_equal(pixels, (IMG_CHW.transpose(1, 2, 0) * 255).astype(np.uint8))
    np.testing.assert_array_equal(images["hwc_uint8"][0][3], IMG_HWC_U8)
    grey = (IMG_HW.clip(0, 1) * 255).astype(np.uint8)
    np.testing.assert_array_equal(images["hw"][0][3], np.stack([grey] * 3, axis=2))
    _, w, h, grid = images["batch"][0]
    assert (w, h) == (20, 4)
    np.testing.assert_array_equal(grid[:, 4:8], (BATCH_NCHW[1].transpose(1, 2, 0) * 255).astype(np.uint8))
    _, w, h, grid = images["grey"][0]
    assert (w, h) == (16, 6) and (grid[3:, 4:] == 0).all()  # 10 images, 8 a row: the rest of row 2 is black


def test_text_hparams_pr_curve_and_layout(ours):
    main = read_run(ours)
    assert [(s, t.string_val[0].decode()) for s, t in main["tensors"]["notes/text_summary"]] == \
        [(0, "héllo **markdown**"), (1, "second")]
    assert main["plugins"]["notes/text_summary"].plugin_name == "text"
    pr = main["tensors"]["pr"][0][1]
    assert [d.size for d in pr.tensor_shape.dim] == [6, 11]
    tp = np.array(pr.float_val).reshape(6, 11)[0]
    assert tp[0] == LABELS.sum() and all(a >= b for a, b in zip(tp, tp[1:]))
    assert main["plugins"]["custom_scalars__config__"].plugin_name == "custom_scalars"

    hp = os.path.join(ours, "hp")
    data = hparams_plugin_data(hp)
    assert set(data) == {"_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"}
    start = data["_hparams_/session_start_info"].session_start_info.hparams
    assert start["lr"].number_value == 0.01 and start["optimizer"].string_value == "adamw"
    assert start["nesterov"].number_value == 1 and "unset" not in start
    experiment = data["_hparams_/experiment"].experiment
    assert [m.name.tag for m in experiment.metric_infos] == ["hparam/accuracy", "hparam/loss"]
    assert read_run(hp)["scalars"] == {"hparam/accuracy": [(3, 0.75)], "hparam/loss": [(3, 0.5)]}


def test_embedding_files(ours):
    folder = os.path.join(ours, "00002", "points")
    rows = open(os.path.join(folder, "tensors.tsv")).read().splitlines()
    np.testing.assert_array_equal(np.array([r.split("\t") for r in rows], dtype=np.float32), EMBEDDING)
    assert open(os.path.join(folder, "metadata.tsv")).read() == "a\nb\nc\nd\ne\nf\n"
    config = open(os.path.join(ours, "projector_config.pbtxt")).read()
    assert 'tensor_name: "points:00002"' in config and 'image_path: "00002/points/sprite.png"' in config
    sprite = decode_png(open(os.path.join(folder, "sprite.png"), "rb").read())
    assert sprite.shape == (15, 15, 3)  # 6 thumbnails of 4 x 5, 3 a row, on a square sheet
    np.testing.assert_array_equal(sprite[4:8, 5:10], (THUMBNAILS[4].transpose(1, 2, 0) * 255).astype(np.uint8))


def test_writer_api(tmp_path):
    with SummaryWriter(str(tmp_path / "a"), purge_step=7, filename_suffix=".x") as w:
        assert w.get_logdir() == str(tmp_path / "a")
        w.add_scalar("s", 1.0, 8)
        w.flush()
        assert glob.glob(str(tmp_path / "a" / "events.out.tfevents.*.x"))
        with pytest.raises(NotImplementedError, match="no graph layer"):
            w.add_graph(None)
        with pytest.raises(AssertionError, match="single value"):
            w.add_scalar("s", np.ones(2))
        with pytest.raises(ValueError, match="one count per bucket"):
            w.add_histogram_raw("h", 0, 1, 1, 1, 1, [1.0, 2.0], [1])
    w.close()  # a second close is harmless
    events = raw_events(str(tmp_path / "a"))
    purge = [e for e in events if e.HasField("session_log")]
    assert len(purge) == 1 and purge[0].step == 7 and purge[0].session_log.status == 1  # START
    # the default log dir is runs/<datetime>_<host><comment>, relative to the working directory
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        w = SummaryWriter(comment="_exp")
        w.close()
    finally:
        os.chdir(cwd)
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    assert os.path.isdir(tmp_path / w.get_logdir())


def test_import_pyctorch_stays_light():
    code = ("import sys, pyctorch; assert 'tensorboard' not in sys.modules, 'eager'; "
            "import pyctorch.as_torch as a; a.install_as_torch(); "
            "from torch.utils.tensorboard import SummaryWriter; "
            "assert SummaryWriter is pyctorch.utils.tensorboard.SummaryWriter")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------------------------- against torch's
@requires_torch
def test_same_runs_as_torch(ours, theirs):
    assert set(run_dirs(ours)) == set(run_dirs(theirs))


@requires_torch
@pytest.mark.parametrize("run", [".", "losses_train", "losses_val", "hp"])
def test_same_contents_as_torch(ours, theirs, run):
    mine, torch_run = read_run(os.path.join(ours, run)), read_run(os.path.join(theirs, run))
    for kind in ("scalars", "histograms", "tensors", "plugins"):
        assert mine[kind] == torch_run[kind], kind
    assert mine["images"].keys() == torch_run["images"].keys()
    for tag, events in mine["images"].items():
        for (step, w, h, pixels), (t_step, t_w, t_h, t_pixels) in zip(events, torch_run["images"][tag]):
            assert (step, w, h) == (t_step, t_w, t_h), tag
            np.testing.assert_array_equal(pixels, t_pixels, err_msg=tag)


@requires_torch
def test_same_hparams_as_torch(ours, theirs):
    assert hparams_plugin_data(os.path.join(ours, "hp")) == hparams_plugin_data(os.path.join(theirs, "hp"))


@requires_torch
def test_same_events_as_torch(ours, theirs):
    """Event by event, the main run's records are torch's (event files' own headers aside)."""
    mine, torch_events = raw_events(ours), raw_events(theirs)
    assert len(mine) == len(torch_events)
    for a, b in zip(mine, torch_events):
        assert a == b


@requires_torch
def test_same_embedding_files_as_torch(ours, theirs):
    for name in ("00002/points/tensors.tsv", "00002/points/metadata.tsv", "projector_config.pbtxt"):
        assert open(os.path.join(ours, name)).read() == open(os.path.join(theirs, name)).read(), name
    sprite = [decode_png(open(os.path.join(d, "00002/points/sprite.png"), "rb").read()) for d in (ours, theirs)]
    np.testing.assert_array_equal(*sprite)


def test_figure_and_bfloat16(tmp_path):
    matplotlib = pytest.importorskip("matplotlib", reason="add_figure renders with matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(2, 1), dpi=50)
    fig.gca().plot([0, 1], [1, 0], color="red")
    with SummaryWriter(str(tmp_path)) as w:
        w.add_figure("fig", fig, 0)
        w.add_scalar("half", pyctorch.tensor(0.5, dtype=pyctorch.bfloat16), 0)
        w.add_histogram("half_hist", pyctorch.arange(8, dtype=pyctorch.bfloat16), 0, bins=4)
    assert not plt.fignum_exists(fig.number)  # closed after rendering
    run = read_run(str(tmp_path))
    (_, w, h, pixels), = run["images"]["fig"]
    assert (w, h) == (100, 50) and ((pixels[..., 0] > 200) & (pixels[..., 1] < 80)).any()  # the red line
    assert run["scalars"]["half"] == [(0, 0.5)]
    assert run["histograms"]["half_hist"][0][1][6] == [0.0, 2.0, 2.0, 2.0, 2.0]


def test_hparams_values(tmp_path):
    """A one-element tensor is logged as its number; other types are refused before anything is written."""
    with SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"dropout": pyctorch.tensor(0.25), "depth": np.int64(3)}, {"m": 1.0}, run_name="r")
        with pytest.raises(ValueError, match="a hyperparameter must be"):
            w.add_hparams({"bad": [1, 2]}, {"m": 1.0}, run_name="r2")
        with pytest.raises(TypeError, match="hparam_domain_discrete\\[depth\\]"):
            w.add_hparams({"depth": 3}, {"m": 1.0}, hparam_domain_discrete={"depth": ["3"]})
    start = hparams_plugin_data(str(tmp_path / "r"))["_hparams_/session_start_info"].session_start_info.hparams
    assert start["dropout"].number_value == 0.25 and start["depth"].number_value == 3
    assert not os.path.exists(tmp_path / "r2")
