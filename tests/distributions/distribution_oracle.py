"""Build a case in pyctorch and in torch and compare what comes out."""
import numpy as np
import pytest

import pyctorch as P
from conftest import HAVE_TORCH, torch as T


def np_of(t):
    """float64 (or int/bool) numpy copy of a tensor of either framework."""
    t = t.detach()
    if t.dtype in (P.bool, getattr(T, "bool", None)):
        return np.array(t.tolist(), dtype=bool)
    if t.dtype in (P.int64, getattr(T, "int64", None)):
        return np.array(t.tolist(), dtype=np.int64)
    return np.array(t.double().tolist(), dtype=np.float64)


def tensor_maker(module, leaves, grad=False, dtype="float64"):
    """t(x): a float tensor of `module` from numpy/float x, recorded in `leaves` (for gradients)."""
    def t(x):
        out = module.tensor(np.asarray(x, dtype=np.float64).tolist(), dtype=getattr(module, dtype),
                            requires_grad=grad)
        leaves.append(out)
        return out
    return t


def build(case, module, grad=False, dtype=None):
    """(distribution, leaf parameter tensors) of `case` in `module` (pyctorch or torch)."""
    leaves = []
    dtype = dtype or case.dtype
    dist = case.build(module.distributions, tensor_maker(module, leaves, grad, dtype))
    return dist, leaves


def build_both(case, grad=False, dtype=None):
    p, p_leaves = build(case, P, grad, dtype)
    t, t_leaves = build(case, T, grad, dtype) if HAVE_TORCH else (None, [])
    return p, t, p_leaves, t_leaves


def to_pyctorch(t):
    """The pyctorch copy of a torch tensor (same dtype)."""
    name = str(t.dtype).split(".")[1]
    return P.tensor(np_of(t).tolist(), dtype=getattr(P, name))


def outcome(fn):
    """('ok', value) or ('raise', exception type name) for fn(): torch and pyctorch must agree on
    which properties a family does not implement."""
    try:
        return "ok", fn()
    except NotImplementedError:
        return "raise", "NotImplementedError"


@pytest.fixture(autouse=True, scope="module")
def single_thread():
    """Run each test module on one thread in both frameworks. The samplers loop over small
    elementwise ops; on a machine whose cores are shared, every OpenMP region then waits at its
    barrier for descheduled threads, which made these loops hundreds of times slower. Values do
    not depend on the thread count."""
    before = P.get_num_threads()
    P.set_num_threads(1)
    if HAVE_TORCH:
        torch_before = T.get_num_threads()
        T.set_num_threads(1)
    yield
    P.set_num_threads(before)
    if HAVE_TORCH:
        T.set_num_threads(torch_before)
