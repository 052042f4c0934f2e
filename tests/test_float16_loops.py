"""The float16 pointwise loops (Note [float16 loops] in csrc/aten/cpu/pointwise_loops.h): chunked through F16C where
the CPU has it, element by element otherwise. Every one of the 65536 float16 values through binary and unary ops,
at lengths around the chunk (256 values), with broadcast scalars, in place and strided: the same bits as numpy (which
also computes in float32 and rounds to nearest even) and as torch."""
import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch

ALL_HALVES = np.frombuffer(np.arange(65536, dtype=np.uint16).tobytes(), dtype=np.float16)
OTHER = np.roll(ALL_HALVES, 12345)  # each value meets a different one


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    both_nan = np.isnan(a) & np.isnan(b) if a.dtype != bool else np.zeros(a.shape, bool)
    bad = ~((a == b) | both_nan)
    assert not bad.any(), f"{bad.sum()} of {a.size} differ, first at {np.argmax(bad)}: {a[bad][:4]} vs {b[bad][:4]}"


NUMPY_BINARY = {
    "add": (lambda x, y: x + y, np.add),
    "sub": (lambda x, y: x - y, np.subtract),
    "mul": (lambda x, y: x * y, np.multiply),
    "div": (lambda x, y: x / y, np.divide),
}


@pytest.mark.parametrize("op", sorted(NUMPY_BINARY))
@pytest.mark.parametrize("n", [7, 255, 256, 257, 1000, 65536])
def test_binary_matches_numpy(op, n):
    ours, ref = NUMPY_BINARY[op]
    x, y = ALL_HALVES[:n], OTHER[:n]
    with np.errstate(all="ignore"):
        expected = ref(x, y)
    same_bits(ours(pyctorch.from_numpy(x.copy()), pyctorch.from_numpy(y.copy())).numpy(), expected)


def test_scalar_operands_and_in_place_match_numpy():
    x = pyctorch.from_numpy(ALL_HALVES.copy())
    with np.errstate(all="ignore"):
        same_bits((x * 2.5).numpy(), ALL_HALVES * np.float16(2.5))
        same_bits((1 - x).numpy(), np.float16(1) - ALL_HALVES)
        same_bits((x + pyctorch.tensor(0.1, dtype=pyctorch.float16)).numpy(), ALL_HALVES + np.float16(0.1))
        y = pyctorch.from_numpy(ALL_HALVES.copy())
        y.add_(pyctorch.from_numpy(OTHER.copy()))
        same_bits(y.numpy(), ALL_HALVES + OTHER)
        same_bits((x[::3][:20000] * x[1::3][:20000]).numpy(), ALL_HALVES[::3][:20000] * ALL_HALVES[1::3][:20000])


@requires_torch
@pytest.mark.parametrize("expr", ["x + y", "x.sub(y, alpha=3)", "x.add(y, alpha=0.1)", "x * y", "x / y", "x * 2.5",
                                  "1 - x", "x.exp()", "x.sigmoid()", "x.tanh()", "x.relu()", "x ** 2", "x < y",
                                  "T.maximum(x, y)"])
def test_all_halves_match_torch(expr):
    def run(T):
        x, y = T.from_numpy(ALL_HALVES.copy()), T.from_numpy(OTHER.copy())
        return eval(expr, {"T": T, "x": x, "y": y}).numpy()
    same_bits(run(pyctorch), run(torch))

