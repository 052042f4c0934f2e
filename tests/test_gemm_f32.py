"""float32 matrix products through pyctorch's own AVX-512 kernel (csrc/aten/cpu/gemm_f32.c and the
packed driver gemm_packed.c): every operand layout (row-major, transposed, sliced, broadcast, column-major
and strided outputs), ragged tile edges, K longer than one slice (later slices add into C), alpha/beta
(beta=0 ignores NaN in C), batches, results independent of the thread count, and the OpenBLAS path
(PYCTORCH_GEMM=openblas, in a subprocess) giving the same values within float32 rounding."""
import os
import subprocess
import sys

import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch

# (m, k, n): single elements, ragged 6 x 64 tiles, K of several 256-element slices, thin products
SHAPES = [(1, 1, 2), (2, 3, 2), (6, 64, 64), (7, 65, 63), (13, 300, 129), (64, 2, 70), (130, 257, 67),
          (2, 600, 300), (200, 64, 2), (97, 777, 130), (5, 1000, 3)]


def _arr(shape, seed):
    return np.random.RandomState(seed).uniform(-2, 2, shape).astype(np.float32)


def _layout(x, how):
    """x (a numpy matrix) as a pyctorch tensor with the same values in layout `how`"""
    if how == "n":
        return pyctorch.from_numpy(x.copy())
    if how == "t":
        return pyctorch.from_numpy(np.ascontiguousarray(x.T)).t()
    if how == "s":  # both strides > 1
        big = np.zeros((x.shape[0] * 2, x.shape[1] * 3), np.float32)
        big[::2, ::3] = x
        return pyctorch.from_numpy(big)[::2, ::3]
    raise ValueError(how)


def _check(got, a, b, beta_c=None, alpha=1.0):
    ref = alpha * (a.astype(np.float64) @ b.astype(np.float64))
    if beta_c is not None:
        ref = ref + beta_c
    k = a.shape[1]
    scale = abs(alpha) * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)) + np.abs(beta_c if beta_c is not None else 0)
    err = np.abs(got.numpy().astype(np.float64) - ref)
    assert (err <= 2 ** -22 * (k + 4) * scale + 1e-30).all(), f"max err {err.max()}"


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt", "sn", "ns"])
def test_mm_layouts(m, k, n, layout):
    a, b = _arr((m, k), 1), _arr((k, n), 2)
    c = pyctorch.mm(_layout(a, layout[0]), _layout(b, layout[1]))
    assert c.dtype == pyctorch.float32 and tuple(c.shape) == (m, n) and c.is_contiguous()
    _check(c, a, b)


@pytest.mark.parametrize("m,k,n", [(7, 65, 63), (130, 600, 67), (64, 513, 128)])
@pytest.mark.parametrize("out_layout", ["t", "s"])
def test_out_layouts(m, k, n, out_layout):
    """A column-major out (computed as C^T = B^T A^T) and an out with both strides > 1."""
    a, b = _arr((m, k), 3), _arr((k, n), 4)
    out = _layout(np.full((m, n), np.nan, np.float32), out_layout)
    pyctorch.mm(pyctorch.from_numpy(a), pyctorch.from_numpy(b), out=out)
    _check(out, a, b)


@pytest.mark.parametrize("m,k,n", [(7, 65, 63), (130, 600, 67), (6, 1024, 64)])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, -2.0), (2.0, 0.0), (-1.0, 0.25)])
def test_addmm_alpha_beta(m, k, n, alpha, beta):
    """beta applies once even when K is cut into slices; beta=0 ignores NaN in the input."""
    a, b, c = _arr((m, k), 5), _arr((k, n), 6), _arr((m, n), 7)
    if beta == 0.0:
        c[0, 0] = np.nan
    got = pyctorch.addmm(pyctorch.from_numpy(c), pyctorch.from_numpy(a), pyctorch.from_numpy(b), beta=beta, alpha=alpha)
    _check(got, a, b, beta_c=0.0 if beta == 0.0 else beta * c.astype(np.float64), alpha=alpha)


def test_broadcast_operands():
    """Stride-0 operands (an expanded row) are packed like any other layout."""
    a = _arr((1, 300), 8)
    b = _arr((300, 70), 9)
    A = pyctorch.from_numpy(a).expand(50, 300)
    _check(pyctorch.mm(A, pyctorch.from_numpy(b)), np.repeat(a, 50, 0), b)


def test_batched_and_linear():
    x, w, bias = _arr((3, 37, 130), 10), _arr((90, 130), 11), _arr((90,), 12)
    y = pyctorch.nn.functional.linear(pyctorch.from_numpy(x), pyctorch.from_numpy(w), pyctorch.from_numpy(bias))
    ref = x.astype(np.float64) @ w.T.astype(np.float64) + bias
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-4)
    bm = pyctorch.bmm(pyctorch.from_numpy(x), pyctorch.from_numpy(np.ascontiguousarray(np.transpose(x, (0, 2, 1)))))
    np.testing.assert_allclose(bm.numpy(), x.astype(np.float64) @ np.transpose(x, (0, 2, 1)), rtol=1e-5, atol=1e-3)


def _has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512f" in f.read()
    except OSError:
        return False


@pytest.mark.skipif(not _has_avx512(), reason="pyctorch's own float32 GEMM (thread-count invariant) needs AVX-512; "
                    "without it products go to OpenBLAS, whose partition depends on the thread count")
def test_thread_count_does_not_change_results():
    a, b = _arr((300, 700), 13), _arr((700, 260), 14)
    A, B = pyctorch.from_numpy(a), pyctorch.from_numpy(b)
    old = pyctorch.get_num_threads()
    try:
        pyctorch.set_num_threads(1)
        one = pyctorch.mm(A, B).numpy().copy()
        pyctorch.set_num_threads(2)
        two = pyctorch.mm(A, B).numpy()
    finally:
        pyctorch.set_num_threads(old)
    assert np.array_equal(one, two)


def test_special_values():
    a = np.array([[np.inf, 1.0], [np.nan, 0.0], [1e30, 1e30]], np.float32)
    b = np.array([[1.0, 0.0, -1.0], [1e10, 2.0, 1e10]], np.float32)
    with np.errstate(all="ignore"):
        ref = a @ b
    got = pyctorch.mm(pyctorch.from_numpy(a), pyctorch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got[~np.isnan(ref)], ref[~np.isnan(ref)], rtol=1e-6)


def test_openblas_path_agrees():
    """PYCTORCH_GEMM=openblas (read once at start-up) gives the same products within rounding."""
    code = ("import numpy as np, pyctorch as P\n"
            "rs = np.random.RandomState(0)\n"
            "out = []\n"
            "for m, k, n in [(130, 600, 67), (64, 128, 384)]:\n"
            "    a, b = rs.randn(m, k).astype(np.float32), rs.randn(k, n).astype(np.float32)\n"
            "    out.append((P.from_numpy(a) @ P.from_numpy(b)).numpy())\n"
            "np.savez(__import__('sys').argv[1], *out)\n")
    results = []
    for value in ("openblas", "native"):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"pyctorch_gemm_{value}_{os.getpid()}.npz")
        env = dict(os.environ, PYCTORCH_GEMM=value)
        subprocess.run([sys.executable, "-c", code, path], check=True, env=env)
        with np.load(path) as z:
            results.append([z[f] for f in z.files])
        os.unlink(path)
    for x, y in zip(*results):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-4)


@requires_torch
@pytest.mark.parametrize("m,k,n", [(33, 129, 70), (128, 256, 192), (512, 128, 384)])
def test_against_torch(m, k, n):
    a, b, c = _arr((m, k), 15), _arr((k, n), 16), _arr((m, n), 17)
    got = pyctorch.addmm(pyctorch.from_numpy(c), pyctorch.from_numpy(a), pyctorch.from_numpy(b).t().contiguous().t(),
                         beta=0.5, alpha=2.0)
    ref = torch.addmm(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-4)
