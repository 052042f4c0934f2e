"""Datasets (TensorDataset, ConcatDataset, ChainDataset, Subset, StackDataset, IterableDataset)
and random_split: by hand, and random_split's subsets against torch's."""
import warnings

import pytest

from conftest import requires_torch, torch

import pyctorch
from pyctorch.utils.data import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                                 TensorDataset, random_split)


class Range(IterableDataset):
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __iter__(self):
        return iter(range(self.a, self.b))

    def __len__(self):
        return self.b - self.a


class Listed(Dataset):
    def __init__(self, items):
        self.items = items

    def __getitem__(self, i):
        return self.items[i]

    def __len__(self):
        return len(self.items)


def test_tensor_dataset():
    x, y = pyctorch.arange(12.0).reshape(4, 3), pyctorch.tensor([0, 1, 0, 1])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6.0, 7.0, 8.0] and b.item() == 0
    assert ds[1:3][0].shape == (2, 3)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, pyctorch.zeros(3))


def test_concat_and_add():
    a, b = Listed([1, 2, 3]), Listed([10, 20])
    c = a + b
    assert isinstance(c, ConcatDataset) and len(c) == 5 and c.cumulative_sizes == [3, 5]
    assert [c[i] for i in range(5)] == [1, 2, 3, 10, 20] and c[-1] == 20 and c[-5] == 1
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        c[-6]
    with pytest.raises(IndexError):
        c[5]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([a, Range(0, 2)])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert c.cummulative_sizes == [3, 5]
    assert issubclass(w[0].category, FutureWarning)
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__."):
        Dataset()[0]


def test_chain_dataset():
    ch = Range(0, 3) + Range(10, 12)
    assert isinstance(ch, ChainDataset) and list(ch) == [0, 1, 2, 10, 11] and len(ch) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([Listed([1])]))


def test_subset():
    base = Listed(list(range(100, 110)))
    s = Subset(base, [9, 0, 4])
    assert len(s) == 3 and s[0] == 109 and s.__getitems__([2, 1]) == [104, 100]

    class Bad(Subset):
        def __getitem__(self, i):
            return 0
    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad(base, [0])


def test_stack_dataset():
    a, b = Listed([1, 2, 3]), Listed(["x", "y", "z"])
    t = StackDataset(a, b)
    assert len(t) == 3 and t[1] == (2, "y") and t.__getitems__([0, 2]) == [(1, "x"), (3, "z")]
    d = StackDataset(num=a, txt=b)
    assert d[2] == {"num": 3, "txt": "z"} and d.__getitems__([1]) == [{"num": 2, "txt": "y"}]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(a, Listed([1]))
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()
    with pytest.raises(ValueError, match="but both types are given"):
        StackDataset(a, x=b)


def test_random_split_by_hand():
    g = pyctorch.Generator().manual_seed(0)
    parts = random_split(range(10), [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    parts = random_split(range(10), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [5, 3, 2]
    parts = random_split(range(11), [0.5, 0.5])  # remainder handed out round-robin
    assert [len(p) for p in parts] == [6, 5]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(range(10), [0.5, -0.5, 1.0])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [0.9, 0.1])


@requires_torch
@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.34, 0.33, 0.33], [10, 0]])
def test_random_split_matches_torch(lengths):
    import torch.utils.data as td
    for use_gen in (False, True):
        out = []
        for m, split in ((pyctorch, random_split), (torch, td.random_split)):
            m.manual_seed(11)
            kw = {"generator": m.Generator().manual_seed(4)} if use_gen else {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append([list(p.indices) for p in split(range(10), lengths, **kw)])
        assert out[0] == out[1]


@requires_torch
def test_dataset_errors_match_torch():
    import torch.utils.data as td
    import pyctorch.utils.data as pd
    cases = [
        lambda d, m: d.TensorDataset(m.zeros(2), m.zeros(3)),
        lambda d, m: d.ConcatDataset([]),
        lambda d, m: d.StackDataset(),
        lambda d, m: d.random_split(range(4), [1, 1]),
        lambda d, m: d.ConcatDataset([[1, 2]])[-3],
    ]
    for make in cases:
        with pytest.raises(Exception) as te:
            make(td, torch)
        with pytest.raises(Exception) as pe:
            make(pd, pyctorch)
        assert type(pe.value) is type(te.value) and str(pe.value) == str(te.value)
