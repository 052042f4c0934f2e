"""Per-axis weight matrices of F.interpolate's bicubic and anti-aliased (bilinear, bicubic) resampling.

Why dense matrices: these resamplings are separable (a 2-d output is a 1-d resampling along W, then along H) and a
1-d resampling is linear, out[i] = sum_j M[i, j] * in[j]. Each row of M holds the very taps and weights torch's kernel
uses for output index i (its formulas: ATen/native/UpSample.h, native/cpu/UpSampleKernel.cpp), so Mh @ x @ Mw^T gives
torch's numbers with ordinary tensor ops, and autograd differentiates it with no backward of its own. An image axis
is short enough for a dense (out, in) matrix.

A row is a few taps, each a filter value at the tap's distance from the output's source position:
  * without antialias (bicubic): 4 taps around the source index, Keys' cubic with a = -0.75 (OpenCV's), taps past
    the border clamped onto the edge (their weights add up there);
  * with antialias: a window of 2 (bilinear) or 4 (bicubic) taps widened by the scale when downsampling, the
    filter (triangle; Keys' cubic with a = -0.5, PIL's) stretched as much, the weights normalised to sum 1.
"""
import math

import numpy as np


def _cubic(a):
    """Keys' cubic convolution kernel with parameter a."""
    def kernel(x):
        x = abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0
    return kernel


def _triangle(x):
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


# mode: (taps at scale 1, filter without antialias, filter with antialias)
FILTERS = {"bilinear": (2, _triangle, _triangle), "bicubic": (4, _cubic(-0.75), _cubic(-0.5))}


def _to_float32(v):
    return float(np.float32(v))


def _to_float16(v):
    return float(np.float16(v))


def _to_bfloat16(v):
    """v rounded to bfloat16 (to nearest, ties to even; numpy has no bfloat16): the upper half of its float32."""
    bits = int(np.array(v, dtype=np.float32).view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return float(np.array(bits & 0xFFFFFFFF, dtype=np.uint32).view(np.float32))


# the rounding of torch's scale and source positions (its opmath type) and of its per-tap weights, per input dtype
_ROUNDING = {"float64": (float, float), "float32": (_to_float32, _to_float32),
             "float16": (_to_float32, _to_float16), "bfloat16": (_to_float32, _to_bfloat16)}


def _scale(in_size, out_size, align_corners, scale_factor, rnd):
    """torch's area_pixel_compute_scale: input pixels per output pixel (a given scale_factor's inverse)."""
    if align_corners:
        return rnd((in_size - 1) / (out_size - 1)) if out_size > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return rnd(1.0 / scale_factor)
    return rnd(in_size / out_size)


def _taps(i, in_size, scale, mode, antialias, align_corners, rnd):
    """(index of the first tap, weights of the taps) of output i; the taps' indices may lie outside [0, in_size)."""
    size, plain, smooth = FILTERS[mode]
    if antialias:
        support = size / 2 * scale if scale >= 1.0 else size / 2
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        center = rnd(scale * (i + 0.5))  # align_corners only changes the scale: torch's center is the same
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size, lo + math.ceil(support) * 2 + 1)
        weights = [smooth((j - center + 0.5) * invscale) for j in range(lo, hi)]
        total = 0.0
        for w in weights:  # in order, as torch sums them
            total += w
        return lo, [w / total for w in weights] if total != 0.0 else weights
    src = rnd(scale * i if align_corners else scale * (i + 0.5) - 0.5)  # not clamped at 0: cubic
    base = min(math.floor(_to_float32(src)), in_size - 1)  # torch floors with floorf, in float32 even for float64
    t = min(max(src - base, 0.0), 1.0)
    first = base - size // 2 + 1
    return first, [plain(first + k - base - t) for k in range(size)]


def _build(in_size, out_size, mode, antialias, align_corners, scale_factor, dtype="float64"):
    """The (out_size, in_size) float64 matrix, and the largest value any entry took while taps were added into it
    (torch sizes its uint8 fixed point by it)."""
    rnd, wround = _ROUNDING[dtype]
    scale = _scale(in_size, out_size, align_corners, scale_factor, rnd)
    m = np.zeros((out_size, in_size))
    peak = 0.0
    for i in range(out_size):
        first, weights = _taps(i, in_size, scale, mode, antialias, align_corners, rnd)
        for k, w in enumerate(weights):
            j = min(max(first + k, 0), in_size - 1)
            m[i, j] += wround(w)
            peak = max(peak, m[i, j])
    return m, peak


def matrix(in_size, out_size, mode, antialias, align_corners, scale_factor, dtype):
    """The resampling matrix of one axis for an input of dtype "float64", "float32", "float16" or "bfloat16" (a
    float32 numpy array but for float64), from torch's scale, source positions and weights in that dtype's
    precision."""
    m = _build(in_size, out_size, mode, antialias, align_corners, scale_factor, dtype)[0]
    return m if dtype == "float64" else m.astype(np.float32)


def int16_matrix(in_size, out_size, mode, antialias, align_corners, scale_factor):
    """torch's uint8 weights: the float64 matrix in fixed point, (integer weights as float64, precision bits):
    out = clamp((sum_j W[i, j] * in[j] + 2**(bits - 1)) >> bits, 0, 255), the weights as large as int16 allows."""
    m, peak = _build(in_size, out_size, mode, antialias, align_corners, scale_factor)
    bits = 0
    while bits < 22 and int(0.5 + peak * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    v = m * (1 << bits)
    return np.trunc(v + np.where(v < 0, -0.5, 0.5)), bits


def pass_matrices(in_hw, out_hw, mode, antialias, align_corners, scale_factors, dtype):
    """The (H, W) matrices of torch's values and those of its gradient (None: the identity, no pass). They differ
    where an axis keeps its size under a scale_factor that is not 1 (5 * 1.1 -> 5): torch's anti-aliased kernel
    skips such an axis but its backward resamples it, and its bicubic backward copies when both axes keep their
    size but the forward resamples them; and for float16 / bfloat16, whose backward has float32 weights."""
    def mats(dt):
        return tuple(matrix(i, o, mode, antialias, align_corners, s, dt)
                     for i, o, s in zip(in_hw, out_hw, scale_factors))
    fwd = mats(dtype)
    bwd = fwd if dtype in ("float32", "float64") else mats("float32")
    same = [i == o for i, o in zip(in_hw, out_hw)]
    if antialias:
        return tuple(None if s else m for m, s in zip(fwd, same)), bwd
    return fwd, ((None, None) if all(same) else bwd)
