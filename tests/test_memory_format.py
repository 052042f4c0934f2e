"""channels_last_3d, resize_ with a memory format, nn.Module.to's full signature (torch._C._nn._parse_to) and
nn.utils.convert_conv{2,3}d_weight_memory_format, against torch, plus stride checks computed by hand."""
import warnings

import numpy as np
import pytest

from conftest import HAVE_TORCH, requires_torch

import pyctorch

if HAVE_TORCH:
    import torch

LIBS = [pyctorch] + ([torch] if HAVE_TORCH else [])
SHAPE5 = (2, 3, 4, 5, 6)


def _cl3d_strides(n, c, d, h, w):
    return (d * h * w * c, 1, h * w * c, w * c, c)


def test_channels_last_3d_strides_by_hand():
    x = pyctorch.arange(float(np.prod(SHAPE5))).reshape(SHAPE5)
    y = x.contiguous(memory_format=pyctorch.channels_last_3d)
    assert y.stride() == _cl3d_strides(*SHAPE5)
    assert y.is_contiguous(memory_format=pyctorch.channels_last_3d) and not y.is_contiguous()
    assert not x.is_contiguous(memory_format=pyctorch.channels_last_3d)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.contiguous(memory_format=pyctorch.channels_last_3d) is y
    assert repr(pyctorch.channels_last_3d) == "torch.channels_last_3d"
    import pickle
    assert pickle.loads(pickle.dumps(pyctorch.channels_last_3d)) is pyctorch.channels_last_3d


def _layouts(lib):
    x = lib.arange(float(np.prod(SHAPE5))).reshape(SHAPE5)
    y = x.contiguous(memory_format=lib.channels_last_3d)
    cl = lib.channels_last_3d
    out = {
        "contiguous": y.stride(),
        "empty": lib.empty(SHAPE5, memory_format=cl).stride(),
        "empty_zero": lib.empty((2, 0, 3, 1, 4), memory_format=cl).stride(),
        "empty_like": lib.empty_like(x, memory_format=cl).stride(),
        "preserve": lib.empty_like(y).stride(),
        "clone": y.clone().stride(),
        "clone_cl3d": x.clone(memory_format=cl).stride(),
        "add": (y + 1).stride(),
        "binary_mixed": (y + x).stride(),
        "to_alias": y.to(memory_format=cl) is y,
        "to_float64": y.to(lib.float64).stride(),
        "to_contig": y.to(memory_format=lib.contiguous_format).stride(),
        "is_cl3d_size1": lib.empty(1, 3, 1, 1, 1).is_contiguous(memory_format=cl),
        "dim_order": y.dim_order(),
        "zeros_like": lib.zeros_like(y).stride(),
        "rand_like": lib.rand_like(x, memory_format=cl).stride(),
        "permuted_is_cl3d": x.permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3).is_contiguous(
            memory_format=cl),
    }
    for name, fn in [("rank4_contiguous", lambda: lib.randn(2, 3, 4, 5).contiguous(memory_format=cl)),
                     ("rank3_empty", lambda: lib.empty(2, 3, 4, memory_format=cl)),
                     ("rank4_to", lambda: lib.randn(2, 3, 4, 5).to(memory_format=cl))]:
        try:
            fn()
            out[name] = None
        except RuntimeError as e:
            out[name] = str(e)
    return out


def test_channels_last_3d_layouts():
    ours = _layouts(pyctorch)
    assert ours["empty"] == _cl3d_strides(*SHAPE5)
    assert ours["rank3_empty"] == "required rank 5 tensor to use channels_last_3d format"
    if HAVE_TORCH:
        assert ours == _layouts(torch)


def _resize(lib):
    out = []
    for mf in [lib.channels_last, lib.contiguous_format, None]:
        t = lib.randn(3)
        out.append(t.resize_(2, 3, 4, 5, memory_format=mf).stride())
    out.append(lib.randn(2, 3, 4, 5, 6).resize_(SHAPE5, memory_format=lib.channels_last_3d).stride())
    template = lib.randn(2, 3, 4, 5)
    out.append(lib.randn(7).resize_as_(template, memory_format=lib.channels_last).stride())
    for args, mf in [((2, 3, 4, 5), lib.preserve_format), ((2, 3, 4, 5), lib.channels_last_3d),
                     ((4, 5), lib.channels_last)]:
        try:
            lib.randn(3).resize_(*args, memory_format=mf)
            out.append(None)
        except RuntimeError as e:
            out.append(str(e))
    try:
        lib.randn(3).resize_(3, memory_format=3)
    except TypeError as e:
        out.append(type(e).__name__)
    x = lib.randn(4, requires_grad=True)
    try:
        x.resize_(2, 3, 4, 5, memory_format=lib.channels_last)
    except RuntimeError as e:
        out.append(str(e))
    return out


def test_resize_with_memory_format():
    ours = _resize(pyctorch)
    assert ours[0] == (60, 1, 15, 3)
    if HAVE_TORCH:
        assert ours == _resize(torch)


def test_resize_keeps_values_of_the_leading_elements():
    t = pyctorch.arange(120.0)
    r = t.resize_(2, 3, 4, 5, memory_format=pyctorch.channels_last)
    # the storage is kept: element k of memory is still k, now read through channels_last strides
    np.testing.assert_array_equal(r.permute(0, 2, 3, 1).contiguous().reshape(-1).numpy(), np.arange(120.0))


def _module_to(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Linear(4, 2))
    out = []
    m.to(memory_format=lib.channels_last)
    out.append([tuple(p.stride()) for p in m.parameters()])
    m.to(lib.float64)
    out.append((m[0].weight.dtype, m[1].num_batches_tracked.dtype, m[0].weight.stride()))
    m.to("cpu", lib.float32, True)
    out.append(m[0].weight.dtype)
    m.to(lib.ones(2, dtype=lib.float16))
    out.append(m[2].weight.dtype)
    m.to(device="cpu", dtype=lib.float32, non_blocking=False, memory_format=lib.contiguous_format)
    out.append([tuple(p.stride()) for p in m.parameters()])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.to(lib.complex64)
        out.append((m[0].weight.dtype, m[1].num_batches_tracked.dtype, len(w), str(w[0].message)[:40]))
    for args, kwargs in [((lib.int32,), {}), (("cpu", "cpu"), {}), (("cpu",), {"copy": True}), (({},), {}),
                         (("cpu",), {"bogus": 1}), (("cpu", lib.float32, True, False, 1), {})]:
        try:
            m.to(*args, **kwargs)
            out.append(None)
        except (TypeError, RuntimeError) as e:
            out.append((type(e).__name__, str(e).splitlines()[0]))
    return out


def test_module_to_signatures():
    ours = _module_to(pyctorch)
    assert ours[0][0] == (27, 1, 9, 3)
    if HAVE_TORCH:
        assert repr(ours) == repr(_module_to(torch))


@requires_torch
def test_parse_to_matches_torch():
    for lib_args in [lambda L: ((L.float64,), {}), lambda L: (("cpu", L.float16, True), {}),
                     lambda L: ((), {"memory_format": L.channels_last}), lambda L: ((L.ones(2, dtype=L.int8),), {}),
                     lambda L: ((), {"device": "cpu", "non_blocking": True}), lambda L: ((None, L.float32), {})]:
        a, k = lib_args(pyctorch)
        ta, tk = lib_args(torch)
        ours = pyctorch._C._nn._parse_to(*a, **k)
        theirs = torch._C._nn._parse_to(*ta, **tk)
        assert [str(x) for x in ours] == [str(x) for x in theirs]


def _conv_formats(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2),
                                                                     lib.nn.Conv3d(2, 2, 2),
                                                                     lib.nn.ConvTranspose3d(2, 1, 2)),
                          lib.nn.Linear(3, 3))
    w = m[0].weight
    before = [p.detach().clone() for p in m.parameters()]
    assert lib.nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last) is m
    lib.nn.utils.convert_conv3d_weight_memory_format(m, lib.channels_last_3d)
    assert m[0].weight is w
    for a, b in zip(before, m.parameters()):
        assert lib.equal(a, b)
    x = lib.randn(1, 3, 6, 6)
    y = m[1][0](m[0](x))
    return [tuple(p.stride()) for p in m.parameters()], y.detach().numpy()


def test_convert_conv_weight_memory_format():
    strides, y = _conv_formats(pyctorch)
    assert strides[0] == (27, 1, 9, 3) and strides[4] == (16, 1, 8, 4, 2)
    if HAVE_TORCH:
        tstrides, ty = _conv_formats(torch)
        assert strides == tstrides
        np.testing.assert_allclose(y, ty, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
def test_conv_on_channels_last_inputs_matches_contiguous(fmt):
    shape, w, conv = ((2, 3, 5, 6), (4, 3, 2, 2), pyctorch.nn.functional.conv2d) if fmt == "channels_last" else \
        ((2, 3, 5, 6, 4), (4, 3, 2, 2, 2), pyctorch.nn.functional.conv3d)
    mf = getattr(pyctorch, fmt)
    x, k = pyctorch.randn(shape), pyctorch.randn(w)
    ref = conv(x, k)
    got = conv(x.contiguous(memory_format=mf), k.contiguous(memory_format=mf))
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
