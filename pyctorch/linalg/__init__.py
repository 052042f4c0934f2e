"""torch.linalg: norms, products, the SVD and the LAPACK-backed factorisations and solvers of the
C op table (csrc/aten/ops_linalg.def), and torch's Python-level composites built on them.

The functions without _ex call their _ex op and check its info tensor through
torch._linalg_check_errors, as torch's own do, so their errors name the failing batch element.
"""
import math

from .. import _C
from .._composites import _return_type, _cpp, _chain_order
from .._composites import _write_out as _write_cast

_OUT_NAMES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _write_out(result, out, name):
    """out= of a linalg function: torch's structured kernels want the result's dtype exactly."""
    if out is not None and out.dtype != result.dtype:
        n = lambda d: _OUT_NAMES.get(str(d).split(".")[1], str(d).split(".")[1])  # noqa: E731
        raise RuntimeError(f"Expected out tensor to have dtype {n(result.dtype)}, but got {n(out.dtype)} instead")
    return _write_cast(result, out, name)

__all__ = ["vector_norm", "matrix_norm", "norm", "matmul", "svd", "svdvals", "LinAlgError", "inv", "inv_ex", "det",
           "slogdet", "solve", "solve_ex", "cholesky", "cholesky_ex", "qr", "eig", "eigvals", "eigh", "eigvalsh", "solve_triangular",
           "lu_factor", "lu_factor_ex", "lu", "lu_solve", "lstsq", "householder_product", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "matrix_rank", "pinv", "matrix_power", "matrix_exp", "multi_dot", "cond",
           "cross", "vecdot", "vander", "diagonal", "tensorinv", "tensorsolve"]

vector_norm = _C.linalg_vector_norm
matrix_norm = _C.linalg_matrix_norm
norm = _C.linalg_norm
matmul = _C.matmul
svd = _C.linalg_svd
svdvals = _C.linalg_svdvals
LinAlgError = _C._LinAlgError

inv_ex = _C.linalg_inv_ex
det = _C.linalg_det
slogdet = _C.linalg_slogdet
solve_ex = _C.linalg_solve_ex
cholesky_ex = _C.linalg_cholesky_ex
qr = _C.linalg_qr
eigh = _C.linalg_eigh
eig = _C.linalg_eig
eigvals = _C.linalg_eigvals
eigvalsh = _C.linalg_eigvalsh
solve_triangular = _C.linalg_solve_triangular
lu_factor_ex = _C.linalg_lu_factor_ex
lu_solve = _C.linalg_lu_solve
lstsq = _C.linalg_lstsq
householder_product = _C.linalg_householder_product
ldl_factor_ex = _C.linalg_ldl_factor_ex
ldl_solve = _C.linalg_ldl_solve

_check_errors = _C._linalg_check_errors


def _autograd_function():
    from ..autograd import Function
    return Function


def _eps(dtype):
    return 1.1920928955078125e-07 if dtype in (_C.float32, _C.complex64) else 2.220446049250313e-16


def _check_matrix(A, api, name="A", square=True):
    """torch's checks of a matrix argument (the C kernels make the same ones)."""
    if A.ndim < 2:
        raise RuntimeError(f"{api}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{api}: {name} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _real_dtype(dtype):
    """float32 for complex64, float64 for complex128, dtype itself otherwise."""
    return {_C.complex64: _C.float32, _C.complex128: _C.float64}.get(dtype, dtype)


def _check_float(A, api):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{api}: Expected a floating point or complex tensor as input. Got {_cpp(A.dtype)}")


# ---- inverses, determinants, systems -----------------------------------------------------------

def inv(A, *, out=None):
    """The inverse of square matrices; a singular one raises torch's LinAlgError naming its batch element."""
    result, info = inv_ex(A)
    _check_errors(info, "linalg.inv", is_matrix=A.ndim == 2)
    return _write_out(result, out, "linalg_inv")


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left) or X A = B; B may be a (batch of) vector(s)."""
    result, info = solve_ex(A, B, left=left)
    _check_errors(info, "torch.linalg.solve", is_matrix=A.ndim == 2)
    return _write_out(result, out, "linalg_solve")


def cholesky(A, *, upper=False, out=None):
    L, info = cholesky_ex(A, upper=upper)
    _check_errors(info, "linalg.cholesky", is_matrix=A.ndim == 2)
    return _write_out(L, out, "linalg_cholesky")


def lu_factor(A, *, pivot=True, out=None):
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    _check_errors(info, "torch.linalg.lu_factor", is_matrix=A.ndim == 2)
    if out is not None:
        LU, pivots = _write_out(LU, out[0], "linalg_lu_factor"), _write_out(pivots, out[1], "linalg_lu_factor")
    return _return_type("linalg_lu_factor_out" if out is not None else "linalg_lu_factor", ["LU", "pivots"])(LU, pivots)


def lu(A, *, pivot=True, out=None):
    """P, L, U with A = P L U (L unit lower trapezoidal, U upper trapezoidal)."""
    if A.ndim < 2:
        raise RuntimeError(f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    from .._linalg_functions import lu_unpack
    P, L, U = lu_unpack(LU, pivots)
    if out is not None:
        P, L, U = (_write_out(r, o, "linalg_lu") for r, o in zip((P, L, U), out))
    return _return_type("linalg_lu_out" if out is not None else "linalg_lu", ["P", "L", "U"])(P, L, U)


def ldl_factor(A, *, hermitian=False, out=None):
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _check_errors(info, "torch.linalg.ldl_factor", is_matrix=A.ndim == 2)
    if out is not None:
        LD, pivots = _write_out(LD, out[0], "linalg_ldl_factor"), _write_out(pivots, out[1], "linalg_ldl_factor")
    return _return_type("linalg_ldl_factor_out" if out is not None else "linalg_ldl_factor",
                        ["LD", "pivots"])(LD, pivots)


# ---- composites ----------------------------------------------------------------------------------

def _tolerance(S, A, atol, rtol, m, n):
    """torch's max(atol, rtol * max(S)) with its defaults (rtol = eps * max(m, n) unless atol > 0 is given)."""
    if rtol is None:
        if atol is None:
            positive_atol = False
        elif isinstance(atol, _C.Tensor):
            positive_atol = bool((atol > 0).all())
        else:
            positive_atol = atol > 0
        rtol = 0.0 if positive_atol else _eps(A.dtype) * max(m, n)
    smax = S.amax(-1, keepdim=True) if S.shape[-1] > 0 else _C.zeros(S.shape[:-1] + (1,), dtype=S.dtype)
    tol = rtol.unsqueeze(-1) * smax if isinstance(rtol, _C.Tensor) else rtol * smax
    if atol is not None:
        atol = atol.unsqueeze(-1) if isinstance(atol, _C.Tensor) else atol
        tol = _C.maximum(tol, atol if isinstance(atol, _C.Tensor) else _C.full_like(tol, atol))
    return tol


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values (|eigenvalues| when hermitian) above max(atol, rtol * largest)."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.dtype not in (_C.float32, _C.float64, _C.complex64, _C.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = A.shape[-2], A.shape[-1]
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    t = _tolerance(S, A, atol, rtol, m, n)
    result = (S > t).sum(-1)
    return _write_out(result, out, "linalg_matrix_rank")


def _pinv_value(A, atol, rtol, hermitian):
    m, n = A.shape[-2], A.shape[-1]
    if A.numel() == 0:
        return _C.zeros(A.shape[:-2] + (n, m), dtype=A.dtype)
    if hermitian:
        L, V = eigh(A)
        absL = L.abs()
        t = _tolerance(absL, A, atol, rtol, m, n)
        Linv = _C.where(absL > t, 1 / L, _C.zeros_like(L))
        return (V * Linv.unsqueeze(-2).to(V.dtype)) @ V.mH
    U, S, Vh = svd(A, full_matrices=False)
    t = _tolerance(S, A, atol, rtol, m, n)
    Sinv = _C.where(S > t, 1 / S, _C.zeros_like(S))
    return (Vh.mH * Sinv.unsqueeze(-2).to(Vh.dtype)) @ U.mH


def _pinv_backward(g, P, A):
    """torch's pinv_backward: finite for rank-deficient A too (the SVD's own formula is not there); conjugate
    transposes, which are the transposes for real dtypes."""
    m, n = A.shape[-2], A.shape[-1]
    Ph, gh = P.mH, g.mH
    if m <= n:
        K = gh @ P
        KPh = K @ Ph
        return -(P @ K).mH + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    K = P @ gh
    PhK = Ph @ K
    return -(K @ P).mH + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A


class _Pinv(_autograd_function()):
    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        P = _pinv_value(A, atol, rtol, hermitian)
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, g):
        A, P = ctx.saved_tensors
        return _pinv_backward(g, P, A), None, None, None


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The pseudo-inverse through the SVD (or eigh when hermitian), as torch computes it, with torch's
    pinv_backward as its derivative."""
    if A.ndim < 2 or A.dtype not in (_C.float32, _C.float64, _C.complex64, _C.complex128):
        raise RuntimeError(f"linalg.pinv({_cpp(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    if A.requires_grad and _C.is_grad_enabled() and A.numel() > 0:
        result = _Pinv.apply(A, atol, rtol, hermitian)
    else:
        result = _pinv_value(A, atol, rtol, hermitian)
    return _write_out(result, out, "linalg_pinv")


def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring; a negative n inverts first."""
    _check_matrix(A, "linalg.matrix_power")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    if n == 0:
        result = _C.eye(A.shape[-1], dtype=A.dtype).expand(A.shape).clone()
        return _write_out(result, out, "linalg_matrix_power")
    if n < 0:
        A = inv(A)
        n = -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _write_out(result if result is not A else A.clone(), out, "linalg_matrix_power")


def matrix_exp(A):
    """exp(A) by scaling and squaring with a degree-18 Taylor polynomial (differentiable as written)."""
    _check_matrix(A, "linalg.matrix_exp")
    _check_float(A, "linalg.matrix_exp")
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    finite = A.detach().isfinite()
    absA = A.detach().abs()
    norm1 = float(_C.where(finite, absA, _C.zeros_like(absA)).sum(-2).amax())
    s = max(0, int(math.ceil(math.log2(norm1 / 0.5)))) if norm1 > 0.5 else 0
    if not bool(finite.all()):
        norm1 = math.inf
    X = A / (2.0 ** s) if s else A
    eye = _C.eye(n, dtype=A.dtype)
    result = eye + X / 18.0
    for k in range(17, 0, -1):  # Horner: I + X/1 (I + X/2 (I + ...))
        result = eye + (X @ result) / float(k)
    for _ in range(s):
        result = result @ result
    if not math.isfinite(norm1):  # torch: NaN for the matrices with a non-finite entry
        bad = ~A.detach().isfinite().all(-1, keepdim=True).all(-2, keepdim=True)
        result = _C.where(bad, _C.full_like(result, math.nan), result)
    return result


def multi_dot(tensors, *, out=None):
    """The product of the matrices in the cheapest order (the first and last may be vectors)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    for i in range(1, n):
        if tensors[i].dtype != first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_cpp(first.dtype)} and tensor {i} {_cpp(tensors[i].dtype)}")
    mats = list(tensors)
    if first.ndim == 1:
        mats[0] = first.unsqueeze(0)
    if last.ndim == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    split = _chain_order(dims)  # the matrix-chain order (dynamic programming, as torch's multi_dot)

    def chain(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return _C.mm(chain(i, k), chain(k + 1, j))

    result = chain(0, n - 1)
    if first.ndim == 1 and last.ndim == 1:
        result = result.reshape(())
    elif first.ndim == 1:
        result = result.squeeze(0)
    elif last.ndim == 1:
        result = result.squeeze(-1)
    return _write_out(result, out, "linalg_multi_dot")


def cond(A, p=None, *, out=None):
    """The condition number ||A|| ||A^-1|| in the norm p (singular values for p in None, 2, -2)."""
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    _check_float(A, "linalg.cond")
    real = _real_dtype(A.dtype)
    if p is None or p in (2, -2):
        S = svdvals(A)
        if S.shape[-1] == 0:
            result = _C.zeros(A.shape[:-2], dtype=real)
        else:
            result = S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
        return _write_out(result, out, "linalg_cond")
    _check_matrix(A, f"linalg.cond(ord={p})")
    if A.numel() == 0:
        return _write_out(_C.zeros(A.shape[:-2], dtype=real), out, "linalg_cond")
    Ainv, info = inv_ex(A)
    result = matrix_norm(A, p) * matrix_norm(Ainv, p)
    result = _C.where(info > 0, _C.full_like(result, math.inf), result)
    return _write_out(result, out, "linalg_cond")


def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along dim, broadcasting the other dims."""
    from .._composites import cross as _cross
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = dim % max(input.ndim, 1)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    import pyctorch
    a, b = pyctorch.broadcast_tensors(input, other)
    return _cross(a, b, dim=dim, out=out)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y, dim) (the conjugate a no-op for real dtypes)."""
    _check_float(x, "linalg.vecdot")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_cpp(x.dtype)} and y of type {_cpp(y.dtype)} instead")
    if x.dtype.is_complex:
        x = x.conj()
    return _write_out((x * y).sum(dim), out, "linalg_vecdot")


def vander(x, *, N=None):
    """The Vandermonde matrix of x: powers x^0 .. x^(N-1) along a new last dim."""
    # torch's cumprod-based kernel lacks these dtypes
    if getattr(x, "dtype", None) in (_C.bool, _C.float16, _C.bfloat16, _C.complex32):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_cpp(x.dtype)}")
    if N is None:
        N = x.shape[-1] if x.ndim else 0
    if N <= 1 or x.ndim < 1:
        raise RuntimeError("N must be greater than 1.")
    ones = _C.ones_like(x).unsqueeze(-1)
    powers = x.unsqueeze(-1).expand(x.shape + (N - 1,)).cumprod(-1)
    return _C.cat([ones, powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return _C.diagonal(A, offset=offset, dim1=dim1, dim2=dim2)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A for tensordot(A, ., ind): A viewed as a square matrix prod(shape[:ind]) x prod(shape[ind:])."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    result = inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])
    return _write_out(result, out, "linalg_tensorinv")


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.movedim(dims, list(range(A.ndim - len(dims), A.ndim)))
    rest = tuple(A.shape[B.ndim:])
    rows, cols = B.numel(), math.prod(rest)
    if math.prod(A.shape) != rows * cols or rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    result = solve(A.reshape(rows, cols), B.reshape(rows)).reshape(rest)
    return _write_out(result, out, "linalg_tensorsolve")
