"""Samplers (Sequential, Random, SubsetRandom, WeightedRandom, Batch, Distributed): the
indices torch's samplers give for the same seed or generator, their lengths and errors."""
import pytest

from conftest import requires_torch, torch

import pyctorch
from pyctorch.utils.data import (BatchSampler, DistributedSampler, RandomSampler, Sampler, SequentialSampler,
                                 SubsetRandomSampler, WeightedRandomSampler)


def test_sequential_and_batch_by_hand():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert len(SequentialSampler(range(5))) == 5
    assert list(BatchSampler(SequentialSampler(range(10)), 3, False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(SequentialSampler(range(10)), 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(range(10), 3, False)) == 4 and len(BatchSampler(range(10), 3, True)) == 3
    assert list(BatchSampler(range(0), 3, False)) == []


def test_sampler_errors():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=True"):
        BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        BatchSampler(range(3), 2, 1)
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 1, replacement=None)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(1, 2\)"):
        WeightedRandomSampler([[1.0, 2.0]], 1)
    with pytest.raises(NotImplementedError):
        iter(Sampler())


def test_random_sampler_is_a_permutation_and_reseeds_each_epoch():
    pyctorch.manual_seed(3)
    s = RandomSampler(range(50))
    a, b = list(s), list(s)
    assert sorted(a) == list(range(50)) and sorted(b) == list(range(50)) and a != b
    g = pyctorch.Generator().manual_seed(1)
    r = list(RandomSampler(range(7), replacement=True, num_samples=100, generator=g))
    assert len(r) == 100 and all(0 <= i < 7 for i in r)
    assert len(RandomSampler(range(7), num_samples=3)) == 3
    sub = SubsetRandomSampler([3, 9, 4, 30])
    assert sorted(sub) == [3, 4, 9, 30] and len(sub) == 4


def test_distributed_sampler_by_hand():
    s0 = DistributedSampler(range(10), num_replicas=3, rank=0, shuffle=False)
    s2 = DistributedSampler(range(10), num_replicas=3, rank=2, shuffle=False)
    assert list(s0) == [0, 3, 6, 9] and list(s2) == [2, 5, 8, 1] and len(s0) == 4  # padded from the start
    d = DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False, drop_last=True)
    assert list(d) == [1, 4, 7] and len(d) == 3
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(10), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(10))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(10), num_replicas=2)
    s = DistributedSampler(range(10), num_replicas=2, rank=0, seed=5)
    e0 = list(s)
    assert list(s) == e0
    s.set_epoch(1)
    other = DistributedSampler(range(10), 2, 1, seed=5)
    other.set_epoch(1)
    assert list(s) != e0 and sorted(list(s) + list(other)) == list(range(10))  # the replicas split one order


@requires_torch
@pytest.mark.parametrize("seed", [0, 7])
def test_random_samplers_match_torch(seed):
    import torch.utils.data as td
    cases = [
        lambda m, d: d.RandomSampler(range(37)),
        lambda m, d: d.RandomSampler(range(37), num_samples=80),
        lambda m, d: d.RandomSampler(range(37), num_samples=5),
        lambda m, d: d.RandomSampler(range(11), replacement=True),
        lambda m, d: d.RandomSampler(range(11), replacement=True, num_samples=70),
        lambda m, d: d.RandomSampler(range(11), generator=m.Generator().manual_seed(seed + 1)),
        lambda m, d: d.SubsetRandomSampler([3, 9, 4, 1, 20, 8]),
        lambda m, d: d.SubsetRandomSampler(list(range(30)), generator=m.Generator().manual_seed(seed)),
        lambda m, d: d.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 12),
        lambda m, d: d.WeightedRandomSampler([0.9, 0.4, 0.05, 0.2, 0.3, 0.1], 5, replacement=False),
        lambda m, d: d.WeightedRandomSampler([1, 2, 3], 6, generator=m.Generator().manual_seed(seed)),
        lambda m, d: d.BatchSampler(d.RandomSampler(range(23)), 5, False),
        lambda m, d: d.BatchSampler(d.RandomSampler(range(23)), 5, True),
    ]
    import pyctorch.utils.data as pd
    for make in cases:
        out = []
        for m, d in ((pyctorch, pd), (torch, td)):
            m.manual_seed(seed)
            s = make(m, d)
            out.append(([list(s), list(s)], len(s)))  # two epochs: the second draws anew
        assert out[0] == out[1]
        m_after = [pyctorch.rand(1).item(), torch.rand(1).item()]  # the global streams stayed in step
        assert m_after[0] == pytest.approx(m_after[1])


@requires_torch
@pytest.mark.parametrize("kw", [dict(num_replicas=3, rank=1), dict(num_replicas=4, rank=3, drop_last=True),
                                dict(num_replicas=3, rank=0, shuffle=False), dict(num_replicas=2, rank=1, seed=9)])
def test_distributed_sampler_matches_torch(kw):
    from torch.utils.data.distributed import DistributedSampler as TS
    p, t = DistributedSampler(range(23), **kw), TS(range(23), **kw)
    for epoch in range(3):
        p.set_epoch(epoch)
        t.set_epoch(epoch)
        assert list(p) == list(t) and len(p) == len(t)


@requires_torch
def test_distributed_sampler_errors_match_torch():
    from torch.utils.data.distributed import DistributedSampler as TS
    for kw in (dict(), dict(num_replicas=2), dict(num_replicas=2, rank=-1)):
        with pytest.raises(Exception) as te:
            TS(range(4), **kw)
        with pytest.raises(Exception) as pe:
            DistributedSampler(range(4), **kw)
        assert type(pe.value) is type(te.value) and str(pe.value) == str(te.value)
