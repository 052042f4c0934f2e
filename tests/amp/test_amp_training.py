"""Mixed precision end to end: the tiny GPT of tests/nn/test_end_to_end.py trained under bfloat16
autocast converges like its float32 run and like torch's autocast run from the same seed; every
module's output dtype under autocast is torch's; a float16 autocast + GradScaler run trains and its
scale follows torch's."""
import math
import os
import sys

import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "nn"))
from test_end_to_end import gpt  # noqa: E402

STEPS = 40


def _data(lib):
    rs = np.random.RandomState(0)
    return lib.tensor(rs.randint(0, 48, (4, 16))), lib.tensor(rs.randint(0, 48, (4, 16)))


def train(lib, amp_dtype=None, scaler=False, steps=STEPS):
    lib.manual_seed(0)
    model = gpt(lib)
    idx, tgt = _data(lib)
    opt = lib.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95))
    sc = lib.amp.GradScaler("cpu", init_scale=2.0 ** 12, growth_interval=5) if scaler else None
    losses, scales = [], []
    for _ in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=amp_dtype or lib.bfloat16, enabled=amp_dtype is not None):
            loss = model(idx, tgt)
        if sc is not None:
            sc.scale(loss).backward()
            sc.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            sc.step(opt)
            sc.update()
            scales.append(sc.get_scale())
        else:
            loss.backward()
            lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        losses.append(loss.item())
    return losses, scales, model


def test_bf16_autocast_converges_like_fp32():
    fp32, _, _ = train(P)
    bf16, _, model = train(P, P.bfloat16)
    assert bf16[-1] < bf16[0] * 0.5  # it trains
    assert abs(bf16[-1] - fp32[-1]) < 0.05 * fp32[-1] + 0.02, (bf16[-1], fp32[-1])
    for a, b in zip(bf16[:10], fp32[:10]):  # early steps agree closely
        assert math.isclose(a, b, rel_tol=2e-2)
    assert all(p.dtype == P.float32 for p in model.parameters())  # weights stay float32


@requires_torch
def test_bf16_autocast_matches_torch():
    p, _, _ = train(P, P.bfloat16)
    t, _, _ = train(T, T.bfloat16)
    for step, (a, b) in enumerate(zip(p[:10], t[:10])):
        assert math.isclose(a, b, rel_tol=2e-2), f"step {step}: pyctorch {a} torch {b}"
    assert abs(p[-1] - t[-1]) < 0.05 * t[-1] + 0.02


def _module_dtypes(lib, amp_dtype):
    lib.manual_seed(0)
    model = gpt(lib)
    idx, tgt = _data(lib)
    seen = []

    def hook(name):
        def fn(mod, inp, out):
            outs = out if isinstance(out, (tuple, list)) else (out,)
            seen.append((name, type(mod).__name__, tuple(str(o.dtype) for o in outs if hasattr(o, "dtype"))))
        return fn

    for name, mod in model.named_modules():
        mod.register_forward_hook(hook(name))
    with lib.autocast("cpu", dtype=amp_dtype):
        loss = model(idx, tgt)
    loss.backward()
    return seen, str(loss.dtype)


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_module_output_dtypes_match_torch(dtype):
    p, lp = _module_dtypes(P, getattr(P, dtype))
    t, lt = _module_dtypes(T, getattr(T, dtype))
    assert p == t
    assert lp == lt == "torch.float32"  # cross_entropy runs in float32
    assert any(d == ("torch." + dtype,) for _, kind, d in p if kind == "Linear")


@requires_torch
def test_fp16_autocast_with_grad_scaler_matches_torch():
    p, ps, _ = train(P, P.float16, scaler=True, steps=20)
    t, ts, _ = train(T, T.float16, scaler=True, steps=20)
    assert ps == ts
    assert p[-1] < p[0] * 0.7
    for step, (a, b) in enumerate(zip(p[:8], t[:8])):
        assert math.isclose(a, b, rel_tol=1e-2), f"step {step}: pyctorch {a} torch {b}"
