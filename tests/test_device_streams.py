"""The backends' device services (Note [Backends], Note [Streams] in csrc/aten/backend.h): synchronize, streams and
advanced indexing through each backend's slots, and torch.cpu's stream API built on them."""
import pytest

import pyctorch
from conftest import cuda_refusal, requires_no_cuda_device

C = pyctorch._C


@pytest.mark.parametrize("device", ["cpu", "meta", pyctorch.device("cpu")])
def test_single_stream_backends(device):
    assert C._device_synchronize(device) is None
    assert C._stream_new(device) == 0
    assert C._stream_new(device, -1) == 0
    assert C._current_stream(device) == 0
    assert C._set_current_stream(device, 0) is None
    assert C._stream_synchronize(device, 0) is None
    assert C._stream_query(device, 0) is True
    for call in (C._set_current_stream, C._stream_synchronize, C._stream_query):
        with pytest.raises(RuntimeError, match="one stream .id 0.; got stream id 7"):
            call(device, 7)


@requires_no_cuda_device
def test_a_device_not_usable_refuses_like_torch():
    refusal, message = cuda_refusal()
    with pytest.raises(refusal, match=message):
        C._device_synchronize("cuda")
    with pytest.raises(refusal, match=message):
        C._current_stream("cuda:0")
    with pytest.raises(TypeError):
        C._device_synchronize(1.5)


def test_cpu_stream_api():
    cpu = pyctorch.cpu
    default = cpu.current_stream()
    assert cpu.current_stream() is default
    s = cpu.Stream()
    assert s.stream_id == 0 and s.query() is True and s.synchronize() is None
    with cpu.stream(s) as r:
        assert r is None
        assert cpu.current_stream() is s
        with cpu.stream(None):
            assert cpu.current_stream() is s
    assert cpu.current_stream() is default
    assert cpu.synchronize() is None and cpu.synchronize("cpu") is None
    e = cpu.Event()
    assert e.query() is True and e.record() is None and e.wait() is None and e.synchronize() is None
    assert cpu.is_initialized() and cpu.set_device("cpu") is None


def test_cpu_module_names_are_torchs():
    torch = pytest.importorskip("torch")
    # get_capabilities reads the CPU's feature flags: not built (issue note)
    assert set(torch.cpu.__all__) - {"get_capabilities"} <= set(pyctorch.cpu.__all__)
    s = torch.cpu.Stream()
    with torch.cpu.stream(s):
        assert torch.cpu.current_stream() is s


def test_indexing_runs_in_the_operands_backend():
    x = pyctorch.arange(12.0).reshape(4, 3)
    i = pyctorch.tensor([0, 2])
    assert x[i].tolist() == [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]]
    m = pyctorch.empty(4, 3, device="meta")
    r = m[i]
    assert r.device.type == "meta" and tuple(r.shape) == (2, 3)
    m[i] = pyctorch.ones(3)
    m.index_put_((i,), pyctorch.ones(3, device="meta"), accumulate=True)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        x[pyctorch.tensor([0], device="meta")] = 1.0
    with pytest.raises(IndexError):
        m[pyctorch.tensor([9])]
