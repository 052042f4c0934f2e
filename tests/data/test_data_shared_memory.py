"""Shared-memory storages (Tensor.share_memory_, UntypedStorage.share_memory_ / is_shared /
_share_fd_cpu_ / _new_shared_fd_cpu / _new_shared) and tensors sent between processes
through pyctorch.multiprocessing without a copy; pin_memory on a CPU-only build."""
import gc
import multiprocessing
import os
import pickle

import numpy as np
import pytest

from conftest import requires_torch, torch
from data_helpers import our_shm_entries, shared_mappings, write_through_queue

import pyctorch
import pyctorch.multiprocessing as pmp


def test_share_memory_moves_storage_in_place():
    t = pyctorch.arange(12.0).reshape(3, 4)
    v = t[1:, 1:3]  # a view: same storage struct
    before = t.data_ptr()
    assert not t.is_shared() and not v.is_shared()
    assert t.untyped_storage().resizable()
    assert t.share_memory_() is t
    assert t.is_shared() and v.is_shared() and t.untyped_storage().is_shared()
    assert t.data_ptr() != before  # new memory ...
    assert v.data_ptr() - t.data_ptr() == 5 * 4  # ... same offsets
    assert t.tolist() == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]
    assert not t.untyped_storage().resizable()
    ptr = t.data_ptr()
    t.share_memory_()  # already shared: nothing moves
    assert t.data_ptr() == ptr
    v.fill_(-1.0)
    assert t[1, 1].item() == -1.0


def test_shared_storage_is_not_resizable():
    t = pyctorch.zeros(4).share_memory_()
    with pytest.raises(RuntimeError, match="not resizable"):
        pyctorch.add(pyctorch.ones(100), 1.0, out=t)  # an out= that must grow its storage


def test_share_memory_of_numpy_backed_tensor_copies_out():
    a = np.arange(4.0)
    t = pyctorch.from_numpy(a)
    t.share_memory_()
    t[0] = 9.0
    assert a[0] == 0.0 and t[0].item() == 9.0  # as in torch: the tensor left the array's memory
    assert t.is_shared()


def test_share_memory_refuses_while_exported():
    t = pyctorch.arange(6.0)
    m = memoryview(t.untyped_storage())
    with pytest.raises(BufferError):
        t.share_memory_()
    m.release()
    a = t.numpy()  # a numpy view counts as an export too: moving would leave it dangling
    with pytest.raises(BufferError):
        t.share_memory_()
    del a
    t.share_memory_()
    assert t.is_shared() and t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert t.numpy().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_empty_and_every_dtype_share():
    e = pyctorch.empty(0).share_memory_()
    assert e.is_shared() and e.numel() == 0
    for name in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"):
        t = pyctorch.ones(5, dtype=getattr(pyctorch, name)).share_memory_()
        assert t.is_shared() and t.dtype == getattr(pyctorch, name)
        assert t.float().tolist() == [1.0] * 5


def test_storage_fd_roundtrip_in_process():
    s = pyctorch.UntypedStorage._new_shared(16)
    assert s.is_shared() and bytes(s) == b"\0" * 16 and s.nbytes() == 16
    fd, n = s._share_fd_cpu_()
    assert n == 16 and fd >= 0
    s2 = pyctorch.UntypedStorage._new_shared_fd_cpu(fd, n)
    assert s2.data_ptr() != s.data_ptr() and s2.is_shared()
    memoryview(s2)[3] = 77
    assert bytes(s)[3] == 77  # two mappings of one memory
    os.fstat(fd)  # the storage still owns its descriptor
    with pytest.raises(RuntimeError, match="fewer than"):
        pyctorch.UntypedStorage._new_shared_fd_cpu(fd, 1 << 20)
    with pytest.raises(RuntimeError):
        pyctorch.UntypedStorage._new_shared_fd_cpu(-1, 4)
    with pytest.raises(RuntimeError):
        pyctorch.UntypedStorage._new_shared_fd_cpu(fd, -4)
    with pytest.raises(RuntimeError):
        pyctorch.UntypedStorage._new_shared(-1)


def test_no_descriptor_or_mapping_outlives_its_storages():
    gc.collect()
    before = shared_mappings()
    shm_before = our_shm_entries()
    ts = [pyctorch.rand(100, 100).share_memory_() for _ in range(20)]
    fd, n = ts[0].untyped_storage()._share_fd_cpu_()
    extra = pyctorch.UntypedStorage._new_shared_fd_cpu(fd, n)
    fds, maps = shared_mappings()
    assert fds >= before[0] + 21 and maps >= before[1] + 21
    del ts, extra
    gc.collect()
    assert shared_mappings() == before
    assert our_shm_entries() == shm_before  # memfd: no names in /dev/shm at all


def test_plain_pickle_still_copies():
    t = pyctorch.arange(5.0)
    u = pickle.loads(pickle.dumps(t))
    assert u.tolist() == t.tolist() and not t.is_shared() and not u.is_shared()
    p = pyctorch.nn.Parameter(pyctorch.ones(2))
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, pyctorch.nn.Parameter) and q.requires_grad


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tensor_through_queue_is_zero_copy(method):
    ctx = pmp.get_context(method)
    q_in, q_out = ctx.Queue(), ctx.Queue()
    t = pyctorch.zeros(10)
    v = t[2:6]
    p = ctx.Process(target=write_through_queue, args=(q_in, q_out))
    p.start()
    try:
        q_in.put((t, v, t.untyped_storage()))
        shared, offset, same_storage, nbytes, seen = q_out.get(timeout=60)
        assert shared and offset == 8 and same_storage and nbytes == 40 and seen == [0.0] * 10
        assert q_out.get(timeout=60) == "written"
        assert t.is_shared()  # sending moved it to shared memory, once
        assert t.tolist() == [42.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # the child's writes
        q_in.put("bye")
    finally:
        p.join(60)
    assert p.exitcode == 0


def test_parameter_and_requires_grad_through_forking_pickler():
    from multiprocessing.reduction import ForkingPickler
    p = pyctorch.nn.Parameter(pyctorch.ones(3))
    leaf = pyctorch.ones(2, requires_grad=True)
    q, l2 = ForkingPickler.loads(ForkingPickler.dumps((p, leaf)))
    assert isinstance(q, pyctorch.nn.Parameter) and q.requires_grad and q.is_shared()
    assert l2.requires_grad and l2.is_leaf
    with pytest.raises(RuntimeError, match="Cowardly refusing"):
        ForkingPickler.dumps(leaf * 2)


def test_sharing_strategy_api():
    assert pmp.get_sharing_strategy() == "file_descriptor"
    assert "file_descriptor" in pmp.get_all_sharing_strategies()
    pmp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError):
        pmp.set_sharing_strategy("bogus")
    assert pmp.Queue is not None and pmp.get_context is multiprocessing.get_context
    assert pyctorch.multiprocessing is pmp


def test_pin_memory_without_accelerator():
    t = pyctorch.ones(3)
    assert t.is_pinned() is False
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
        t.pin_memory()


@requires_torch
def test_pin_memory_matches_torch_without_accelerator():
    t = torch.ones(3)
    assert t.is_pinned() is pyctorch.ones(3).is_pinned()
    with pytest.raises(RuntimeError) as te:
        t.pin_memory()
    with pytest.raises(RuntimeError) as pe:
        pyctorch.ones(3).pin_memory()
    assert str(pe.value) == str(te.value)


@requires_torch
def test_share_memory_matches_torch_semantics():
    for m in (pyctorch, torch):
        x = m.arange(4.0)
        v = x[1:3]
        v.share_memory_()
        assert x.is_shared() and v.is_shared()  # the storage moved, for every view
        assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
