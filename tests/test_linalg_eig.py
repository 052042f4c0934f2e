"""torch.linalg.eig and eigvals (cpu/linalg_eig.c) against torch, and by their definition A v = lambda v."""
import numpy as np
import pytest

import pyctorch as P
from comparison import assert_same_outcome
from conftest import requires_torch, torch as T


def _matrix(m, shape, dtype="float64", seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return m.tensor(values, dtype=getattr(m, dtype))


CASES = {
    "rotation": lambda m: m.linalg.eig(m.tensor([[0., -1., 0.], [1., 0., 0.], [0., 0., 2.]])),
    "diagonal": lambda m: m.linalg.eig(m.diag(m.tensor([3., 1., 2.], dtype=m.float64))),
    "symmetric": lambda m: m.linalg.eigvals((lambda a: a + a.mT)(_matrix(m, (4, 4)))),
    "eigvals_f32": lambda m: m.linalg.eigvals(_matrix(m, (5, 5), "float32")),
    "empty": lambda m: m.linalg.eig(m.ones(0, 0)),
    "empty_batch": lambda m: m.linalg.eigvals(m.ones(0, 3, 3)),
    "one": lambda m: m.linalg.eig(m.tensor([[2.5]])),
    "nan": lambda m: m.linalg.eig(m.tensor([[float("nan"), 1.], [1., 1.]])),
    "inf": lambda m: m.linalg.eigvals(m.tensor([[float("inf"), 1.], [1., 1.]])),
    "not_square": lambda m: m.linalg.eig(m.ones(2, 3)),
    "vector": lambda m: m.linalg.eig(m.ones(3)),
    "long": lambda m: m.linalg.eig(m.ones(3, 3, dtype=m.long)),
    "half": lambda m: m.linalg.eig(m.ones(3, 3, dtype=m.half)),
    "strides": lambda m: tuple(t.stride() for t in m.linalg.eig(_matrix(m, (2, 3, 3)))),
    "dtypes": lambda m: tuple(t.dtype for t in m.linalg.eig(_matrix(m, (3, 3), "float32"))),
    "names": lambda m: m.linalg.eig(m.eye(2)).eigenvalues,
}


@requires_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    assert_same_outcome(lambda: CASES[case](P), lambda: CASES[case](T), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype, tol", [("float64", 1e-10), ("float32", 1e-4)])
@pytest.mark.parametrize("shape", [(4, 4), (3, 6, 6), (2, 2, 3, 3), (7, 7)])
def test_definition_and_numpy(shape, dtype, tol):
    A = _matrix(P, shape, dtype, seed=len(shape))
    w, v = P.linalg.eig(A.mT)  # non-contiguous input
    a = A.mT.numpy().astype(np.complex128)
    wn, vn = w.numpy(), v.numpy()
    np.testing.assert_allclose(a @ vn, vn * wn[..., None, :], rtol=tol, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-2), 1, rtol=tol)
    ref = np.linalg.eigvals(a)
    got = P.linalg.eigvals(A.mT).numpy()
    for g, r in zip(got.reshape(-1, shape[-1]), ref.reshape(-1, shape[-1])):
        # each eigenvalue of numpy's found among ours (conjugate pairs may come in either order)
        assert all(np.abs(g - x).min() <= tol * 10 * max(1.0, abs(x)) for x in r)


@requires_torch
def test_values_match_torch_batched():
    A = np.random.default_rng(3).standard_normal((3, 5, 5))
    wp, vp = P.linalg.eig(P.tensor(A))
    wt, vt = T.linalg.eig(T.tensor(A))
    # torch's CPU build may call another LAPACK (MKL): a conjugate pair can come in the other order and a vector with
    # another phase, so each eigenpair of torch's is matched to ours
    for b in range(3):
        for j in range(5):
            k = int(np.abs(wp.numpy()[b] - wt.numpy()[b, j]).argmin())
            assert abs(wp.numpy()[b, k] - wt.numpy()[b, j]) < 1e-10
            overlap = abs(np.vdot(vp.numpy()[b, :, k], vt.numpy()[b, :, j]))
            assert overlap == pytest.approx(1.0, abs=1e-9)


def test_out_and_gradient():
    A = _matrix(P, (3, 3))
    w, v = P.empty(3, dtype=P.complex128), P.empty(3, 3, dtype=P.complex128)
    r = P.linalg.eig(A, out=(w, v))
    assert r[0] is w and r[1] is v
    np.testing.assert_allclose(w.numpy(), P.linalg.eigvals(A).numpy())
    x = A.clone().requires_grad_()
    vals = P.linalg.eigvals(x)
    # its formula (torch's linalg_eig_backward; tests/test_linalg_complex_spectral.py compares it with torch)
    vals.abs().sum().backward()
    assert x.grad.shape == (3, 3) and x.grad.dtype == P.float64
    # complex inputs: cgeev (tests/test_linalg_complex_spectral.py compares them with torch)
    assert P.linalg.eig(P.ones(2, 2, dtype=P.complex64))[0].dtype == P.complex64
