"""The torch-namespace linear algebra built on torch.linalg (pyctorch/linalg/) and their Tensor methods:
torch.inverse, logdet, cholesky_solve, cholesky_inverse, qr, triangular_solve, lu, lu_unpack, lu_solve,
matrix_power, matrix_exp, pinverse, vander. (torch.det, slogdet, cholesky, geqrf, orgqr are C ops.)"""
import warnings

from . import _C
from . import linalg as _linalg
from ._composites import _return_type, _write_out, _cpp

__all__ = ["cholesky", "inverse", "logdet", "cholesky_solve", "cholesky_inverse", "qr", "triangular_solve", "lu", "lu_unpack",
           "lu_solve", "matrix_power", "matrix_exp", "pinverse", "vander", "lstsq", "eig", "symeig", "svd_lowrank",
           "pca_lowrank"]


_WARNED = set()


def _warn_once(key, message):
    """torch's TORCH_WARN_ONCE: a UserWarning the first time in the process."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=4)  # past the _arg_check wrapper


def cholesky(input, upper=False, *, out=None):
    """torch.cholesky (the C op) with torch's once-per-process deprecation note."""
    _warn_once("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
               "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)"
               "\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
               "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")
    return _C.cholesky(input, upper, out=out)


def inverse(input, *, out=None):
    return _linalg.inv(input, out=out)


def logdet(input):
    """log(det(input)): NaN for a negative determinant, -inf for a zero one."""
    if input.ndim < 2:
        raise RuntimeError("logdet: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"logdet: A must be batches of square matrices, but they are {input.shape[-2]} by "
                           f"{input.shape[-1]} matrices")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"logdet: Expected a floating point or complex tensor as input. Got {_cpp(input.dtype)}")
    if getattr(input, "dtype", None) in (_C.float16, _C.bfloat16, _C.complex32):
        raise RuntimeError(f"logdet: Low precision dtypes not supported. Got {_cpp(input.dtype)}")
    sign, logabsdet = _C.linalg_slogdet(input)
    if input.dtype.is_complex:  # log(sign) + log|det|: the phase is the imaginary part
        return sign.log() + logabsdet
    return logabsdet + _C.where(sign < 0, _C.full_like(sign, float("nan")), _C.zeros_like(sign))


def _two_triangular_solves(B, L, upper):
    """A = L L^H (U^H U when upper): two triangular solves"""
    if upper:
        Y = _C.linalg_solve_triangular(L.mH, B, upper=False)
        return _C.linalg_solve_triangular(L, Y, upper=True)
    Y = _C.linalg_solve_triangular(L, B, upper=False)
    return _C.linalg_solve_triangular(L.mH, Y, upper=True)


def _factor_grad(L, upper, common):
    """torch's gradient for a Cholesky factor given the hermitian middle term: a full matrix (torch's formulas do
    not mask the triangle the forward reads)."""
    return -(L @ common) if upper else -(common @ L)


def _sum_to(g, shape):
    from .autograd._linalg_lapack_formulas import _sum_to as sum_to
    return sum_to(g, shape)


class _CholeskySolveNode:
    """cholesky_solve's own autograd node, torch's cholesky_solve_backward: B's gradient is cholesky_solve(grad),
    the factor's -(G X^H + X G^H) L (L (...) when upper), written with differentiable ops (double backward)."""

    _function = None

    @classmethod
    def apply(cls, B, L, upper):
        if cls._function is None:
            from .autograd import Function

            class CholeskySolve(Function):
                @staticmethod
                def forward(ctx, B, L, upper):
                    X = _two_triangular_solves(B, L, upper)
                    ctx.save_for_backward(L, X)
                    ctx.upper, ctx.shapes = upper, (B.shape, L.shape)
                    return X

                @staticmethod
                def backward(ctx, grad):
                    L, X = ctx.saved_tensors
                    gB = _cholesky_solve(grad, L, ctx.upper)
                    common = gB @ X.mH
                    gL = _factor_grad(L, ctx.upper, common + common.mH)
                    return _sum_to(gB, ctx.shapes[0]), _sum_to(gL, ctx.shapes[1]), None
            cls._function = CholeskySolve
        return cls._function.apply(B, L, upper)


def _cholesky_solve(B, L, upper):
    if _C.is_grad_enabled() and (B.requires_grad or L.requires_grad):
        return _CholeskySolveNode.apply(B, L, upper)
    return _two_triangular_solves(B, L, upper)


def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = input for A = L L^H (or U^H U when upper) given its factor input2."""
    if input.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.ndim} dimensions instead")
    if input2.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.ndim} dimensions instead")
    if input.dtype != input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_cpp(input.dtype)} and A "
                           f"of type {_cpp(input2.dtype)} instead.")
    return _write_out(_cholesky_solve(input, input2, upper), out, "cholesky_solve")


def cholesky_inverse(input, upper=False, *, out=None):
    """(L L^H)^-1 (or (U^H U)^-1) from the Cholesky factor input."""
    _linalg._check_matrix(input, "cholesky_inverse")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for '{_cpp(input.dtype)}'")
    eye = _C.eye(input.shape[-1], dtype=input.dtype, device=input.device).expand(input.shape)
    return _write_out(_cholesky_solve(eye, input, upper), out, "cholesky_inverse")


def qr(input, some=True, *, out=None):
    _warn_once("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
               "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = "
               "torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else "
               "'complete')")
    Q, R = _C.linalg_qr(input, "reduced" if some else "complete")
    if out is not None:
        Q, R = _write_out(Q, out[0], "qr"), _write_out(R, out[1], "qr")
    return _return_type("qr_out" if out is not None else "qr", ["Q", "R"])(Q, R)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(solution, cloned_coefficient) of A X = input (A^T X = input when transpose)."""
    _warn_once("triangular_solve", "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
               "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed "
               "and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould "
               "be replaced with\nX = torch.linalg.solve_triangular(A, B).")
    if input.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{input.ndim} dimensions instead")
    if A.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
                           f"{A.ndim} dimensions instead")
    import pyctorch
    batch = pyctorch.broadcast_shapes(tuple(input.shape[:-2]), tuple(A.shape[:-2]))
    Ab = A.expand(tuple(batch) + tuple(A.shape[-2:]))
    X = _C.linalg_solve_triangular(Ab.mT if transpose else Ab, input, upper=upper != transpose,
                                   unitriangular=unitriangular)
    M = Ab.clone()
    if out is not None:
        X, M = _write_out(X, out[0], "triangular_solve"), _write_out(M, out[1], "triangular_solve")
    return _return_type("triangular_solve_out" if out is not None else "triangular_solve",
                        ["solution", "cloned_coefficient"])(X, M)


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots) or (LU, pivots, infos)."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
                  "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
                  "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                  "torch.linalg.lu_factor_ex(A, compute_pivots)", stacklevel=2)
    LU, pivots, infos = _C.linalg_lu_factor_ex(A, pivot=pivot)
    if not get_infos:
        _C._linalg_check_errors(infos, "torch.linalg.lu_factor", is_matrix=A.ndim == 2)
        return LU, pivots
    return LU, pivots, infos


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """P, L, U of A = P L U from linalg.lu_factor's packed LU and 1-based pivots (row interchanges)."""
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data.shape)} instead")
    if LU_pivots.dtype != _C.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = _C.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + _C.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty
    if unpack_pivots:
        batch = tuple(LU_pivots.shape[:-1])
        perm = _C.arange(m, device=LU_pivots.device).expand(batch + (m,)).clone()
        piv = (LU_pivots.long() - 1)
        for i in range(min(k, LU_pivots.shape[-1])):
            j = piv[..., i:i + 1]
            pi = perm[..., i:i + 1].clone()
            pj = perm.gather(-1, j)
            perm = perm.scatter(-1, j, pi)
            perm = perm.scatter(-1, _C.full_like(j, i), pj)
        real = LU_data.real.dtype if LU_data.dtype.is_complex else LU_data.dtype  # (scatter lacks complex)
        P = _C.zeros(batch + (m, m), dtype=real, device=LU_data.device).scatter(
            -2, perm.unsqueeze(-2), _C.ones(batch + (1, m), dtype=real, device=LU_data.device)).to(LU_data.dtype)
    else:
        P = empty
    if out is not None:
        P, L, U = (_write_out(r, o, "lu_unpack") for r, o in zip((P, L, U), out))
    return _return_type("lu_unpack_out" if out is not None else "lu_unpack", ["P", "L", "U"])(P, L, U)


def lu_solve(input, LU_data, LU_pivots, *, out=None):
    _warn_once("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
               "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
               "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return _C.linalg_lu_solve(LU_data, LU_pivots, input, out=out)


def matrix_power(input, n):
    return _linalg.matrix_power(input, n)


def matrix_exp(input):
    return _linalg.matrix_exp(input)


def pinverse(input, rcond=1e-15):
    return _linalg.pinv(input, rtol=rcond)


def vander(x, N=None, increasing=False):
    """torch.vander: decreasing powers by default, of a 1-D x."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x.shape[0]
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if N == 0:
        return _C.empty((x.shape[0], 0), dtype=x.dtype if x.dtype != _C.bool else _C.int64, device=x.device)
    if N == 1:
        return _C.ones((x.shape[0], 1), dtype=x.dtype if x.dtype != _C.bool else _C.int64, device=x.device)
    result = _linalg.vander(x, N=N)
    return result if increasing else result.flip(-1)


# ---- randomized low-rank SVD (torch/_lowrank.py: Halko, Martinsson and Tropp 2009, algorithms 4.4 and 5.1) ----

def _approximate_basis(A, q, niter=2, M=None):
    """An orthonormal Q (..., m, q) whose range approximates that of A - M (randomized subspace iteration)."""
    niter = 2 if niter is None else niter
    if A.dtype.is_complex:  # torch's complex randn: the draws of a real one of twice the size, over sqrt(2)
        real = _C.float32 if A.dtype == _C.complex64 else _C.float64
        R = _C.view_as_complex(_C.randn(A.shape[-1], q, 2, dtype=real) * (0.5 ** 0.5))
    else:
        R = _C.randn(A.shape[-1], q, dtype=A.dtype if A.dtype.is_floating_point else _C.float32)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = _linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q
        if M is not None:
            X = X - M.mH @ Q
        Q = _linalg.qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = _linalg.qr(X).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # work on the tall A^H
        A = A.mH
        if M is not None:
            M = M.mH
    Q = _approximate_basis(A, q, niter=niter, M=M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = _linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate rank-q SVD (U, S, V) of A - M from torch's random projections (the same generator draws)."""
    return _svd_lowrank(A, q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """An approximate PCA of A's rows: the low-rank SVD of A minus its column means (when center)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)


_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


def lstsq(input, A, *, out=None):
    """removed from torch in 2.0: raises torch's note"""
    raise RuntimeError(
        _REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
        "arguments and does not return the QR decomposition in the returned tuple (although it returns other "
        "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe "
        "returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
        "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
        "returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
        "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


def eig(input, eigenvectors=False, *, out=None):
    """removed from torch in 2.0: raises torch's note"""
    raise RuntimeError(
        _REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
        "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
        "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """removed from torch in 2.0: raises torch's note"""
    raise RuntimeError(
        _REMOVED + "The default behavior has changed from using the upper triangular portion of the matrix by default "
        "to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, "
        "eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


# Note [Python-level tensor arguments] (pyctorch/_arg_check.py): torch's TypeError for a non-tensor argument
from ._arg_check import guard as _guard  # noqa: E402
_guard(globals(), {
    "cholesky": (None, ("input",)), "inverse": (None, ("input",)), "logdet": (None, ("input",)), "cholesky_solve": (None, ("input", "input2")),
    "cholesky_inverse": (None, ("input",)), "qr": (None, ("input",)), "triangular_solve": (None, ("input", "A")),
    "lu_unpack": (None, ("LU_data", "LU_pivots")), "lu_solve": (None, ("input", "LU_data", "LU_pivots")),
    "matrix_power": (None, ("input",)), "matrix_exp": (None, ("input",)), "pinverse": (None, ("input",)),
    "vander": (None, ("x",)),
})


def _method_lu(self, pivot=True, get_infos=False):
    return lu(self, pivot, get_infos)


def _method_cholesky(self, upper=False):
    return cholesky(self, upper)


TENSOR_METHODS = {
    "inverse": inverse, "logdet": logdet, "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
    "qr": qr, "triangular_solve": triangular_solve, "lu": _method_lu, "lu_solve": lu_solve,
    "matrix_power": matrix_power, "matrix_exp": matrix_exp, "pinverse": pinverse, "lstsq": lstsq, "eig": eig,
    "symeig": symeig,
}
TENSOR_METHOD_OVERRIDES = {"cholesky": _method_cholesky}  # over the C method, with the deprecation note
