"""float32 erfinv through the vector form (vecmath.c: libmvec's double log, then degree-20 polynomials in double): the
float64 result rounded once, on every lane position, the tail, the edges and the special values; and torch's numbers."""
import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T


def _inputs():
    rng = np.random.default_rng(0)
    body = rng.uniform(-1, 1, 300_001).astype(np.float32)
    near_one = (1 - np.logspace(-7.2, -1, 2001)).astype(np.float32)
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.nan, 2.0, -3.0, np.inf, 1e-30, -1e-45], np.float32)
    return np.concatenate([body, near_one, -near_one, specials])


def test_float32_is_the_float64_result_rounded_once():
    x = P.tensor(_inputs())
    got = x.erfinv().numpy()
    want = x.double().erfinv().float().numpy()
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isposinf(got[-8]) and np.isneginf(got[-7]) and np.isnan(got[-6:-2]).all()


@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 33])
def test_tails_and_strides_agree(n):
    x = P.tensor(_inputs()[:4 * n])
    whole = x.erfinv()
    assert np.array_equal(x[1::2].erfinv().numpy(), whole[1::2].numpy(), equal_nan=True)  # strided: scalar form
    assert np.array_equal(x[:n].erfinv().numpy(), whole[:n].numpy(), equal_nan=True)  # a ragged tail


@requires_torch
def test_float32_matches_torch_to_one_ulp():
    a = _inputs()
    got, want = P.tensor(a).erfinv().numpy(), T.erfinv(T.from_numpy(a)).numpy()
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~finite], want[~finite], equal_nan=True)
    ulps = np.abs(got[finite].view(np.int32).astype(np.int64) - want[finite].view(np.int32).astype(np.int64))
    assert ulps.max() <= 1 and (ulps == 0).mean() > 0.999


def test_avx2_loop_agrees():
    """The 8-lane AVX2 loop (PYCTORCH_NO_AVX512=1 selects it at run time) gives the same bits."""
    import os
    import subprocess
    import sys
    code = ("import numpy as np, pyctorch as P; x = P.tensor(np.random.default_rng(0).uniform(-1, 1, 100003)"
            ".astype(np.float32)); print(np.array_equal(x.erfinv().numpy(), x.double().erfinv().float().numpy()))")
    env = dict(os.environ, PYCTORCH_NO_AVX512="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip() == "True", out.stderr[-2000:]


def test_float64_tail_is_accurate():
    """float64 erfinv near +-1 (pointwise_math.h's third polynomial, no Newton step): erfc of the result gives back
    1 - y to 1e-12 (a Newton step through a double erf moved x by up to 8% at 1 - 1e-16); the middle against the
    identity erf(erfinv(y)) = y; and torch's float64 values to 1e-15 relative."""
    import math
    one_minus = np.logspace(-16, -1, 400)
    x = P.tensor(1 - one_minus, dtype=P.float64).erfinv().numpy()
    rel = [abs(math.erfc(v) - (1 - y)) / (1 - y) for v, y in zip(x, 1 - one_minus)]
    assert max(rel) < 1e-12
    assert np.array_equal(P.tensor(one_minus - 1, dtype=P.float64).erfinv().numpy(), -x)
    mid = np.random.default_rng(1).uniform(-0.99, 0.99, 2000)
    xm = P.tensor(mid, dtype=P.float64).erfinv().numpy()
    assert max(abs(math.erf(v) - y) for v, y in zip(xm, mid)) < 4e-16
    if T is not None:
        ys = np.concatenate([mid, 1 - one_minus, one_minus - 1])
        want = T.erfinv(T.from_numpy(ys)).numpy()
        got = P.tensor(ys, dtype=P.float64).erfinv().numpy()
        assert np.allclose(got, want, rtol=1e-15, atol=0)
