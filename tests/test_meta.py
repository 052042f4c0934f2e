"""The meta device (torch's device="meta"): shapes and dtypes without data.

Hand-written checks of what users do with it (build a model on it, then to_empty; print; refuse to read values), and
a table-wide check: every op of the table, called by the fuzzer's generator (tests/test_fuzz.py) on inputs moved to
the meta device, gives torch's meta shapes and dtypes, or raises where torch raises."""
import math
import warnings
import zlib

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import pyctorch
import pyctorch.nn as pnn
import samples as SR
from comparison import assert_same, outcome
from conftest import requires_torch, torch

import test_fuzz as fz


def meta_info(r):
    """What a meta result is compared by: per tensor, (shape, dtype name, is_meta); other values by type only."""
    if isinstance(r, (tuple, list)):
        return [meta_info(x) for x in r]
    if hasattr(r, "shape") and hasattr(r, "dtype") and hasattr(r, "is_meta"):
        return (tuple(r.shape), str(r.dtype).split(".")[-1], bool(r.is_meta))
    return type(r).__name__


# ---- what a user does ----

def test_factories_views_and_printing():
    x = pyctorch.empty(3, 4, device="meta")
    assert x.is_meta and x.device.type == "meta" and str(x.device) == "meta"
    assert x.shape == (3, 4) and x.stride() == (4, 1) and x.dtype == pyctorch.float32
    assert repr(x) == "tensor(..., device='meta', size=(3, 4))"
    assert repr(pyctorch.zeros(2, dtype=pyctorch.int64, device="meta")) == \
        "tensor(..., device='meta', size=(2,), dtype=torch.int64)"
    assert repr(pyctorch.empty((), device="meta")) == "tensor(..., device='meta', size=())"
    assert x.t().stride() == (1, 4) and x[1:, ::2].shape == (2, 2) and x.view(12).is_meta
    assert pyctorch.empty_strided((2, 3), (1, 2), device="meta").stride() == (1, 2)
    assert x.untyped_storage().nbytes() == 48 and x.data_ptr() == 0
    assert pyctorch.rand(2, 3, device="meta", requires_grad=True).requires_grad
    assert pyctorch.arange(5, device="meta").shape == (5,) and pyctorch.eye(3, 4, device="meta").shape == (3, 4)
    assert pyctorch.tensor([1, 2], device="meta").dtype == pyctorch.int64
    with pytest.raises(RuntimeError, match="negative dimension"):
        pyctorch.empty(-1, device="meta")


def test_values_cannot_be_read():
    x = pyctorch.ones(2, 2, device="meta")
    for read in (lambda: x.cpu(), lambda: x.to("cpu"), lambda: x.tolist(), lambda: x[0, 0].item(),
                 lambda: pyctorch.ones(2, 2).copy_(x), lambda: bytes(x.untyped_storage())):
        with pytest.raises(NotImplementedError, match="no data"):
            read()
    with pytest.raises(TypeError, match="meta device type tensor to numpy"):
        x.numpy()
    with pytest.raises(NotImplementedError):
        pyctorch.nonzero(x)  # the result's shape depends on the values
    with pytest.raises(RuntimeError, match="is not on the expected device meta"):
        x + pyctorch.ones(2, 2)
    with pytest.raises(RuntimeError, match="is not on the expected device cpu"):
        pyctorch.ones(2, 2) + x
    assert (x + pyctorch.tensor(1.0)).is_meta  # a 0-d CPU tensor joins any device


def test_moving_to_meta_and_in_place_ops():
    c = pyctorch.randn(2, 3)
    m = c.to("meta")
    assert m.is_meta and m.shape == (2, 3) and not c.is_meta and c.numel() == 6
    assert m.to("meta") is m and m.to(pyctorch.float64).dtype == pyctorch.float64
    assert m.uniform_() is m and m.normal_() is m and m.zero_() is m and m.add_(1) is m
    assert m.copy_(pyctorch.ones(2, 3)) is m  # copying into a meta tensor: nothing to write
    with pytest.raises(RuntimeError):
        m.add_(pyctorch.empty(5, device="meta"))  # the shapes are still checked
    out = pyctorch.empty(0, device="meta")
    assert pyctorch.add(m, m, out=out) is out and out.shape == (2, 3)
    assert pyctorch.empty_like(m, device="cpu").device.type == "cpu"


@requires_torch
def test_advanced_indexing_matches_torch():
    for m in (pyctorch, torch):
        x = m.empty(3, 4, device="meta")
        got = [x[m.tensor([0, 2])], x[:, m.tensor([[1, 3]]).to("meta")]]
        x[m.tensor([0])] = 1.0
        x[m.tensor([0]), m.tensor([1])] = m.empty(1, device="meta")
        if m is pyctorch:
            mine = got
        else:
            assert_same(mine, got, values=False)
        with pytest.raises(NotImplementedError):
            x[x > 0]  # a mask selects by its values


def test_model_on_meta_then_to_empty():
    pyctorch.manual_seed(0)
    state = pyctorch.get_rng_state()
    model = pnn.Sequential(pnn.Linear(64, 128, device="meta"), pnn.LayerNorm(128, device="meta"), pnn.ReLU(),
                           pnn.Linear(128, 10, device="meta"))
    assert all(p.is_meta for p in model.parameters())
    assert pyctorch.equal(pyctorch.get_rng_state(), state)  # meta initialisation draws no random numbers
    out = model(pyctorch.empty(5, 64, device="meta"))
    assert out.is_meta and out.shape == (5, 10)
    out.sum().backward()
    assert model[0].weight.grad.is_meta and model[0].weight.grad.shape == (128, 64)
    model.to_empty(device="cpu")
    assert all(not p.is_meta and p.device.type == "cpu" for p in model.parameters())
    model.load_state_dict({k: pyctorch.ones_like(v) for k, v in model.state_dict().items()})
    assert model(pyctorch.ones(1, 64)).shape == (1, 10)


def test_a_big_model_costs_no_memory():
    live_before = pyctorch._C._cpu_memory_stats()[0]
    layers = [pnn.Linear(8192, 8192, device="meta") for _ in range(8)]  # 2 GiB of float32 weights
    assert sum(p.numel() for layer in layers for p in layer.parameters()) > 5 * 10 ** 8
    assert pyctorch._C._cpu_memory_stats()[0] - live_before < 1 << 20


@requires_torch
def test_printing_and_errors_match_torch():
    for make in (lambda m: m.empty(3, 4, device="meta"), lambda m: m.zeros(2, dtype=m.int64, device="meta"),
                 lambda m: m.empty(0, device="meta"), lambda m: m.randn(2, 3).to("meta")):
        assert repr(make(pyctorch)) == repr(make(torch))


@requires_torch
@pytest.mark.parametrize("name, call", [
    ("linear", lambda m, x: m.nn.functional.linear(x, x.new_empty(7, 4))),
    ("conv2d", lambda m, x: m.nn.functional.conv2d(x.new_empty(1, 3, 9, 9), x.new_empty(5, 3, 3, 3), stride=2)),
    ("matmul", lambda m, x: x @ x.t()),
    ("max", lambda m, x: x.max(1)),
    ("softmax", lambda m, x: x.softmax(-1)),
    ("layer_norm", lambda m, x: m.nn.functional.layer_norm(x, (4,))),
    ("embedding", lambda m, x: m.nn.functional.embedding(x.new_empty(2, 5, dtype=m.int64), x)),
    ("sdpa", lambda m, x: m.nn.functional.scaled_dot_product_attention(*(x.new_empty(2, 4, 6, 8),) * 3)),
    ("cat", lambda m, x: m.cat([x, x], 1)),
    ("sort", lambda m, x: m.sort(x, 0)),
    ("cross_entropy", lambda m, x: m.nn.functional.cross_entropy(x, x.new_empty(3, dtype=m.int64))),
])
def test_common_ops_match_torch(name, call):
    got = call(pyctorch, pyctorch.empty(3, 4, device="meta"))
    want = call(torch, torch.empty(3, 4, device="meta"))
    assert_same(got, want, values=False, what=name)


# ---- every op of the table ----

class MetaShim:
    """The fuzzer's `torch` name, with the tensors its programs make (torch.tensor / torch.zeros) moved to meta."""

    def __init__(self, module):
        self._m = module

    def __getattr__(self, name):
        attr = getattr(self._m, name)
        if name in ("tensor", "zeros"):
            return lambda *a, **k: attr(*a, **k).to("meta")
        return attr


def _replay(lines, module):
    ns = {"torch": MetaShim(module), "nan": math.nan, "inf": math.inf}
    results = []
    for line in lines:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(line, "<meta>", "exec"), ns)
        except Exception as e:  # noqa: BLE001 -- compared by kind below
            return results, e
        target = line.split(" = ", 1)[0]
        results.append((target, meta_info(ns.get(target))))
    return results, None


def strip_meta(results):
    def strip(info):
        if isinstance(info, list):
            return [strip(x) for x in info]
        return info[:2] if isinstance(info, tuple) else info
    return [(name, strip(info)) for name, info in results]


def _replay_cpu(lines):
    ns = {"torch": torch, "nan": math.nan, "inf": math.inf}
    results = []
    for line in lines:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(line, "<cpu>", "exec"), ns)
        except Exception as e:  # noqa: BLE001
            return results, e
        target = line.split(" = ", 1)[0]
        results.append((target, meta_info(ns.get(target))))
    return results, None


def _torch_cpu_raises(lines):
    ns = {"torch": torch, "nan": math.nan, "inf": math.inf}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for line in lines:
                exec(compile(line, "<cpu>", "exec"), ns)
    except Exception:  # noqa: BLE001
        return True
    return False


# Ops whose meta results differ from torch's for a documented reason (the fallback runs the CPU kernel on zeros).
META_DIVERGENCES = {
    # with output_size, torch's meta kernel trusts it; the result's shape otherwise depends on the repeats' values,
    # so pyctorch refuses meta repeats as torch does without output_size
    "repeat_interleave": "data-dependent",
    "repeat_interleave_idx": "data-dependent",
}


@requires_torch
@pytest.mark.parametrize("entry", [e for e in fz.ENTRIES if fz.has_torch_counterpart(e)], ids=lambda e: e["id"])
def test_every_op_on_meta_matches_torch(entry):
    @seed(zlib.crc32(entry["id"].encode()))  # the same programs in every process
    @settings(max_examples=3, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data):
        prog = fz.Program(data)
        prog.ns_t = None  # generate the program only; the CPU comparison is test_fuzz's job
        try:
            fz.fuzz_call(prog, entry)
        except fz.Divergence:
            return
        with open(fz.LOG_PATH + ".meta", "w") as f:  # the program, for a crash's post-mortem
            f.write("\n".join(prog.lines) + "\n")
        got, perr = _replay(prog.lines, pyctorch)
        want, terr = _replay(prog.lines, torch)
        if terr is not None:
            return  # torch's meta device refuses (or has no kernel): pyctorch may refuse or give shapes
        if perr is not None:
            if entry["id"] in META_DIVERGENCES or _torch_cpu_raises(prog.lines):
                return  # torch's meta kernels skip some checks its CPU kernels make (dtype support): we keep the CPU's
            raise AssertionError(f"pyctorch raised {type(perr).__name__}({perr}) where torch's meta device returned"
                                 f"\nprogram:\n" + "\n".join(prog.lines))
        if got != want:
            # torch's meta kernels differ from its own CPU kernels in a few places (nansum over dim=[]): pyctorch's
            # meta results are its CPU kernels', so they must then be torch's CPU results
            cpu, cerr = _replay_cpu(prog.lines)
            assert cerr is None and strip_meta(got) == strip_meta(cpu), "\n".join(prog.lines)

    run()


# ---- the Python composites (PCT_COMPOSITE_PY, pyctorch/_composites.py): not in _C._op_table(), so not reached by the
# fuzzer's generator above; their registry samples (tests/samples.py, "op") run on meta inputs instead (a factory's
# sample makes it on the device of its `like` input): torch's meta shapes and dtypes, or its error kind where its meta
# device refuses (a shape that depends on the values) ----
def _py_cases():
    return [pytest.param(e, k, id=f"{e['id']}-{k}") for e in SR.PY_TABLE for k, _ in SR.samples_for(e["id"], "op")]


# Python composites whose meta results differ from torch's meta device, each for its reason: torch's own
# implementation reads values where pyctorch's does not, so torch's meta device refuses (NotImplementedError, no meta
# kernel for the value-reading op) where pyctorch gives the shapes its CPU gives. Checked as they are: an entry that
# starts to agree with torch fails, and must go.
PY_META_DIVERGENCES = {
    # torch's cov warns when the degrees of freedom are <= 0, a check on a tensor's value (aten::equal); corrcoef is
    # a cov. pyctorch's check reads shapes only (an integer count without weights).
    ("cov", 0): "torch's degrees-of-freedom check reads a value", ("cov", 1): "same as cov 0",
    ("corrcoef", 0): "corrcoef is a cov (cov 0)", ("corrcoef", 1): "corrcoef is a cov (cov 0)",
    ("corrcoef", 2): "corrcoef is a cov (cov 0)",
    # torch's combinations picks the index tuples with masked_select over a mask tensor (a shape that depends on
    # values); pyctorch's are enumerated on the host from the length and r, so the shape is known
    **{("combinations", k): "torch selects with masked_select (data-dependent on its meta device)" for k in range(3)},
}


def _outcome_on(T, op, k, sample, device):
    xs = SR.make_inputs(T, sample, SR.arrays(op, k, sample), requires_grad=False, device=device)
    return outcome(lambda: SR.call(T, sample, xs))  # (pyctorch has no default meta device: a call's constants are CPU)


def _to_meta(x):
    """torch's CPU result as the meta result it stands for (shapes and dtypes compared, the device meta)."""
    if isinstance(x, (tuple, list)):
        return type(x)(_to_meta(v) for v in x) if type(x) in (tuple, list) else type(x)([_to_meta(v) for v in x])
    return x.to("meta") if isinstance(x, torch.Tensor) else x


@requires_torch
@pytest.mark.parametrize("entry,k", _py_cases())
def test_python_composite_on_meta_matches_torch(entry, k):
    op, sample = entry["id"], SR.SAMPLES[entry["id"]][k]
    got, want = _outcome_on(pyctorch, op, k, sample, "meta"), _outcome_on(torch, op, k, sample, "meta")
    if (op, k) in PY_META_DIVERGENCES:
        assert isinstance(want, NotImplementedError) and not isinstance(got, BaseException), (got, want)
        assert_same(got, _to_meta(_outcome_on(torch, op, k, sample, "cpu")), values=False)
    elif isinstance(got, BaseException) and not isinstance(want, BaseException):
        # torch's meta kernels skip checks its CPU kernels make (dtypes, a src's shape): pyctorch's meta path is its
        # CPU path, so it must then refuse as torch's CPU does
        assert_same(got, _outcome_on(torch, op, k, sample, "cpu"), values=False)
    elif isinstance(got, BaseException) and isinstance(want, BaseException) and type(got) is not type(want):
        assert_same(got, _outcome_on(torch, op, k, sample, "cpu"), values=False)  # (clamp(): ValueError on meta)
    else:
        assert_same(got, want, values=False)
    if any(isinstance(i, SR.In) for i in sample.inputs):
        assert all(t.is_meta for t in SR.tensors(got)), got
