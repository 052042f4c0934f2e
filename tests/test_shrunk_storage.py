"""Tensors whose storage was shrunk under them (storage.resize_: FSDP frees parameters with resize_(0)) raise
RuntimeError when an op or a host read needs their elements, never read freed memory (Note [Shrunk storages],
csrc/python/pyobjects.h); what does not read the elements still works. A storage resized back makes them usable.
(pyctorch's check sits where op-table calls parse their arguments, so a view op refuses such a tensor too, where
torch makes the view.)"""
import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T


def _shrunk(m, nbytes):
    x = m.arange(6, dtype=m.float32).reshape(2, 3)
    x.untyped_storage().resize_(nbytes)
    return x


def _scalar(m):
    s = m.tensor(2.0)
    s.untyped_storage().resize_(0)
    return s


READS = [  # (name, fn(m, x), torch raises too: the others crash torch 2.13 itself, a segfault)
    ("add", lambda m, x: x + 1, False), ("sum", lambda m, x: x.sum(), False), ("clone", lambda m, x: x.clone(), False),
    ("cat", lambda m, x: m.cat([x, x]), False), ("matmul", lambda m, x: x @ m.ones(3, 2), False),
    ("copy_from", lambda m, x: m.ones(2, 3).copy_(x), False), ("fill_", lambda m, x: x.fill_(1), False),
    ("as_scalar", lambda m, x: m.ones(2).add(1, alpha=_scalar(m)), False),
    ("as_float", lambda m, x: m.zeros(3).uniform_(_scalar(m), 9.0), False), ("item", lambda m, x: _scalar(m).item(), True),
    ("float", lambda m, x: float(_scalar(m)), True), ("bool", lambda m, x: bool(_scalar(m)), True),
    ("tolist", lambda m, x: x.tolist(), False), ("numpy", lambda m, x: x.numpy(), False), ("repr", lambda m, x: repr(x), False),
    ("index_select", lambda m, x: x.index_select(0, m.tensor([1])), False),
]


@pytest.mark.parametrize("nbytes", [0, 8])
@pytest.mark.parametrize("name,fn,_", READS, ids=[r[0] for r in READS])
def test_reads_raise(name, fn, _, nbytes):
    x = _shrunk(P, nbytes)
    with pytest.raises(RuntimeError, match="not allocated|fewer than"):
        fn(P, x)


def test_what_needs_no_elements_works_and_a_regrown_storage_reads_again():
    x = _shrunk(P, 0)
    assert x.shape == (2, 3) and x.stride() == (3, 1) and x.untyped_storage().nbytes() == 0
    assert x.requires_grad_().requires_grad and x.dim() == 2 and x.numel() == 6
    y = _shrunk(P, 0).requires_grad_(False)
    y.untyped_storage().resize_(24)
    y.fill_(2.0)
    np.testing.assert_array_equal((y + 1).numpy(), np.full((2, 3), 3.0, np.float32))


TORCH_RAISES = [r[:2] for r in READS if r[2]]


@requires_torch
@pytest.mark.parametrize("name,fn", TORCH_RAISES, ids=[r[0] for r in TORCH_RAISES])
def test_unallocated_like_torch(name, fn):
    with pytest.raises(RuntimeError) as theirs:
        fn(T, _shrunk(T, 0))
    with pytest.raises(RuntimeError) as ours:
        fn(P, _shrunk(P, 0))
    assert "data is not allocated" in str(theirs.value) and "data is not allocated" in str(ours.value)
