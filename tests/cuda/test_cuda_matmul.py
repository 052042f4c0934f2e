"""The matrix products on CUDA (mm, addmm, bmm, baddbmm and what is built on them: matmul, linear, their gradients)
through the backend's cuBLAS GEMM (Note [Device GEMM] in csrc/aten/gemm.h), against float64 NumPy products of the
same inputs. On the simulated device the cuBLAS calls run a reference loop (Note [cuBLAS table]), so these check
the layouts, transposes, batch strides, dtypes and precision flags the backend hands cuBLAS."""
import numpy as np
import pytest

import pyctorch as torch
from comparison import assert_same

DEV = "cuda"
TOL = {torch.float64: 1e-12, torch.float32: 2e-5, torch.float16: 2e-2, torch.bfloat16: 8e-2}


def ref(x):
    return x.detach().cpu().to(torch.float64).numpy()


def close(got, want, dtype):
    assert got.device.type == "cuda" and got.dtype == dtype
    assert_same(ref(got), want, rtol=TOL[dtype], atol=TOL[dtype] * max(1.0, np.abs(want).max()))


def test_products_run_on_the_device():
    names = set(torch._C._cuda_kernel_ops())
    assert {"mm", "bmm", "addmm", "baddbmm"} <= names


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_mm_layouts(dtype):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(13, 9, generator=g).to(dtype)
    b = torch.randn(9, 6, generator=g).to(dtype)
    want = ref(a) @ ref(b)
    ac, bc = a.to(DEV), b.to(DEV)
    close(torch.mm(ac, bc), want, dtype)
    # transposed operands (columns contiguous), and sliced ones no BLAS takes (packed first)
    close(torch.mm(ac.t().contiguous().t(), bc.t().contiguous().t()), want, dtype)
    wide = torch.randn(13, 18, generator=g).to(dtype).to(DEV)
    wide[:, ::2] = ac
    close(torch.mm(wide[:, ::2], bc), want, dtype)
    close(torch.mm(ac, bc.expand(9, 6)), want, dtype)
    # a column-major out= and an out= that is an input
    out = torch.empty(6, 13, dtype=dtype, device=DEV).t()
    r = torch.mm(ac, bc, out=out)
    assert r.data_ptr() == out.data_ptr() and out.stride() == (1, 13)
    close(out, want, dtype)
    sq = torch.randn(9, 9, generator=g).to(dtype)
    sqc = sq.to(DEV)
    torch.mm(sqc, sqc, out=sqc)
    close(sqc, ref(sq) @ ref(sq), dtype)


def test_addmm_terms():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(5, 4, generator=g), torch.randn(4, 3, generator=g)
    c = torch.randn(5, 3, generator=g)
    want = 0.5 * ref(c) + 2.0 * (ref(a) @ ref(b))
    close(torch.addmm(c.to(DEV), a.to(DEV), b.to(DEV), beta=0.5, alpha=2.0), want, torch.float32)
    # a broadcast input, and beta=0 ignoring NaN
    bias = torch.randn(3, generator=g)
    close(torch.addmm(bias.to(DEV), a.to(DEV), b.to(DEV)), ref(bias) + ref(a) @ ref(b), torch.float32)
    nan = torch.full((5, 3), float("nan"), device=DEV)
    close(torch.addmm(nan, a.to(DEV), b.to(DEV), beta=0), ref(a) @ ref(b), torch.float32)
    # in place
    cc = c.to(DEV)
    cc.addmm_(a.to(DEV), b.to(DEV), alpha=-1)
    close(cc, ref(c) - ref(a) @ ref(b), torch.float32)
    # k == 0: beta * input
    e1, e2 = torch.empty(5, 0, device=DEV), torch.empty(0, 3, device=DEV)
    close(torch.addmm(c.to(DEV), e1, e2, beta=3), 3 * ref(c), torch.float32)
    assert_same(torch.mm(e1, e2).cpu(), torch.zeros(5, 3))
    assert torch.mm(torch.empty(0, 4, device=DEV), b.to(DEV)).shape == (0, 3)


def test_batched_products():
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(4, 5, 7, generator=g), torch.randn(4, 7, 3, generator=g)
    want = np.matmul(ref(x), ref(y))
    xc, yc = x.to(DEV), y.to(DEV)
    close(torch.bmm(xc, yc), want, torch.float32)
    close(torch.bmm(xc.transpose(1, 2).contiguous().transpose(1, 2), yc), want, torch.float32)
    close(torch.bmm(xc, y[:1].to(DEV).expand(4, 7, 3)), np.matmul(ref(x), ref(y[:1])), torch.float32)
    c = torch.randn(4, 5, 3, generator=g)
    close(torch.baddbmm(c.to(DEV), xc, yc, beta=2, alpha=0.5), 2 * ref(c) + 0.5 * want, torch.float32)
    # matmul broadcasts batches: (2, 4, 5, 7) @ (7, 3) and (2, 1, 5, 7) @ (4, 7, 3)
    z = torch.randn(2, 4, 5, 7, generator=g)
    close(torch.matmul(z.to(DEV), y[0].to(DEV)), np.matmul(ref(z), ref(y[0])), torch.float32)
    close(torch.matmul(z[:, :1].to(DEV), yc), np.matmul(ref(z[:, :1]), ref(y)), torch.float32)


def test_errors_name_the_cuda_kernels():
    a = torch.ones(2, 3, device=DEV)
    with pytest.raises(NotImplementedError, match="\"addmm_cuda\" not implemented for 'Int'"):
        torch.mm(a.int(), a.int().t())
    with pytest.raises(NotImplementedError, match="\"bmm_cuda\" not implemented for 'Long'"):
        torch.bmm(a.long()[None], a.long().t()[None])
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        torch.mm(a, a)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(a, torch.ones(3, 2))


def test_tf32_follows_the_matmul_precision():
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(64, 256, generator=g), torch.randn(256, 32, generator=g)
    want = ref(a) @ ref(b)
    scale = np.abs(want).max()
    full = torch.mm(a.to(DEV), b.to(DEV))
    assert np.abs(ref(full) - want).max() < 1e-4 * scale
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        assert torch.get_float32_matmul_precision() == "high"
        fast = torch.mm(a.to(DEV), b.to(DEV))
    finally:
        torch.set_float32_matmul_precision("highest")
    err = np.abs(ref(fast) - want).max()
    assert 1e-4 * scale < err < 1e-2 * scale  # TF32 keeps 10 mantissa bits of each input
    assert_same(torch.mm(a.to(DEV), b.to(DEV)).cpu(), full.cpu())


def test_linear_and_gradients_on_the_device():
    g = torch.Generator().manual_seed(4)
    torch.manual_seed(0)
    lin = torch.nn.Linear(7, 3)
    x = torch.randn(5, 7, generator=g)
    ref_out = lin(x)
    ref_out.square().sum().backward()
    w_grad, b_grad = lin.weight.grad.clone(), lin.bias.grad.clone()
    lin.zero_grad()
    lin.to(DEV)
    xc = x.to(DEV).requires_grad_()
    out = lin(xc)
    out.square().sum().backward()
    assert lin.weight.grad.device.type == "cuda" and xc.grad.device.type == "cuda"
    close(out, ref(ref_out), torch.float32)
    close(lin.weight.grad, ref(w_grad), torch.float32)
    close(lin.bias.grad, ref(b_grad), torch.float32)


@pytest.mark.parametrize("op", ["mm", "matmul", "bmm"])
def test_complex_products_refuse_on_the_device(op):
    # the cuBLAS table has no cgemm/zgemm yet: a refusal, never the CPU's complex GEMM reading device memory (it
    # crashed the interpreter)
    z = torch.complex(torch.ones(2, 3, 3), torch.ones(2, 3, 3)).to(DEV)
    a, b = (z, z) if op == "bmm" else (z[0], z[0])
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        getattr(torch, op)(a, b)
