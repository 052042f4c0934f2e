"""The float8 storage dtypes (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu).

torch keeps them as storage formats: creation, conversions to and from the other dtypes with its rounding (to nearest,
ties to even) and its saturation and NaN rules, views and joins, printing, finfo, save/load; arithmetic refuses. The
bit patterns of conversions are compared with torch's on ~1M floats; the decoding of all 256 patterns is checked
against values computed here from the formats' definitions, which always runs.
"""
import io
import math

import numpy as np
import pytest

import pyctorch
from conftest import assert_same, assert_same_outcome, requires_torch, torch

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
# (exponent bits, mantissa bits, bias) of the four sign/exponent/mantissa formats
LAYOUT = {"float8_e4m3fn": (4, 3, 7), "float8_e5m2": (5, 2, 15), "float8_e4m3fnuz": (4, 3, 8), "float8_e5m2fnuz": (5, 2, 16)}


def _decode(name, b):
    """The value of bit pattern b in format `name`, from the format's definition."""
    if name == "float8_e8m0fnu":
        return math.nan if b == 0xFF else 2.0 ** (b - 127)
    e_bits, m_bits, bias = LAYOUT[name]
    sign = -1.0 if b & 0x80 else 1.0
    e, m = (b & 0x7F) >> m_bits, b & ((1 << m_bits) - 1)
    if name.endswith("fnuz") and b == 0x80:
        return math.nan
    top = (1 << e_bits) - 1
    if name == "float8_e5m2" and e == top:
        return math.nan if m else sign * math.inf
    if name == "float8_e4m3fn" and e == top and m == (1 << m_bits) - 1:
        return math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)


@pytest.mark.parametrize("name", FLOAT8)
def test_decoding_all_patterns(name):
    got = pyctorch.arange(256, dtype=pyctorch.uint8).view(getattr(pyctorch, name)).float().tolist()
    want = [_decode(name, b) for b in range(256)]
    for b, (g, w) in enumerate(zip(got, want)):
        assert (math.isnan(g) and math.isnan(w)) or g == w, (name, b, g, w)


@pytest.mark.parametrize("name", FLOAT8)
def test_encoding_round_trips_and_rounds_to_nearest_even(name):
    """Every finite value of the format converts back to its own pattern; a midpoint goes to the even neighbour."""
    dt = getattr(pyctorch, name)
    pats = [b for b in range(256) if math.isfinite(_decode(name, b))]
    vals = pyctorch.tensor([_decode(name, b) for b in pats], dtype=pyctorch.float64)
    back = vals.to(dt).view(pyctorch.uint8).tolist()
    for b, r in zip(pats, back):
        # fnuz and e8m0 have one zero; the e4m3fn / e5m2 negative zero keeps its sign
        assert r == b or (_decode(name, b) == 0 and _decode(name, r) == 0), (name, b, r)
    if name != "float8_e8m0fnu":
        one = LAYOUT[name][1]
        mid = 1 + 2.0 ** -(one + 1)  # halfway between 1 and the next value: 1 is even
        assert pyctorch.tensor([mid]).to(dt).float().item() == 1.0
        mid3 = 1 + 3 * 2.0 ** -(one + 1)  # halfway between two values, the upper one even
        assert pyctorch.tensor([mid3]).to(dt).float().item() == 1 + 2 * 2.0 ** -one


def test_saturation_and_nan_rules():
    x = pyctorch.tensor([500.0, math.inf, -math.inf, math.nan, 1e9])
    assert x.to(pyctorch.float8_e4m3fn).float().tolist()[:3] == [448.0, 448.0, -448.0]
    assert x.to(pyctorch.float8_e5m2).float().tolist()[1:3] == [math.inf, -math.inf]
    assert all(math.isnan(v) for v in x.to(pyctorch.float8_e4m3fnuz).float().tolist())
    assert pyctorch.tensor([-0.0]).to(pyctorch.float8_e4m3fnuz).view(pyctorch.uint8).item() == 0


@requires_torch
@pytest.mark.parametrize("name", FLOAT8)
def test_conversion_bits_match_torch(name):
    rng = np.random.default_rng(0)
    bits = np.concatenate([rng.integers(0, 2 ** 32, 300000, dtype=np.uint64).astype(np.uint32),
                           np.arange(0, 2 ** 32, 2 ** 32 // 100000 + 7, dtype=np.uint64).astype(np.uint32)])
    grid = np.concatenate([np.arange(-600, 600, 0.25), 2.0 ** np.arange(-140, 130), np.linspace(-7e4, 7e4, 20001)])
    grid = grid.astype(np.float32)
    f = np.concatenate([bits.view(np.float32), grid, np.nextafter(grid, np.inf), np.nextafter(grid, -np.inf)])
    want = torch.from_numpy(f).to(getattr(torch, name)).view(torch.uint8).numpy()
    got = np.asarray(pyctorch.from_numpy(f).to(getattr(pyctorch, name)).view(pyctorch.uint8).tolist(), dtype=np.uint8)
    bad = np.nonzero(want != got)[0]
    assert bad.size == 0, [(float(f[i]), int(got[i]), int(want[i])) for i in bad[:5]]
    # from float64, float16, bfloat16 and integers (through float, as torch converts)
    d = np.array([300.0, 1e300, -1e-300, 464.00000001, 0.0146484375, -3.0, 2.0 ** -9 * 1.5, 1e-40])
    for src in ("float64", "float16", "bfloat16", "int32"):
        assert_same(pyctorch.from_numpy(d).to(getattr(pyctorch, src)).to(getattr(pyctorch, name)).view(pyctorch.uint8),
                    torch.from_numpy(d).to(getattr(torch, src)).to(getattr(torch, name)).view(torch.uint8), exact=True)


@requires_torch
@pytest.mark.parametrize("name", FLOAT8)
def test_conversions_out_of_float8_match_torch(name):
    for dst in ("float32", "float64", "float16", "bfloat16", "int64", "int8", "uint8", "bool", "complex64"):
        assert_same_outcome(
            lambda: pyctorch.arange(256, dtype=pyctorch.uint8).view(getattr(pyctorch, name)).to(getattr(pyctorch, dst)),
            lambda: torch.arange(256, dtype=torch.uint8).view(getattr(torch, name)).to(getattr(torch, dst)))


@requires_torch
@pytest.mark.parametrize("name", FLOAT8)
def test_creation_views_printing_finfo(name):
    P, T = getattr(pyctorch, name), getattr(torch, name)
    cases = [
        lambda L, d: L.zeros(2, 3, dtype=d), lambda L, d: L.ones(4, dtype=d), lambda L, d: L.full((2,), 3.0, dtype=d),
        lambda L, d: L.tensor([1.5, -2.0, 0.1, 448.0], dtype=d), lambda L, d: L.tensor([[0.5, 1], [2, 3]], dtype=d),
        lambda L, d: L.tensor([1.0, 2, 3], dtype=d)[1:], lambda L, d: L.cat([L.ones(2, dtype=d), L.zeros(1, dtype=d)]),
        lambda L, d: L.stack([L.ones(2, dtype=d)] * 2), lambda L, d: L.ones(2, 3, dtype=d).t().contiguous(),
        lambda L, d: L.ones(2, 3, dtype=d).reshape(3, 2), lambda L, d: L.zeros_like(L.ones(2, dtype=d)),
        lambda L, d: L.ones(3, dtype=d).clone(), lambda L, d: L.zeros(3, dtype=d).fill_(2),
        lambda L, d: L.zeros(2, dtype=d).copy_(L.tensor([1.0, 2.0])), lambda L, d: L.tensor([1.0, 2.0]).to(d).tolist(),
        lambda L, d: L.tensor(0.25).to(d).item(),
    ]
    for case in cases:
        assert_same_outcome(lambda: case(pyctorch, P), lambda: case(torch, T), exact=True)
    for data in ([1.5, -2.0, 0.1, 448.0], [[1.0, 2.0], [3.0, 0.5]], [1e-3]):
        assert repr(pyctorch.tensor(data).to(P)) == repr(torch.tensor(data).to(T))
    fp, ft = pyctorch.finfo(P), torch.finfo(T)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(fp, attr) == getattr(ft, attr), attr
    assert (P.is_floating_point, P.is_signed, P.is_complex, P.itemsize) == \
        (T.is_floating_point, T.is_signed, T.is_complex, T.itemsize)


@requires_torch
def test_arithmetic_and_promotion_refuse_as_torch():
    for name in FLOAT8:
        P, T = getattr(pyctorch, name), getattr(torch, name)
        calls = [lambda L, d: L.ones(2, dtype=d) + L.ones(2, dtype=d), lambda L, d: L.ones(2, dtype=d).sum(),
                 lambda L, d: L.ones(2, dtype=d).exp(), lambda L, d: L.ones(2, dtype=d) + L.ones(2),
                 lambda L, d: L.promote_types(d, L.float32), lambda L, d: L.randn(2, dtype=d),
                 lambda L, d: L.ones(2, dtype=d).numpy(), lambda L, d: -L.ones(2, dtype=d),
                 lambda L, d: L.ones(2, dtype=d).neg()]
        for call in calls:
            assert_same_outcome(lambda: call(pyctorch, P), lambda: call(torch, T))
        assert_same_outcome(lambda: pyctorch.promote_types(P, pyctorch.float32),
                            lambda: torch.promote_types(T, torch.float32), message=True)


@requires_torch
def test_save_load_both_ways():
    for name in FLOAT8:
        data = [1.5, -2.0, 0.25, 448.0 if "e4m3fn" == name[7:] else 2.0]
        buf = io.BytesIO()
        pyctorch.save(pyctorch.tensor(data).to(getattr(pyctorch, name)), buf)
        buf.seek(0)
        assert_same(torch.load(buf), torch.tensor(data).to(getattr(torch, name)), exact=True)
        buf = io.BytesIO()
        torch.save(torch.tensor(data).to(getattr(torch, name)), buf)
        buf.seek(0)
        assert_same(pyctorch.load(buf), torch.tensor(data).to(getattr(torch, name)), exact=True)


def test_save_load_round_trip():
    for name in FLOAT8:
        t = pyctorch.arange(256, dtype=pyctorch.uint8).view(getattr(pyctorch, name))
        buf = io.BytesIO()
        pyctorch.save({"w": t}, buf)
        buf.seek(0)
        back = pyctorch.load(buf)["w"]
        assert back.dtype == t.dtype and back.view(pyctorch.uint8).tolist() == list(range(256))
