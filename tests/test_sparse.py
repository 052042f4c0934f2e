"""Sparse COO tensors (pyctorch/_sparse_coo.py, pyctorch/_sparse_ops.py, pyctorch/sparse/): numpy-checked cases
that always run, then the same programs run with pyctorch and torch compared (values, indices after coalesce,
dtypes, shapes, coalesced flags, printing, errors, gradients)."""
import io
import pickle
import warnings

import numpy as np
import pytest

import pyctorch as pt
from conftest import assert_same


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message="Sparse invariant checks")
    return torch


IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]          # (0, 2) twice: uncoalesced
VAL = [3.0, 4.0, 5.0, 1.0]
DENSE = np.array([[0.0, 0.0, 4.0], [4.0, 0.0, 5.0]])


def _s(lib, idx=IDX, val=VAL, size=(2, 3), **kw):
    return lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(val), size, **kw)


def _np(t):
    t = t.detach()
    return (t.to_dense() if t.is_sparse else t).numpy()


# ---------------------------------------------------------------- always run (numpy as the reference)

def test_basic_properties_and_to_dense():
    s = _s(pt)
    assert s.is_sparse and s.layout is pt.sparse_coo and repr(s.layout) == "torch.sparse_coo"
    assert s.shape == (2, 3) and s.size() == (2, 3) and s.dtype is pt.float32 and s.ndim == 2
    assert s.numel() == 6 and s.device.type == "cpu" and s._nnz() == 4
    assert s.sparse_dim() == 2 and s.dense_dim() == 0 and not s.is_coalesced()
    np.testing.assert_array_equal(_np(s), DENSE)
    assert not pt.zeros(2).is_sparse and pt.zeros(2).layout is pt.strided


def test_coalesce_indices_values():
    c = _s(pt).coalesce()
    assert c.is_coalesced() and c._nnz() == 3
    assert c.indices().tolist() == [[0, 1, 1], [2, 0, 2]]
    assert c.values().tolist() == [4.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="uncoalesced"):
        _s(pt).indices()


def test_to_sparse_roundtrip_and_hybrid():
    d = pt.tensor([[0.0, 1.0], [2.0, 0.0], [0.0, 0.0]])
    s = d.to_sparse()
    assert s.is_coalesced() and s.indices().tolist() == [[0, 1], [1, 0]] and s.values().tolist() == [1.0, 2.0]
    h = d.to_sparse(1)
    assert h.sparse_dim() == 1 and h.dense_dim() == 1 and h.values().tolist() == [[0.0, 1.0], [2.0, 0.0]]
    np.testing.assert_array_equal(_np(h), d.numpy())
    assert d.to_sparse_coo().indices().tolist() == [[0, 1], [1, 0]]


def test_mm_numpy():
    rng = np.random.default_rng(0)
    b = rng.standard_normal((3, 4))
    out = pt.sparse.mm(_s(pt, val=VAL).double(), pt.tensor(b))
    np.testing.assert_allclose(out.numpy(), DENSE @ b)
    np.testing.assert_allclose((_s(pt).double() @ pt.tensor(b)).numpy(), DENSE @ b)
    np.testing.assert_allclose(pt.mm(pt.tensor(b.T), _s(pt).double().t()).numpy(), b.T @ DENSE.T)


def test_arithmetic_numpy():
    s = _s(pt)
    d = pt.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(_np(s + s), 2 * DENSE)
    np.testing.assert_array_equal(_np(s - _s(pt, val=[1.0, 1.0, 1.0, 1.0])), DENSE - np.array(
        [[0, 0, 2], [1, 0, 1]]))
    np.testing.assert_array_equal(_np(s * 3), 3 * DENSE)
    assert (s * d).is_sparse and (d * s).is_sparse
    np.testing.assert_array_equal(_np(s * d), DENSE * d.numpy())
    np.testing.assert_array_equal(_np(d + s), DENSE + d.numpy())
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        s + d


def test_sum_and_softmax_numpy():
    s = _s(pt)
    assert float(pt.sparse.sum(s)) == DENSE.sum()
    np.testing.assert_array_equal(_np(pt.sparse.sum(s, 0)), DENSE.sum(0))
    sm = pt.sparse.softmax(s, 1)
    e = np.exp([4.0]), np.exp([4.0, 5.0])
    np.testing.assert_allclose(sm.values().numpy(), [1.0, e[1][0] / e[1].sum(), e[1][1] / e[1].sum()], rtol=1e-6)


def test_unsupported_op_raises_not_computes_on_shell():
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with arguments from the 'SparseCPU'"):
        pt.exp(_s(pt))
    with pytest.raises(NotImplementedError, match="aten::cumsum"):
        _s(pt).cumsum(0)


def test_what_bypasses_the_protocol_never_sees_values():
    """A sparse Parameter is refused, and a C factory that reads the tensor directly meets a meta shell (no data),
    not plausible zeros."""
    with pytest.raises(NotImplementedError, match="sparse COO Parameter"):
        pt.nn.Parameter(_s(pt))
    with pytest.raises(NotImplementedError):
        pt.tensor(_s(pt)).tolist()
    with pytest.raises(NotImplementedError, match="aten::stack"):
        pt.stack([_s(pt), _s(pt)])


def test_pickle_and_save_roundtrip():
    s = _s(pt)
    back = pickle.loads(pickle.dumps(s))
    assert back.is_sparse and not back.is_coalesced()
    np.testing.assert_array_equal(_np(back), DENSE)
    buf = io.BytesIO()
    pt.save({"s": s}, buf)
    buf.seek(0)
    loaded = pt.load(buf)["s"]
    assert loaded.is_sparse and loaded._nnz() == 4
    np.testing.assert_array_equal(_np(loaded), DENSE)


def test_torch_files_both_ways(torch, tmp_path):
    """A sparse tensor saved by torch loads in pyctorch, and one saved by pyctorch loads in torch."""
    torch.save({"s": _s(torch)}, tmp_path / "theirs.pt")
    ours = pt.load(tmp_path / "theirs.pt")["s"]
    _same_sparse(ours, _s(torch))
    pt.save({"s": _s(pt).coalesce()}, tmp_path / "ours.pt")
    theirs = torch.load(tmp_path / "ours.pt")["s"]
    _same_sparse(_s(pt).coalesce(), theirs)


def test_gradients_through_values_numpy():
    v = pt.tensor(VAL, requires_grad=True)
    b = pt.ones(3, 2, requires_grad=True)
    pt.sparse.mm(pt.sparse_coo_tensor(pt.tensor(IDX), v, (2, 3)), b).sum().backward()
    assert v.grad.tolist() == [2.0, 2.0, 2.0, 2.0]
    np.testing.assert_array_equal(b.grad.numpy(), DENSE.sum(0)[:, None].repeat(2, 1))


# ---------------------------------------------------------------- against torch

def _same_sparse(a, b, coalesce=True):
    """a (pyctorch) and b (torch) hold the same sparse tensor: the structure, then indices and values through
    assert_same."""
    assert a.is_sparse and b.is_sparse
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    assert a.sparse_dim() == b.sparse_dim() and a.dense_dim() == b.dense_dim()
    assert a.is_coalesced() == b.is_coalesced()
    if coalesce:
        a, b = a.coalesce(), b.coalesce()
        assert_same(a.indices(), b.indices(), exact=True)
        assert_same(a.values().detach(), b.values().detach(), rtol=1e-6, atol=0)
    else:
        assert_same(a._indices(), b._indices(), exact=True)
        assert_same(a._values().detach(), b._values().detach(), rtol=1e-6, atol=0)


def _same(a, b):
    if getattr(b, "is_sparse", False):
        _same_sparse(a, b)
    else:
        assert_same(a.detach(), b.detach(), rtol=1e-5, atol=1e-6)


PROGRAMS = {
    "coalesce": lambda L: _s(L).coalesce(),
    "to_sparse": lambda L: L.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(),
    "to_sparse_1": lambda L: L.tensor([[0.0, 1.0], [2.0, 0.0], [0.0, 0.0]]).to_sparse(1),
    "to_sparse_dense_dim": lambda L: L.tensor([[0.0, 1.0], [2.0, 0.0], [0.0, 0.0]]).to_sparse(dense_dim=1),
    "infer_size": lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL)),
    "int_values": lambda L: L.sparse_coo_tensor([[0, 1]], [1, 2]),
    "dtype_kw": lambda L: _s(L, dtype=L.float64),
    "to_dtype": lambda L: _s(L).to(L.float64),
    "double": lambda L: _s(L).double(),
    "clone": lambda L: _s(L).clone(),
    "detach": lambda L: _s(L).detach(),
    "add_uncoalesced": lambda L: _s(L) + _s(L, [[1, 0], [2, 0]], [1.0, 7.0]),
    "add_coalesced": lambda L: _s(L).coalesce() + _s(L, [[1, 0], [2, 0]], [1.0, 7.0]).coalesce(),
    "add_alpha": lambda L: L.add(_s(L), _s(L, [[1], [1]], [2.0]), alpha=3),
    "sub": lambda L: _s(L) - _s(L, [[1, 0], [2, 0]], [1.0, 7.0]),
    "mul_scalar": lambda L: _s(L) * 2,
    "mul_scalar_coalesced": lambda L: _s(L).coalesce().mul(2),
    "rmul_scalar": lambda L: 2.5 * _s(L),
    "mul_dense": lambda L: _s(L) * L.arange(6.0).reshape(2, 3),
    "dense_mul": lambda L: L.arange(6.0).reshape(2, 3) * _s(L).coalesce(),
    "mul_sparse": lambda L: _s(L).coalesce() * _s(L, [[1, 0], [2, 1]], [2.0, 3.0]).coalesce(),
    "div": lambda L: _s(L) / 2,
    "neg": lambda L: -_s(L),
    "abs": lambda L: _s(L, val=[-3.0, 4.0, -5.0, 1.0]).abs(),
    "dense_add": lambda L: L.ones(2, 3) + _s(L),
    "dense_sub": lambda L: L.ones(2, 3) - _s(L),
    "t": lambda L: _s(L).t(),
    "t_coalesced": lambda L: _s(L).coalesce().t(),
    "transpose_3d": lambda L: L.arange(12.0).reshape(2, 3, 2).to_sparse().transpose(0, 2),
    "sparse_mask": lambda L: L.arange(6.0).reshape(2, 3).sparse_mask(_s(L)),
    "sparse_mask_coalesced": lambda L: L.arange(6.0).reshape(2, 3).sparse_mask(_s(L).coalesce()),
    "mm": lambda L: L.mm(_s(L), L.arange(6.0).reshape(3, 2)),
    "sparse_mm": lambda L: L.sparse.mm(_s(L), L.arange(6.0).reshape(3, 2)),
    "sparse_mm_sparse": lambda L: L.sparse.mm(_s(L), _s(L).t()),
    "dense_mm_sparse": lambda L: L.mm(L.arange(6.0).reshape(3, 2).t(), _s(L).t()),
    "matmul_vec": lambda L: _s(L) @ L.tensor([1.0, 2.0, 3.0]),
    "rmatmul": lambda L: L.ones(4, 2) @ _s(L),
    "addmm": lambda L: L.sparse.addmm(L.ones(2, 2), _s(L), L.arange(6.0).reshape(3, 2), beta=0.5, alpha=2.0),
    "torch_addmm": lambda L: L.addmm(L.ones(2, 2), _s(L), L.arange(6.0).reshape(3, 2)),
    "smm": lambda L: L.smm(_s(L), L.arange(6.0).reshape(3, 2)),
    "sspaddmm": lambda L: L.sspaddmm(_s(L), _s(L), L.ones(3, 3), beta=2, alpha=0.5),
    "sum_all": lambda L: L.sparse.sum(_s(L)),
    "sum_0": lambda L: L.sparse.sum(_s(L), 0),
    "sum_1": lambda L: L.sparse.sum(_s(L), 1),
    "sum_both": lambda L: L.sparse.sum(_s(L), (0, 1)),
    "sum_hybrid_dense_dim": lambda L: L.sparse.sum(L.arange(12.0).reshape(2, 3, 2).to_sparse(2), 2),
    "sum_hybrid_sparse_dims": lambda L: L.sparse.sum(L.arange(12.0).reshape(2, 3, 2).to_sparse(2), (0, 1)),
    "tensor_sum": lambda L: _s(L).sum(),
    "tensor_sum_dim": lambda L: _s(L).sum(1),
    "softmax_1": lambda L: L.sparse.softmax(_s(L), 1),
    "softmax_0": lambda L: L.sparse.softmax(_s(L), 0),
    "log_softmax_1": lambda L: L.sparse.log_softmax(_s(L), 1),
    "softmax_hybrid": lambda L: L.sparse.softmax(L.arange(12.0).reshape(2, 3, 2).to_sparse(2), 2),
    "softmax_3d": lambda L: L.sparse.softmax(L.arange(12.0).reshape(2, 3, 2).to_sparse(), 1),
    "resize": lambda L: _s(L).sparse_resize_((4, 5), 2, 0),
    "resize_and_clear": lambda L: _s(L).sparse_resize_and_clear_((3, 3, 3), 2, 1),
    "resize_as_sparse": lambda L: _s(L, [[0]], [1.0], (2,)).sparse_resize_and_clear_((2,), 1, 0).resize_as_sparse_(
        _s(L)),
    "to_dense": lambda L: _s(L).to_dense(),
    "to_dense_hybrid": lambda L: L.arange(12.0).reshape(2, 3, 2).to_sparse(1).to_dense(),
    "empty": lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0), (2, 2)),
    "mul_": lambda L: _s(L).mul_(2),
    "mul_coalesced_": lambda L: _s(L).coalesce().mul_(2),
    "mul_dense_": lambda L: _s(L).coalesce().mul_(L.arange(6.0).reshape(2, 3)),
    "add_": lambda L: _s(L).add_(_s(L, [[1], [1]], [2.0])),
    "add_coalesced_": lambda L: _s(L).coalesce().add_(_s(L, [[1], [1]], [2.0]).coalesce(), alpha=2),
    "sub_": lambda L: _s(L).sub_(_s(L, [[1], [1]], [2.0])),
    "div_": lambda L: _s(L).div_(4),
    "neg_": lambda L: _s(L).neg_(),
    "zero_": lambda L: _s(L).zero_(),
    "dense_add_": lambda L: L.ones(2, 3).add_(_s(L), alpha=2),
    "dense_iadd": lambda L: _iadd(L.ones(2, 3), _s(L)),
    "index_select_0": lambda L: _s(L).index_select(0, L.tensor([1])),
    "index_select_1": lambda L: _s(L).coalesce().index_select(1, L.tensor([2, 0, 2])),
    "index_select_dense_dim": lambda L: L.arange(12.0).reshape(2, 3, 2).to_sparse(1).index_select(2, L.tensor([1])),
}


def _iadd(a, b):
    a += b
    return a


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_against_torch(torch, name):
    program = PROGRAMS[name]
    _same(program(pt), program(torch))


QUERIES = {
    "is_coalesced": lambda L: _s(L).is_coalesced(),
    "is_coalesced_nnz1": lambda L: _s(L, [[0], [1]], [1.0]).is_coalesced(),
    "is_coalesced_kw": lambda L: _s(L, is_coalesced=True).is_coalesced(),
    "dims": lambda L: (_s(L).sparse_dim(), _s(L).dense_dim(), _s(L)._nnz()),
    "dense_dims": lambda L: (L.zeros(2, 3).sparse_dim(), L.zeros(2, 3).dense_dim()),
    "stride": lambda L: _s(L).stride(),
    "len": lambda L: len(_s(L)),
    "requires_grad": lambda L: _s(L, requires_grad=True).requires_grad,
    "leaf": lambda L: (_s(L, requires_grad=True).is_leaf, _s(L).is_leaf, _s(L).requires_grad),
    "from_graph_not_leaf": lambda L: (lambda s: (s.is_leaf, s.requires_grad, s.grad_fn is not None))(
        L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL, requires_grad=True), (2, 3))),
    "in_place_returns_self": lambda L: (lambda s: (s.mul_(2) is s, s.add_(s) is s, s.zero_() is s))(_s(L)),
    "clone_is_new": lambda L: (lambda s: s.clone() is s)(_s(L)),
    "device": lambda L: (str(_s(L).device), _s(L).is_cpu, _s(L).is_cuda, _s(L).is_meta, _s(L).get_device()),
    "type": lambda L: (_s(L).type(), _s(L).type(L.float64).type(), _s(L).type("torch.sparse.DoubleTensor").type()),
    "shape_queries": lambda L: (tuple(_s(L).shape), _s(L).dim(), _s(L).numel(), _s(L).element_size(),
                                _s(L).is_floating_point(), _s(L).is_contiguous()),
    "to_same_dtype_is_self": lambda L: (lambda s: s.to(L.float32) is s)(_s(L)),
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_queries_against_torch(torch, name):
    assert QUERIES[name](pt) == QUERIES[name](torch)


ERRORS = {
    "indices_uncoalesced": lambda L: _s(L).indices(),
    "values_uncoalesced": lambda L: _s(L).values(),
    "dense_indices": lambda L: L.zeros(2).indices(),
    "dense_values": lambda L: L.zeros(2).values(),
    "dense_coalesce": lambda L: L.zeros(2).coalesce(),
    "dense_is_coalesced": lambda L: L.zeros(2).is_coalesced(),
    "dense__indices": lambda L: L.zeros(2)._indices(),
    "dense__nnz": lambda L: L.zeros(2)._nnz(),
    "dense_smm": lambda L: L.zeros(2, 2).smm(L.zeros(2, 2)),
    "dense_sspaddmm": lambda L: L.zeros(2, 2).sspaddmm(L.zeros(2, 2), L.zeros(2, 2)),
    "dense_sparse_resize": lambda L: L.zeros(2, 2).sparse_resize_((3, 3), 2, 0),
    "dense_sparse_mask_dense": lambda L: L.zeros(2, 2).sparse_mask(L.zeros(2, 2)),
    "exp": lambda L: L.exp(_s(L)),
    "view": lambda L: _s(L).view(6),
    "reshape": lambda L: _s(L).reshape(6),
    "numpy": lambda L: _s(L).numpy(),
    "data_ptr": lambda L: _s(L).data_ptr(),
    "sparse_plus_dense": lambda L: _s(L) + L.ones(2, 3),
    "to_sparse_range": lambda L: L.zeros(2, 2).to_sparse(3),
    "to_sparse_sparse_dim": lambda L: _s(L).to_sparse(1),
    "nnz_mismatch": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(3), (2,)),
    "indices_1d": lambda L: L.sparse_coo_tensor(L.tensor([0, 1]), L.ones(2)),
    "size_len": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(2), (3, 2)),
    "check_invariants": lambda L: L.sparse_coo_tensor(L.tensor([[0, 4]]), L.ones(2), (3,), check_invariants=True),
    "mm_shape": lambda L: L.sparse.mm(_s(L), L.ones(2, 2)),
    "transpose_dense_dims": lambda L: L.arange(12.0).reshape(2, 3, 2).to_sparse(1).transpose(1, 2),
    "transpose_mixed": lambda L: L.arange(6.0).reshape(3, 2).to_sparse(1).transpose(0, 1),
    "resize_sparse_dim": lambda L: _s(L).sparse_resize_((2, 3, 1), 3, 0),
    "resize_shrink": lambda L: _s(L).sparse_resize_((1, 1), 2, 0),
    "resize_as_dense": lambda L: L.zeros(2).resize_as_sparse_(L.zeros(2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_against_torch(torch, name):
    program = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        program(torch)
    with pytest.raises(type(theirs.value)) as ours:
        program(pt)
    first_sentence = str(theirs.value).split(". ")[0].split("\n")[0]
    assert first_sentence in str(ours.value)


PRINTS = {
    "uncoalesced": lambda L: _s(L),
    "float64_grad": lambda L: L.sparse_coo_tensor([[0, 1]], [1, 2], dtype=L.float64, requires_grad=True),
    "empty": lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0), (2, 2)),
    "hybrid": lambda L: L.arange(12.0).reshape(2, 3, 2).to_sparse(1),
    "int": lambda L: L.sparse_coo_tensor([[0, 1], [1, 0]], L.tensor([1, 2], dtype=L.int32)),
    "sum_dim": lambda L: L.sparse.sum(_s(L), 0),
}


@pytest.mark.parametrize("name", sorted(PRINTS))
def test_printing_against_torch(torch, name):
    assert repr(PRINTS[name](pt)) == repr(PRINTS[name](torch))
    assert str(PRINTS[name](pt)) == str(PRINTS[name](torch))


GRADS = {
    "sparse_mm": lambda L, s, d: L.sparse.mm(s, d),
    "mm": lambda L, s, d: L.mm(s, d),
    "matmul": lambda L, s, d: s @ d,
    "addmm": lambda L, s, d: L.sparse.addmm(d[:2, :] * 1.0, s, d),
    "sum_all": lambda L, s, d: L.sparse.sum(s) * d.sum(),
    "sum_dim": lambda L, s, d: L.sparse.sum(s, 1).to_dense() * d[:2, 0],
    "softmax": lambda L, s, d: L.sparse.softmax(s, 1).to_dense() * d[:2, :].t().repeat(1, 2)[:, :3],
    "log_softmax": lambda L, s, d: L.sparse.log_softmax(s, 0).to_dense() * d[:2, :].t().repeat(1, 2)[:, :3],
    "mul_dense": lambda L, s, d: (s * L.arange(6.0).reshape(2, 3)).to_dense() @ d,
    "add": lambda L, s, d: L.sparse.mm(s + s * 2, d),
    "to_dense": lambda L, s, d: s.to_dense() @ d,
    "coalesce_values": lambda L, s, d: s.coalesce().values() * 2,
}


def _grad_case(L, name, leaf):
    gen = np.random.default_rng(1)
    dense = L.tensor(gen.standard_normal((3, 2)), requires_grad=True)
    values = L.tensor(np.array(VAL) * 0.3, requires_grad=True)
    if leaf:
        s = L.sparse_coo_tensor(L.tensor(IDX), values.detach(), (2, 3), requires_grad=True)
    else:
        s = L.sparse_coo_tensor(L.tensor(IDX), values * 1.0, (2, 3))
    out = GRADS[name](L, s, dense)
    (out.sum() if not out.is_sparse else L.sparse.sum(out)).backward()
    return (s.grad if leaf else values.grad), dense.grad


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_against_torch(torch, name):
    ours_values, ours_dense = _grad_case(pt, name, leaf=False)
    theirs_values, theirs_dense = _grad_case(torch, name, leaf=False)
    np.testing.assert_allclose(ours_values.numpy(), theirs_values.numpy(), rtol=1e-5, atol=1e-7)
    if theirs_dense is None:
        assert ours_dense is None
    else:
        np.testing.assert_allclose(ours_dense.numpy(), theirs_dense.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["sparse_mm", "sum_all", "sum_dim", "softmax"])
def test_sparse_leaf_gradient_against_torch(torch, name):
    """A sparse leaf's .grad is sparse with the leaf's pattern, for the ops whose gradient torch keeps sparse."""
    ours, _ = _grad_case(pt, name, leaf=True)
    theirs, _ = _grad_case(torch, name, leaf=True)
    assert ours.is_sparse and theirs.is_sparse
    np.testing.assert_allclose(ours.to_dense().numpy(), theirs.to_dense().numpy(), rtol=1e-5, atol=1e-7)


def _random_case(L, seed, shape, sparse_dim, nnz):
    """A random uncoalesced sparse tensor (repeated indices included), the same for both libraries."""
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, n, nnz) for n in shape[:sparse_dim]]) if sparse_dim else np.zeros((0, nnz), int)
    val = rng.standard_normal((nnz,) + tuple(shape[sparse_dim:]))
    return L.sparse_coo_tensor(L.tensor(idx.tolist(), dtype=L.int64).reshape(sparse_dim, nnz), L.tensor(val), shape)


RANDOM_SHAPES = [((5, 4), 2, 9), ((3, 4, 2), 2, 7), ((6, 3, 2), 1, 5), ((4, 3, 5), 3, 12), ((7,), 1, 10)]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("shape,sparse_dim,nnz", RANDOM_SHAPES)
def test_random_tensors_against_torch(torch, seed, shape, sparse_dim, nnz):
    ours, theirs = _random_case(pt, seed, shape, sparse_dim, nnz), _random_case(torch, seed, shape, sparse_dim, nnz)
    _same_sparse(ours.coalesce(), theirs.coalesce(), coalesce=False)
    _same(ours.to_dense(), theirs.to_dense())
    _same(ours.to_dense().to_sparse(sparse_dim), theirs.to_dense().to_sparse(sparse_dim))
    for dim in range(len(shape)):
        _same(pt.sparse.sum(ours, dim), torch.sparse.sum(theirs, dim))
        _same(pt.sparse.softmax(ours, dim), torch.sparse.softmax(theirs, dim))
        _same(pt.sparse.log_softmax(ours, dim), torch.sparse.log_softmax(theirs, dim))
    _same(ours + ours * 2, theirs + theirs * 2)
    if sparse_dim == 2 and len(shape) == 2:
        dense = np.random.default_rng(seed).standard_normal((shape[1], 3))
        _same(pt.sparse.mm(ours, pt.tensor(dense)), torch.sparse.mm(theirs, torch.tensor(dense)))
        _same(ours.t(), theirs.t())


def _gcn_grads(L):
    """Two graph-convolution layers (adjacency @ features @ weight) and the weights' and features' gradients."""
    rng = np.random.default_rng(7)
    adj = (rng.random((6, 6)) < 0.4) * rng.random((6, 6))
    x = L.tensor(rng.standard_normal((6, 4)), requires_grad=True)
    w1 = L.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    w2 = L.tensor(rng.standard_normal((5, 2)), requires_grad=True)
    a = L.tensor(adj).to_sparse()
    hidden = L.relu(L.sparse.mm(a, x @ w1))
    out = L.sparse.log_softmax((a @ (hidden @ w2)).to_sparse(), 1).to_dense()
    out.sum().backward()
    return out, x.grad, w1.grad, w2.grad


def test_graph_convolution_step_against_torch(torch):
    for ours, theirs in zip(_gcn_grads(pt), _gcn_grads(torch)):
        _same(ours, theirs)
