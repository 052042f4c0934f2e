"""Issue 15's memory-safety and conformance fixes, each checked against torch where torch is installed and by hand
always: overflow-proof bound checks (Note [Checked bounds]), DLPack exports that pin their memory, tensors over
read-only NumPy memory, torch's gradient layout contract, and the smaller divergences outside testing found."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pyctorch
from conftest import HAVE_TORCH, assert_same, requires_torch, torch

BIG = 2 ** 63 - 1


def _both(fn):
    """fn(pyctorch) and fn(torch): results equal, or the same exception type and message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exp, exp_exc = fn(torch), None
        except Exception as e:  # noqa: BLE001 - torch's error is the expectation
            exp, exp_exc = None, e
        try:
            got, got_exc = fn(pyctorch), None
        except Exception as e:  # noqa: BLE001
            got, got_exc = None, e
    if exp_exc is not None:
        assert got_exc is not None, f"torch raised {type(exp_exc).__name__}: {exp_exc}; pyctorch returned {got!r}"
        assert type(got_exc) is type(exp_exc), f"{type(got_exc).__name__}: {got_exc} vs torch's {exp_exc}"
        assert str(got_exc).split("\n")[0] == str(exp_exc).split("\n")[0]
        return
    if got_exc is not None:
        raise got_exc
    assert_same(got, exp)


# ---- 1. bound checks that cannot overflow ----

def test_narrow_past_the_end_is_refused():
    for start, length in ((1, BIG), (-2, BIG), (2, BIG), (0, 3)):
        with pytest.raises(RuntimeError, match=r"exceeds dimension size \(2\)"):
            pyctorch.ones(2).narrow(0, start, length)
    assert pyctorch.ones(2).narrow(0, 2, 0).shape == (0,)


def test_split_sizes_that_wrap_to_the_size_are_refused():
    sizes = [2 ** 62, 2 ** 62, 2 ** 62, 2 ** 62 + 4]  # sums to 4 modulo 2**64
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 4"):
        pyctorch.ones(4).split(sizes)


def test_no_view_reaches_past_its_storage():
    # the view constructor itself refuses geometry outside the storage, whatever op computed it
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        pyctorch.ones(4).as_strided((3,), (2,))
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        pyctorch.ones(1).set_(pyctorch.ones(4).untyped_storage(), 3, (2,), (1,))
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        pyctorch.ones(4).as_strided((2, 2), (BIG, 1))
    # a dtype view measures in its own elements
    assert pyctorch.tensor([1, 2], dtype=pyctorch.int16).view(pyctorch.bool).shape == (4,)


@requires_torch
@pytest.mark.parametrize("case", [
    lambda m: m.ones(2).narrow(0, 1, BIG),
    lambda m: m.ones(2).narrow_copy(0, 1, BIG),
    lambda m: m.ones(4).as_strided((2,), (BIG,)),
    lambda m: m.ones(4).as_strided((BIG,), (1,)),
    lambda m: m.ones(4).as_strided((2,), (1,), BIG),
    lambda m: m.ones(4).unfold(0, BIG, 1),
    lambda m: m.ones(4).unfold(0, 2, BIG),
    lambda m: m.ones(4).split(BIG),
    lambda m: m.ones(4)[BIG - 1:BIG],
    lambda m: m.ones(4).select(0, BIG),
    lambda m: m.ones(4).select(0, -BIG),
    lambda m: m.ones(1).expand(BIG).shape,
    lambda m: m.empty(2 ** 31, 2 ** 31, 4),
    lambda m: m.ones(4).view(2 ** 62, 4),
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 4), m.ones(1, 1, 1), padding=BIG),
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 4), m.ones(1, 1, 1), stride=BIG),
    lambda m: m.ones(4).set_(m.ones(4).untyped_storage(), 0, (2, 2), (BIG, 1)),
], ids=lambda f: None)
def test_overflowing_arguments_like_torch(case):
    _both(case)


def test_repeat_product_overflow():
    # torch wraps 2 * (2**63 - 1) to -2 and reports a negative dimension; pyctorch names the overflow
    with pytest.raises(RuntimeError, match="integer multiplication overflow"):
        pyctorch.ones(2).repeat(BIG)
    with pytest.raises(RuntimeError, match="integer multiplication overflow"):
        pyctorch.ones(8).repeat(2 ** 62, -2 ** 62)  # wrapped to 0 before: an empty result


def test_conv_dilation_overflow_is_an_error_not_a_result():
    # torch wraps here and returns a (1, 1, 5) result; pyctorch refuses the overflowing geometry
    with pytest.raises(RuntimeError):
        pyctorch.nn.functional.conv1d(pyctorch.ones(1, 1, 4), pyctorch.ones(1, 1, 2), dilation=BIG)


# ---- 4. DLPack exports pin their memory ----

def test_dlpack_export_blocks_resize_until_released():
    t = pyctorch.arange(8.0)
    a = np.from_dlpack(t)
    with pytest.raises(BufferError):
        t.resize_(1 << 16)
    with pytest.raises(BufferError):
        t.share_memory_()
    assert a.sum() == 28.0
    del a
    t.resize_(1 << 16)  # released: the memory may move again
    assert t.shape == (1 << 16,)


def test_dlpack_capsule_outlives_set_():
    t = pyctorch.arange(4.0)
    cap = pyctorch.utils.dlpack.to_dlpack(t)
    t.set_(pyctorch.zeros(2))  # the capsule still holds the old storage
    back = pyctorch.utils.dlpack.from_dlpack(cap)
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_utils_dlpack_module():
    from pyctorch.utils import dlpack
    t = pyctorch.arange(6, dtype=pyctorch.int32).view(2, 3)
    u = dlpack.from_dlpack(dlpack.to_dlpack(t))
    assert u.tolist() == t.tolist() and u.dtype == pyctorch.int32
    u[0, 0] = 9
    assert t[0, 0].item() == 9  # shared, not copied
    assert dlpack.from_dlpack(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    assert int(dlpack.DLDeviceType.kDLCPU) == 1 and int(dlpack.DLDeviceType.kDLCUDA) == 2
    with pytest.raises(TypeError):
        dlpack.to_dlpack(np.ones(2))
    if HAVE_TORCH:
        assert [(m.name, int(m)) for m in dlpack.DLDeviceType] == \
            [(m.name, int(m)) for m in torch.utils.dlpack.DLDeviceType]


# ---- 6. read-only NumPy memory ----

def _read_only_tensor():
    a = np.arange(4.0)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return a, pyctorch.from_numpy(a)


@pytest.mark.parametrize("write", [
    lambda t: t.add_(1), lambda t: t.zero_(), lambda t: t.fill_(2.0), lambda t: t.copy_(pyctorch.zeros(4, dtype=t.dtype)),
    lambda t: t.__setitem__(0, 5.0), lambda t: t.__setitem__(pyctorch.tensor([1, 2]), 5.0),
    lambda t: t[1:].mul_(2), lambda t: pyctorch.add(t, t, out=t), lambda t: t.uniform_(),
    lambda t: t.normal_(), lambda t: pyctorch.nn.init.zeros_(t), lambda t: t.clamp_(0, 1),
], ids=lambda f: None)
def test_writes_to_read_only_numpy_memory_raise(write):
    a, t = _read_only_tensor()
    with pytest.raises(RuntimeError, match="read-only"):
        write(t)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert (t + 1).tolist() == [1.0, 2.0, 3.0, 4.0]  # reads still work
    assert not t.numpy().flags.writeable
    view = memoryview(t)
    assert view.readonly
    with pytest.raises(TypeError):
        view[0] = 1.0  # the buffer export is read-only too


def test_read_only_memmap(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(16, dtype=np.float32).tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r")  # mapped read-only: a write would fault
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = pyctorch.from_numpy(mm)
    assert t.sum().item() == 120.0
    with pytest.raises(RuntimeError, match="read-only"):
        t.mul_(2)
    with pytest.raises(RuntimeError, match="read-only"):
        t[3] = 0
    assert t.clone().mul_(2).sum().item() == 240.0


def test_read_only_numpy_warns_once_like_torch():
    code = ("import warnings, numpy as np, {m}\n"
            "a = np.ones(2); a.flags.writeable = False\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    {m}.from_numpy(a); {m}.from_numpy(a); {m}.tensor(a)\n"
            "print(len(w)); print(w[0].message if w else '')\n")
    out = subprocess.run([sys.executable, "-c", code.format(m="pyctorch")], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).parent.parent)).stdout.splitlines()
    assert out[0] == "1" and out[1].startswith("The given NumPy array is not writable")
    if HAVE_TORCH:
        exp = subprocess.run([sys.executable, "-c", code.format(m="torch")], capture_output=True, text=True,
                             check=True).stdout.splitlines()
        assert out[0] == exp[0] and out[1] == exp[1].split(" (Triggered internally")[0]


# ---- gradient layout contract ----

def _modules(m):
    m.manual_seed(0)
    nn = m.nn
    return [
        (nn.Linear(4, 3), m.randn(2, 4)),
        (nn.Bilinear(3, 4, 2), (m.randn(2, 3), m.randn(2, 4))),
        (nn.Conv2d(3, 4, 3), m.randn(2, 3, 6, 6)),
        (nn.ConvTranspose2d(3, 2, 3), m.randn(1, 3, 4, 4)),
        (nn.Conv1d(2, 3, 2), m.randn(2, 2, 5)),
        (nn.Embedding(10, 4), m.tensor([[1, 2], [3, 1]])),
        (nn.LayerNorm(4), m.randn(3, 4)),
        (nn.BatchNorm1d(4), m.randn(3, 4)),
        (nn.GroupNorm(2, 4), m.randn(2, 4, 3)),
        (nn.LSTM(3, 5, num_layers=2), m.randn(4, 2, 3)),
        (nn.GRU(3, 4, batch_first=True), m.randn(2, 4, 3)),
        (nn.MultiheadAttention(8, 2), (m.randn(3, 2, 8),) * 3),
        (nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), m.randn(3, 2, 8)),
        (nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), (m.randn(3, 2, 8), m.randn(4, 2, 8))),
        (nn.Conv3d(2, 3, 2), m.randn(1, 2, 3, 3, 3)),
        (nn.ConvTranspose1d(2, 3, 3, stride=2), m.randn(2, 2, 4)),
        (nn.RNN(3, 4, bidirectional=True), m.randn(5, 2, 3)),
        (nn.LSTMCell(3, 4), m.randn(2, 3)),
        (nn.GRUCell(3, 4), m.randn(2, 3)),
        (nn.InstanceNorm2d(3, affine=True), m.randn(2, 3, 4, 4)),
        (nn.BatchNorm2d(3), m.randn(2, 3, 4, 4)),
        (nn.PReLU(3), m.randn(2, 3, 4)),
        (nn.Linear(5, 2, bias=False), m.randn(3, 5)),
        (nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 5 * 5, 3)),
         m.randn(2, 2, 5, 5)),
    ]


def _grad_strides(m):
    out = []
    for mod, x in _modules(m):
        y = mod(*x) if isinstance(x, tuple) else mod(x)
        y = y[0] if isinstance(y, tuple) else y
        y.float().square().sum().backward()
        out.append([(name, tuple(p.stride()), tuple(p.grad.stride())) for name, p in mod.named_parameters()])
    return out


def test_parameter_grads_take_the_parameter_layout():
    for per_module in _grad_strides(pyctorch):
        for name, pstride, gstride in per_module:
            assert gstride == pstride, f"{name}: grad strides {gstride} != parameter strides {pstride}"


@requires_torch
def test_parameter_grad_strides_like_torch():
    assert _grad_strides(pyctorch) == _grad_strides(torch)


def test_grad_layout_of_non_dense_and_channels_last_leaves():
    w = pyctorch.randn(2, 3, 4, 5).contiguous(memory_format=pyctorch.channels_last).requires_grad_()
    (w * pyctorch.randn(2, 3, 4, 5)).sum().backward()
    assert w.grad.stride() == w.stride()
    e = pyctorch.randn(3, 1).expand(3, 4).detach().requires_grad_()  # overlapping: the grad is contiguous
    (e * pyctorch.randn(4, 3).t()).sum().backward()
    assert e.grad.is_contiguous() and e.grad.shape == (3, 4)
    # create_graph keeps the layout fix differentiable
    x = pyctorch.randn(3, 4, requires_grad=True)
    lin = pyctorch.nn.Linear(4, 2)
    g, = pyctorch.autograd.grad(lin(x).sum(), lin.weight, create_graph=True)
    lin.weight.grad = None
    lin(x).pow(2).sum().backward(create_graph=True)
    assert lin.weight.grad.stride() == (4, 1) and lin.weight.grad.requires_grad
    lin.weight.grad.sum().backward()
    assert x.grad is not None


def test_lbfgs_on_an_lstm_flattens_grads():
    pyctorch.manual_seed(0)
    lstm = pyctorch.nn.LSTM(3, 4)
    opt = pyctorch.optim.LBFGS(lstm.parameters(), max_iter=3)
    x = pyctorch.randn(5, 2, 3)

    def closure():
        opt.zero_grad()
        loss = lstm(x)[0].square().mean()
        loss.backward()
        return loss

    first = closure().item()
    opt.step(closure)
    assert closure().item() < first
    assert all(p.grad.view(-1).numel() == p.numel() for p in lstm.parameters())


# ---- errors as torch's ----

@requires_torch
@pytest.mark.parametrize("case", [
    lambda m: m.zeros(2, device="xyz"),
    lambda m: m.zeros(2, device="cuda:"),
    lambda m: m.ones(2).to("xyz"),
    lambda m: m.device("xyz"),
    lambda m: m.zeros(3).index_put_((None,), m.ones(1)),
    lambda m: m.zeros(3, 3).index_put_((1,), m.ones(1)),
    lambda m: m.zeros(3).set_(None),
    lambda m: m.zeros(3).__setitem__(m.tensor([1, 0, 1], dtype=m.uint8), 1.0),
    lambda m: m.zeros(3).__setitem__(m.tensor([1, 0, 1], dtype=m.uint8), m.tensor(2.0)),
    lambda m: m.zeros(3).index_put_((m.tensor([1, 0, 1], dtype=m.uint8),), m.tensor(2.0)),
    lambda m: np.asarray(m.zeros(2, requires_grad=True)),
    lambda m: np.array(m.zeros(2, requires_grad=True)),
], ids=lambda f: None)
def test_errors_like_torch(case):
    _both(case)


def test_uint8_mask_with_tensor_values_is_deprecated_but_works():
    x = pyctorch.zeros(3)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        x[pyctorch.tensor([1, 0, 1], dtype=pyctorch.uint8)] = pyctorch.tensor([4.0, 5.0])
    assert x.tolist() == [4.0, 0.0, 5.0]


def test_numpy_force_of_a_tensor_that_requires_grad():
    t = pyctorch.ones(2, requires_grad=True)
    assert t.numpy(force=True).tolist() == [1.0, 1.0]
    assert np.asarray(t.detach()).tolist() == [1.0, 1.0]


def test_more_than_64_dimensions_is_a_clear_error():
    for fn in (lambda: pyctorch.zeros([1] * 65), lambda: pyctorch.zeros(*([1] * 65)),
               lambda: pyctorch.zeros(1).view([1] * 65), lambda: pyctorch.zeros([1] * 64).unsqueeze(0)):
        with pytest.raises(RuntimeError, match="at most 64 dimensions"):
            fn()
    nested = 0.0
    for _ in range(64):
        nested = [nested]
    assert pyctorch.tensor(nested).dim() == 64
    with pytest.raises(RuntimeError, match="at most 64 dimensions"):
        pyctorch.tensor([nested])


# ---- two Python numbers, clamp with tensor bounds, the missing factories ----

@pytest.mark.parametrize("expr", ["add(3, 2.5)", "add(2.5, 2.5)", "div(3, 2)", "true_divide(3, 2)", "mul(2, 3)",
                                  "sub(3, 2.5)", "mul(2.5, 2)", "add(True, True)", "div(7, 2, rounding_mode='floor')",
                                  "remainder(5, torch.tensor(3))"])
def test_two_python_numbers_follow_result_type(expr):
    r = eval(expr, {"torch": pyctorch, **{k: getattr(pyctorch, k) for k in ("add", "div", "true_divide", "mul", "sub",
                                                                           "pow", "remainder")}})
    assert r.dtype != pyctorch.float64  # the default dtype (float32) or an integral one, never double
    if HAVE_TORCH:
        exp = eval(expr, {"torch": torch, **{k: getattr(torch, k) for k in ("add", "div", "true_divide", "mul",
                                                                            "sub", "pow", "remainder")}})
        assert_same(r, exp)


def test_numbers_inside_formulas_keep_double_precision():
    # pow's backward computes exponent - 1 from the saved Python number: in double, as torch's C++ Scalar does
    x = pyctorch.tensor([1.7], dtype=pyctorch.float64, requires_grad=True)
    x.pow(1.1).backward()
    assert x.grad.item() == pytest.approx(1.1 * 1.7 ** 0.1, rel=1e-15)


CLAMP_CASES = [
    lambda m: m.clamp(m.tensor(0.5), m.zeros(1), m.ones(1)),
    lambda m: m.clamp(m.tensor(0.5), min=m.zeros(1)),
    lambda m: m.clip(m.tensor(0.5), max=m.zeros(2, 1)),
    lambda m: m.clamp(m.tensor([1, 2, 3]), min=m.tensor([1.5, 0, 0])),
    lambda m: m.clamp(m.tensor([1, 2, 3]), min=m.tensor(1)),
    lambda m: m.clamp(m.tensor([1.0, float("nan"), 5.0]), m.tensor([float("nan"), 0.0, 2.0]),
                      m.tensor([3.0, 3.0, float("nan")])),
    lambda m: m.clamp(m.arange(6.0).view(2, 3), m.tensor([[1.0], [4.0]]), m.tensor([2.0, 4.5, 3.0])),
    lambda m: m.tensor(0.5).clamp_(m.zeros(1)),
    lambda m: m.tensor([1, 2]).clamp_(m.tensor([1.5, 0.0])),
    lambda m: m.arange(4.0).clamp_(m.full((4,), 1.0), m.full((4,), 2.0)),
    lambda m: m.clamp(m.ones(2), m.zeros(2), 2.5),
    lambda m: m.clamp(m.ones(2), out=m.zeros(2), min=m.zeros(2)),
]


@requires_torch
@pytest.mark.parametrize("case", CLAMP_CASES, ids=lambda f: None)
def test_clamp_with_tensor_bounds_like_torch(case):
    _both(case)


def _clamp_grads(m):
    x = m.tensor([1.0, 2.0, 3.0, 0.5, 2.0], requires_grad=True)
    lo = m.tensor([1.0, 3.0, 0.0, 1.0, 2.5], requires_grad=True)
    hi = m.tensor([2.0, 3.0, 2.5, 0.5, 1.0], requires_grad=True)
    (m.clamp(x, lo, hi) * m.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
    return x.grad, lo.grad, hi.grad


def test_clamp_tensor_bound_gradients():
    gx, glo, ghi = _clamp_grads(pyctorch)
    # inside: x; below min < max: min; above max or max < min: max; min == max above x: nothing
    assert gx.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert glo.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]
    assert ghi.tolist() == [0.0, 0.0, 3.0, 4.0, 5.0]
    if HAVE_TORCH:
        for g, e in zip((gx, glo, ghi), _clamp_grads(torch)):
            assert_same(g, e)


@requires_torch
@pytest.mark.parametrize("case", [
    lambda m: m.empty_strided((2, 3), (1, 2)).stride(),
    lambda m: m.empty_strided((2, 3), (1, 2)).untyped_storage().nbytes(),
    lambda m: m.empty_strided((2, 3), (0, 0), dtype=m.int16).untyped_storage().nbytes(),
    lambda m: m.empty_strided((2, 0), (5, 1)).untyped_storage().nbytes(),
    lambda m: m.empty_strided((2, 3), (1,)),
    lambda m: m.empty_strided((2, -3), (1, 2)),
    lambda m: m.empty_strided((2, 3), (1, -2)),
    lambda m: m.empty_strided((2, 3), (3, 1), requires_grad=True).requires_grad,
    lambda m: m.empty_strided((2, 3), (3, 1))._base is None,
    lambda m: m.broadcast_tensors(m.zeros(2, 1), m.ones(3), m.tensor(2.0)),
    lambda m: m.broadcast_tensors(m.zeros(2), m.ones(3)),
    lambda m: m.broadcast_tensors(),
    lambda m: m.zeros(2, dtype=m.int32).new_tensor([1.5, 2]),
    lambda m: m.zeros(2).new_tensor([[1, 2]], dtype=m.float64),
    lambda m: m.zeros(2, dtype=m.int32).new_tensor(m.ones(2)),
    lambda m: m.zeros(2).new_tensor([1.0, 2.0], requires_grad=True).requires_grad,
], ids=lambda f: None)
def test_factories_like_torch(case):
    _both(case)


def test_broadcast_tensors_are_views_with_gradients():
    a = pyctorch.ones(2, 1, requires_grad=True)
    x, y = pyctorch.broadcast_tensors(a, pyctorch.zeros(3))
    assert x.shape == (2, 3) and x._base is not None
    x.sum().backward()
    assert a.grad.tolist() == [[3.0], [3.0]]
