"""DataLoader in the main process (num_workers=0): batches, order under a seed, lengths,
IterableDatasets, argument validation; compared with torch's DataLoader."""
import numpy as np
import pytest

from conftest import requires_torch, torch
from data_helpers import Samples, Squares, flat

import pyctorch
from pyctorch.utils.data import (DataLoader, Dataset, IterableDataset, RandomSampler, TensorDataset,
                                 WeightedRandomSampler)


class Stream(IterableDataset):
    def __init__(self, n, with_len=True):
        self.n, self.with_len = n, with_len

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.with_len:
            raise TypeError("no len")
        return self.n



def test_batches_by_hand():
    dl = DataLoader(Squares(10), batch_size=4)
    assert [b.tolist() for b in dl] == [[0, 1, 4, 9], [16, 25, 36, 49], [64, 81]] and len(dl) == 3
    dl = DataLoader(Squares(10), batch_size=4, drop_last=True)
    assert [b.tolist() for b in dl] == [[0, 1, 4, 9], [16, 25, 36, 49]] and len(dl) == 2
    dl = DataLoader(Squares(3), batch_size=None)  # no batching: default_convert
    assert list(dl) == [0, 1, 4] and len(dl) == 3
    x = pyctorch.arange(10.0)
    (xb, yb), = list(DataLoader(TensorDataset(x, x * 2), batch_size=10))
    assert xb.tolist() == x.tolist() and yb.tolist() == (x * 2).tolist()
    dl = DataLoader(Squares(6), batch_sampler=[[5, 0], [1]])
    assert [b.tolist() for b in dl] == [[25, 0], [1]] and len(dl) == 2


def test_shuffle_reshuffles_and_covers():
    pyctorch.manual_seed(0)
    dl = DataLoader(Squares(30), batch_size=7, shuffle=True)
    e1 = sum((b.tolist() for b in dl), [])
    e2 = sum((b.tolist() for b in dl), [])
    assert sorted(e1) == sorted(i * i for i in range(30)) and e1 != e2


def test_iterable_dataset():
    dl = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]] and len(dl) == 3
    assert len(DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]
    with pytest.raises(TypeError):
        len(DataLoader(Stream(5, with_len=False)))


def test_iterable_dataset_length_warning():
    class Liar(Stream):
        def __len__(self):
            return 1
    dl = DataLoader(Liar(4), batch_size=1)
    assert len(dl) == 1
    with pytest.warns(UserWarning, match="was reported to be 1"):
        list(dl)


def test_sampler_and_collate_fn_arguments():
    dl = DataLoader(Squares(5), sampler=[4, 2], batch_size=1, collate_fn=lambda b: ("got", b))
    assert list(dl) == [("got", [16]), ("got", [4])]
    g = pyctorch.Generator().manual_seed(3)
    dl = DataLoader(Squares(5), sampler=WeightedRandomSampler([0, 0, 1, 0, 0], 4, generator=g), batch_size=2)
    assert [b.tolist() for b in dl] == [[4, 4], [4, 4]]


def test_argument_errors():
    ds = Squares(4)
    cases = [
        (dict(num_workers=-1), ValueError, "num_workers option should be non-negative; use num_workers=0 to disable "
                                           "multiprocessing."),
        (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
        (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified in multiprocessing."
                                              "let num_workers > 0 to enable multiprocessing, otherwise set "
                                              "prefetch_factor to None."),
        (dict(num_workers=1, prefetch_factor=-1), ValueError, "prefetch_factor option should be non-negative"),
        (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers > 0"),
        (dict(sampler=[0], shuffle=True), ValueError, "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=[[0]], batch_size=2), ValueError, "batch_sampler option is mutually exclusive with "
                                                              "batch_size, shuffle, sampler, and drop_last"),
        (dict(batch_sampler=[[0]], drop_last=True), ValueError, "batch_sampler option is mutually exclusive"),
        (dict(batch_size=None, drop_last=True), ValueError, "batch_size=None option disables auto-batching and is "
                                                            "mutually exclusive with drop_last"),
        (dict(multiprocessing_context="fork"), ValueError, "multiprocessing_context can only be used with "
                                                           "multi-process loading (num_workers > 0), but got "
                                                           "num_workers=0"),
        (dict(num_workers=1, multiprocessing_context="bogus"), ValueError, "multiprocessing_context option should "
                                                                           "specify a valid start method in"),
        (dict(num_workers=1, multiprocessing_context=3), TypeError, "multiprocessing_context option should be a "
                                                                    "valid context object"),
        (dict(batch_size=0), ValueError, "batch_size should be a positive integer value, but got batch_size=0"),
    ]
    for kw, exc, msg in cases:
        with pytest.raises(exc) as e:
            DataLoader(ds, **kw)
        assert str(e.value).startswith(msg), (kw, str(e.value))
    dl = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        dl.batch_size = 3
    dl.num_workers = 0  # not guarded
    for kw in (dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])):
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified"):
            DataLoader(Stream(3), **kw)


def test_pin_memory_warns_and_is_a_noop_without_accelerator():
    dl = DataLoader(Squares(4), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        out = [b.tolist() for b in dl]
    assert out == [[0, 1], [4, 9]]


def test_too_many_workers_warns():
    import os
    n = len(os.sched_getaffinity(0)) + 1
    with pytest.warns(UserWarning, match=f"This DataLoader will create {n} worker processes in total"):
        DataLoader(Squares(2), num_workers=n)


def test_getitems_is_used():
    class Batched(Dataset):
        calls = []

        def __getitem__(self, i):
            raise AssertionError("per-sample path used")

        def __getitems__(self, idx):
            self.calls.append(list(idx))
            return [i * 10 for i in idx]

        def __len__(self):
            return 5
    dl = DataLoader(Batched(), batch_size=2)
    assert [b.tolist() for b in dl] == [[0, 10], [20, 30], [40]] and Batched.calls == [[0, 1], [2, 3], [4]]


@requires_torch
@pytest.mark.parametrize("kw", [
    dict(batch_size=4, shuffle=True),
    dict(batch_size=3, shuffle=True, drop_last=True),
    dict(batch_size=5),
    dict(batch_size=None, shuffle=True),
    dict(batch_size=4, shuffle=True, generator="gen"),
    dict(batch_size=2, sampler="random_replacement"),
])
def test_batches_match_torch(kw):
    import torch.utils.data as td
    out = []
    for m, loader in ((pyctorch, DataLoader), (torch, td.DataLoader)):
        m.manual_seed(1234)
        args = dict(kw)
        if args.get("generator") == "gen":
            args["generator"] = m.Generator().manual_seed(77)
        if args.get("sampler") == "random_replacement":
            sampler_cls = RandomSampler if m is pyctorch else td.RandomSampler
            args["sampler"] = sampler_cls(range(20), replacement=True, num_samples=9)
        dl = loader(Samples(m, 20), **args)
        epochs = [[flat(b) for b in dl] for _ in range(2)]
        out.append((epochs, len(dl), m.rand(1).item()))
    assert out[0][0] == out[1][0]
    assert out[0][1] == out[1][1]
    assert out[0][2] == pytest.approx(out[1][2])  # the global stream advanced alike


@requires_torch
def test_iterable_and_numpy_batches_match_torch():
    import torch.utils.data as td

    class NpStream(IterableDataset, td.IterableDataset):
        def __iter__(self):
            for i in range(5):
                yield {"x": np.full(3, i, dtype=np.float32), "i": np.int32(i)}
    a = [flat(b) for b in DataLoader(NpStream(), batch_size=2)]
    b = [flat(b) for b in td.DataLoader(NpStream(), batch_size=2)]
    assert a == b


@requires_torch
def test_argument_errors_match_torch():
    import torch.utils.data as td
    for kw in (dict(num_workers=-1), dict(prefetch_factor=2), dict(sampler=[0], shuffle=True),
               dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True),
               dict(persistent_workers=True), dict(multiprocessing_context="fork"),
               dict(num_workers=1, multiprocessing_context="bogus"), dict(num_workers=1, multiprocessing_context=3)):
        with pytest.raises(Exception) as te:
            td.DataLoader(Squares(4), **kw)
        with pytest.raises(Exception) as pe:
            DataLoader(Squares(4), **kw)
        assert type(pe.value) is type(te.value) and str(pe.value) == str(te.value), kw


def test_import_pyctorch_keeps_data_loading_lazy():
    import subprocess
    import sys
    code = ("import sys, pyctorch; assert 'pyctorch.utils.data' not in sys.modules; "
            "assert 'multiprocessing' not in sys.modules; "
            "assert pyctorch.utils.data.DataLoader.__module__ == 'pyctorch.utils.data.dataloader'; "
            "assert pyctorch.multiprocessing.get_sharing_strategy() == 'file_descriptor'")
    root = __import__("os").path.dirname(pyctorch.__path__[0])
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
