"""vmap over the sample registry (tests/samples.py): for the first samples of every op, vmap of the op over a batch
of three differently scaled copies of the sample's tensor inputs equals the op run on each copy, stacked. This
checks every batching rule the op table's calls reach (and the per-sample fallback) against pyctorch's own
unbatched ops; torch's vmap is compared on chosen functions in test_vmap_rules.py."""
import warnings

import numpy as np
import pytest

import pyctorch as P
import samples as S
from pyctorch._functorch import batching_rules
from pyctorch._functorch.batching_rules import DataDependentError

B = 3
# samples whose per-sample run reads absolute storage offsets (as_strided of a view): inside vmap the offset counts
# from each sample's start, as in torch, so they differ from a loop over separately made tensors by design
ABSOLUTE_OFFSETS = {("as_strided", 2)}


def _cases():
    out = []
    for op in sorted(S.SAMPLES):
        picked = [k for k, s in S.samples_for(op, "grad") if not s.skip][:2]
        out.extend((op, k) for k in picked)
    return out


def _scaled(arr, b):
    if isinstance(arr, np.ndarray) and arr.dtype.kind == "f":
        return arr * (1 + 0.25 * b)
    return arr


def _tensor_leaves(r):
    if isinstance(r, (tuple, list)):
        return [t for item in r for t in _tensor_leaves(item)]
    return [r]


@pytest.mark.parametrize("op,k", _cases())
def test_vmap_matches_the_per_sample_loop(op, k):
    if (op, k) in ABSOLUTE_OFFSETS:
        pytest.skip("as_strided's offsets are per sample inside vmap (torch's semantics)")
    sample = S.SAMPLES[op][k]
    arrs = S.arrays(op, k, sample)
    inputs = [S.make_inputs(P, sample, [_scaled(a, b) for a in arrs], requires_grad=False) for b in range(B)]
    try:
        rows = [S.call(P, sample, xs) for xs in inputs]
    except Exception:  # noqa: BLE001 -- a sample made for an error check
        pytest.skip("the op refuses the scaled sample")
    leaves = _tensor_leaves(rows[0])
    if not all(isinstance(t, P.Tensor) for t in leaves):
        pytest.skip("an output that is not a tensor (vmap refuses it, as torch's)")
    mapped = [i for i, x in enumerate(inputs[0]) if isinstance(x, P.Tensor)]
    if not mapped:
        pytest.skip("no tensor input")
    stacked = [P.stack([xs[i] for xs in inputs]) if i in mapped else inputs[0][i] for i in range(len(inputs[0]))]
    in_dims = tuple(0 if i in mapped else None for i in range(len(stacked)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = P.func.vmap(lambda *xs: sample.call(P, list(xs)), in_dims=in_dims)(*stacked)
        except DataDependentError:
            return  # torch's vmap refuses these too (dynamic shapes, .item())
        except RuntimeError as e:
            if "randomness error mode" in str(e):
                return
            raise
    got = _tensor_leaves(got)
    assert len(got) == len(leaves)
    for j, g in enumerate(got):
        expected = P.stack([_tensor_leaves(r)[j] for r in rows])
        assert tuple(g.shape) == tuple(expected.shape), (j, g.shape, expected.shape)
        assert g.dtype == expected.dtype
        if g.dtype.is_floating_point or g.dtype.is_complex:
            assert P.allclose(g, expected, rtol=1e-7, atol=1e-10, equal_nan=True), j
        else:
            assert bool((g == expected).all()), j


def test_some_ops_reach_the_fallback_and_most_do_not():
    """The sweep above runs mostly on rules: count which of its first samples needed the per-sample fallback."""
    fell, ruled = set(), set()
    for op, k in _cases()[::7]:
        sample = S.SAMPLES[op][k]
        arrs = S.arrays(op, k, sample)
        xs = S.make_inputs(P, sample, arrs, requires_grad=False)
        idx = [i for i, x in enumerate(xs) if isinstance(x, P.Tensor) and x.dtype.is_floating_point]
        if not idx:
            continue
        stacked = [P.stack([x, x]) if i in idx else x for i, x in enumerate(xs)]
        batching_rules.fallback_calls.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                P.func.vmap(lambda *a: sample.call(P, list(a)),
                            in_dims=tuple(0 if i in idx else None for i in range(len(xs))))(*stacked)
            except Exception:  # noqa: BLE001
                continue
        (fell if batching_rules.fallback_calls else ruled).add(op)
    assert len(ruled) > 3 * len(fell), (sorted(fell), len(ruled))
