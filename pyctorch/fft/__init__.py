"""torch.fft: discrete Fourier transforms, as composites over the table's three FFT primitives (ops_fft.def:
_fft_c2c, _fft_r2c, _fft_c2r, computed by pocketfft). This module does what torch's frontend does: it reads
n / s, dim and norm, promotes the dtype, pads or trims the signal, and picks the primitive and its scaling."""
from .. import _C
from .._composites import _write_out

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

# torch's fft_norm_mode: what the transform scales by (none, 1/sqrt(n), 1/n)
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm_mode(norm, forward):
    """The scaling of a forward (or, forward=False, an inverse) transform for norm= (torch's norm_from_string)."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _scalar_type(dtype):
    # torch's error texts name the ScalarType: Half, BFloat16, ComplexFloat...
    names = {_C.float16: "Half", _C.bfloat16: "BFloat16", _C.float32: "Float", _C.float64: "Double",
             _C.complex64: "ComplexFloat", _C.complex128: "ComplexDouble", _C.complex32: "ComplexHalf"}
    return names.get(dtype, str(dtype).replace("torch.", ""))


def _promote(x, require_complex=False):
    """x in the dtype the transform computes in: integers and bool take the default float dtype; float32/float64
    and complex64/complex128 stay (made complex when require_complex); the others are refused as torch's CPU does."""
    d = x.dtype
    if not (d.is_floating_point or d.is_complex):
        d = _C.get_default_dtype()
    if d not in (_C.float32, _C.float64, _C.complex64, _C.complex128):
        raise RuntimeError(f"Unsupported dtype {_scalar_type(d)}")
    if require_complex and not d.is_complex:
        d = _C.complex64 if d == _C.float32 else _C.complex128
    return x if d == x.dtype else x.to(d)


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """x zero-padded at the end or trimmed along each of dims to sizes."""
    pad = False
    for d, s in zip(dims, sizes):
        if x.shape[d] > s:
            x = x.narrow(d, 0, s)
        elif x.shape[d] < s:
            pad = True
    if not pad:
        return x
    shape = list(x.shape)
    for d, s in zip(dims, sizes):
        shape[d] = s
    r = _C.zeros(shape, dtype=x.dtype, device=x.device)
    region = r
    for d in dims:
        region = region.narrow(d, 0, x.shape[d])
    region.copy_(x)
    return r


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _one_dim(x, n, dim):
    """(dims, sizes) of a 1-d transform: the signal's size is n, or its current size."""
    d = _wrap(dim, x.ndim)
    n = x.shape[d] if n is None else n
    _check_points(n)
    return [d], [n]


def _shape_and_dims(x, s, dim):
    """torch's canonicalisation of s and dim for the n-d transforms: (dims, sizes) with -1 sizes filled in."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dims = [_wrap(d, x.ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dim is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions.")
        if dim is None:
            dims = list(range(x.ndim - len(s), x.ndim))
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
        for n in sizes:
            _check_points(n)
    else:
        if dim is None:
            dims = list(range(x.ndim))
        sizes = [x.shape[d] for d in dims]
    return dims, sizes


def _c2c(name, x, dims, sizes, norm, forward, out):
    x = _resize(_promote(x), dims, sizes)
    if x.dtype.is_complex:
        r = _C._fft_c2c(x, dims, _norm_mode(norm, forward), forward)
    else:
        # a real signal: the full (not onesided) r2c transform, as torch (its gradient stays real); the inverse
        # transform of a real signal is the conjugate of the forward one
        r = _C._fft_r2c(x, dims, _norm_mode(norm, forward), False)
        if not forward:
            r = r.conj()
    return _out(name, r, out)


def _r2c(name, x, dims, sizes, norm, forward, out):
    """rfft's family (onesided, forward) and ihfft's (onesided, the conjugate of the inverse transform)."""
    if x.dtype.is_complex:  # torch's three wordings
        if name in ("ihfftn", "ihfft2"):
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {_scalar_type(x.dtype)}")
        kind = "real-valued" if name in ("rfftn", "rfft2") else "real"
        raise RuntimeError(f"{'rfftn' if name == 'rfft2' else name} expects a {kind} input tensor, but got "
                           f"{_scalar_type(x.dtype)}")
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(_promote(x), dims, sizes)
    r = _C._fft_r2c(x, dims, _norm_mode(norm, forward), True)
    if not forward:
        r = r.conj()
    return _out(name, r, out)


def _c2r(name, x, dims, sizes, last, norm, forward, out):
    """irfft's family (the inverse of a onesided spectrum) and hfft's (the forward transform of a Hermitian signal,
    given by its first half: the c2r transform of its conjugate). last: the output's length along dims[-1], or None
    for 2 * (m - 1), m the input's length there."""
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if last is None:
        last = 2 * (x.shape[dims[-1]] - 1)
    _check_points(last)
    x = _resize(_promote(x, require_complex=True), dims, list(sizes[:-1]) + [last // 2 + 1])
    if forward:
        x = x.conj()
    r = _C._fft_c2r(x, dims, _norm_mode(norm, forward), last)
    return _out(name, r, out)


def _out(name, r, out):
    if out is None:
        return r
    if out.dtype != r.dtype:
        kind = "complex" if r.dtype.is_complex else "real"
        raise RuntimeError(f"{name} expects a {kind} output tensor, but got {_scalar_type(out.dtype)}")
    return _write_out(r, out, name)


# ---- 1-d ----

def fft(input, n=None, dim=-1, norm=None, *, out=None):
    dims, sizes = _one_dim(input, n, dim)
    return _c2c("fft", input, dims, sizes, norm, True, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    dims, sizes = _one_dim(input, n, dim)
    return _c2c("ifft", input, dims, sizes, norm, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    dims, sizes = _one_dim(input, n, dim)
    return _r2c("rfft", input, dims, sizes, norm, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    dims, sizes = _one_dim(input, n, dim)
    return _r2c("ihfft", input, dims, sizes, norm, False, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    d = _wrap(dim, input.ndim)
    if n is not None:
        _check_points(n)
    return _c2r("irfft", input, [d], [n], n, norm, False, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    d = _wrap(dim, input.ndim)
    if n is not None:
        _check_points(n)
    return _c2r("hfft", input, [d], [n], n, norm, True, out)


# ---- n-d ----

def fftn(input, s=None, dim=None, norm=None, *, out=None):
    dims, sizes = _shape_and_dims(input, s, dim)
    return _c2c("fftn", input, dims, sizes, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    dims, sizes = _shape_and_dims(input, s, dim)
    return _c2c("ifftn", input, dims, sizes, norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    dims, sizes = _shape_and_dims(input, s, dim)
    return _r2c("rfftn", input, dims, sizes, norm, True, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    dims, sizes = _shape_and_dims(input, s, dim)
    return _r2c("ihfftn", input, dims, sizes, norm, False, out)


def _c2r_nd(name, input, s, dim, norm, forward, out):
    dims, sizes = _shape_and_dims(input, s, dim)
    last = None if s is None or list(s)[-1] == -1 else list(s)[-1]
    return _c2r(name, input, dims, sizes, last, norm, forward, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2r_nd("irfftn", input, s, dim, norm, False, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2r_nd("hfftn", input, s, dim, norm, True, out)


# ---- 2-d: the n-d transforms over two dims (the last two by default) ----

def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ifftn(input, s, dim, norm, out=out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return irfftn(input, s, dim, norm, out=out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ihfftn(input, s, dim, norm, out=out)


# ---- sample frequencies and shifts ----

def _freq_dtype(name, dtype):
    dtype = _C.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return dtype


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n): the sample frequencies of an n-point fft."""
    dtype = _freq_dtype("fftfreq", dtype)
    r = _C.arange(n, dtype=dtype, device=device)
    r[(n + 1) // 2:] -= n
    r = r.mul_(1.0 / (n * d))
    r = _write_out(r, out, "fftfreq")
    return r.requires_grad_(True) if requires_grad else r


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """[0, 1, ..., n // 2] / (d * n): the sample frequencies of an n-point rfft."""
    dtype = _freq_dtype("rfftfreq", dtype)
    r = _C.arange(n // 2 + 1, dtype=dtype, device=device).mul_(1.0 / (n * d))
    r = _write_out(r, out, "rfftfreq")
    return r.requires_grad_(True) if requires_grad else r


def _shift(input, dim, inverse):
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [_wrap(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)]
    if not dims:
        return input.clone() if input.ndim == 0 else input.roll(0, 0)
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    return input.roll(shifts, dims)


def fftshift(input, dim=None):
    """input rolled so the zero frequency is at the center of each of dim (all dims by default)."""
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    """The inverse of fftshift."""
    return _shift(input, dim, True)

