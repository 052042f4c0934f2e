"""The package's wiring: import paths, the lazy attribute, the torch alias, the utils module."""
import os
import subprocess
import sys

import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T
from comparison import assert_same
from distribution_oracle import single_thread  # noqa: F401  (autouse fixture)
from distribution_oracle import np_of

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_import_paths():
    import pyctorch.distributions as dist
    from pyctorch.distributions import constraints, kl, transforms, utils  # noqa: F401
    assert P.distributions is dist
    assert dist.Normal.__module__ == "pyctorch.distributions.normal"
    # class-level reads of instance-dependent constraints are dependent placeholders, as in torch
    assert constraints.is_dependent(dist.Categorical.support)
    assert constraints.is_dependent(dist.Uniform.support)
    assert dist.Categorical.support.event_dim == 0 and dist.Categorical.support.is_discrete


def test_alias_resolves_torch_distributions():
    code = ("import torch, torch.distributions as d\n"
            "from torch.distributions.constraints import positive\n"
            "assert d is torch.distributions and 'pyctorch' in d.__file__\n"
            "print(float(d.kl_divergence(d.Normal(0., 1.), d.Normal(1., 1.))))")
    out = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0.5"


@requires_torch
def test_utils_match_torch():
    from pyctorch.distributions import utils as pu
    from torch.distributions import utils as tu
    probs = [[0.0, 0.3, 1.0], [0.2, 0.5, 0.7]]
    for fn in ("probs_to_logits", "clamp_probs"):
        assert_same(getattr(pu, fn)(P.tensor(probs)), getattr(tu, fn)(T.tensor(probs)), 1e-6, 1e-6)
    for binary in (False, True):
        assert_same(pu.logits_to_probs(P.tensor(probs), binary), tu.logits_to_probs(T.tensor(probs), binary), 1e-6,
                    1e-7)
    mat = np.arange(16.0).reshape(4, 4)
    for diag in (-2, -1, 0, 1):
        vec = pu.tril_matrix_to_vec(P.tensor(mat.tolist()), diag)
        assert_same(vec, tu.tril_matrix_to_vec(T.tensor(mat.tolist()), diag), 0, 0)
        assert_same(pu.vec_to_tril_matrix(vec, diag), tu.vec_to_tril_matrix(T.tensor(np_of(vec).tolist()), diag), 0, 0)
    a, b = pu.broadcast_all(P.tensor([1.0, 2.0], dtype=P.float64), 3)
    assert b.dtype == P.float64 and np_of(b).tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="Input arguments must all be instances of Number"):
        pu.broadcast_all("x")
