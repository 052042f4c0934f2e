"""default_collate / default_convert: output structure, types, dtypes and values, by hand and
against torch on the same (nested) samples."""
import collections

import numpy as np
import pytest

from conftest import assert_same, requires_torch, torch

import pyctorch
from pyctorch.utils.data import default_collate, default_convert
from pyctorch.utils.data._utils.collate import collate, default_collate_fn_map

Point = collections.namedtuple("Point", ["x", "y"])


def samples(m):
    """Batches of samples built with module m (pyctorch or torch); each entry: (name, batch)."""
    return [
        ("floats", [1.5, 2.0, -3.25]),
        ("ints", [1, 2, 3]),
        ("bools", [True, False, True]),
        ("strings", ["a", "bc", ""]),
        ("bytes", [b"x", b"yz"]),
        ("tensors", [m.arange(6.0).reshape(2, 3), m.ones(2, 3)]),
        ("int tensors", [m.tensor([1, 2], dtype=m.int16), m.tensor([3, 4], dtype=m.int16)]),
        ("0-d tensors", [m.tensor(1.5), m.tensor(2.5)]),
        ("np arrays", [np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)]),
        ("np int arrays", [np.arange(3, dtype=np.int32).reshape(3, 1), np.zeros((3, 1), dtype=np.int32)]),
        ("np scalars f64", [np.float64(1.5), np.float64(2.5)]),
        ("np scalars f32", [np.float32(1.5), np.float32(2.5)]),
        ("np scalars i16", [np.int16(3), np.int16(-4)]),
        ("np scalars u8", [np.uint8(3), np.uint8(4)]),
        ("np bools", [np.bool_(True), np.bool_(False)]),
        ("np 0-d arrays", [np.array(1.0), np.array(2.0)]),
        ("tuples", [(1, 2.0, "a"), (3, 4.0, "b")]),
        ("lists", [[1, 2], [3, 4]]),
        ("dicts", [{"a": 1, "b": m.zeros(2)}, {"a": 2, "b": m.ones(2)}]),
        ("ordered dicts", [collections.OrderedDict(z=1.0, a=2), collections.OrderedDict(z=3.0, a=4)]),
        ("namedtuples", [Point(1, m.zeros(1)), Point(2, m.ones(1))]),
        ("nested", [{"img": (m.ones(2), [1, {"k": 0.5}]), "id": "s0"},
                    {"img": (m.zeros(2), [2, {"k": 1.5}]), "id": "s1"}]),
    ]


def test_collate_by_hand():
    b = default_collate([1.5, 2.0])
    assert b.dtype == pyctorch.float64 and b.tolist() == [1.5, 2.0]
    assert default_collate([1, 2]).dtype == pyctorch.int64
    assert default_collate([True, False]).dtype == pyctorch.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    out = default_collate([(0, 1), (2, 3)])
    assert isinstance(out, list) and [o.tolist() for o in out] == [[0, 2], [1, 3]]
    p = default_collate([Point(0, 0), Point(1, 1)])
    assert isinstance(p, Point) and p.x.tolist() == [0, 1]
    d = default_collate([{"A": 0, "B": 1}, {"A": 100, "B": 100}])
    assert d["A"].tolist() == [0, 100] and d["B"].tolist() == [1, 100]
    s = default_collate([pyctorch.ones(2, 3), pyctorch.zeros(2, 3)])
    assert s.shape == (2, 2, 3) and s.sum().item() == 6.0 and not s.is_shared()
    assert default_collate([np.float32(1), np.float32(2)]).dtype == pyctorch.float32
    assert default_collate([np.int16(1), np.int16(2)]).dtype == pyctorch.int16


def test_collate_errors():
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                                        "or lists; found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([pyctorch.ones(2), pyctorch.ones(3)])


def test_convert_by_hand():
    assert default_convert(0) == 0 and default_convert("s") == "s"
    t = default_convert(np.array([0, 1]))
    assert isinstance(t, pyctorch.Tensor) and t.dtype == pyctorch.int64 and t.tolist() == [0, 1]
    p = default_convert(Point(np.array(0), np.array(0)))
    assert isinstance(p, Point) and isinstance(p.x, pyctorch.Tensor)
    out = default_convert((np.ones(1), 2))
    assert isinstance(out, list) and isinstance(out[0], pyctorch.Tensor) and out[1] == 2
    arr = np.array(["x"])
    assert default_convert(arr) is arr  # string arrays stay numpy
    assert default_convert(np.float32(2)).dtype == pyctorch.float32


def test_custom_collate_fn_map():
    class Box:
        def __init__(self, v):
            self.v = v
    fmap = dict(default_collate_fn_map)
    fmap[Box] = lambda batch, *, collate_fn_map: sum(b.v for b in batch)
    assert collate([{"b": Box(1)}, {"b": Box(2)}], collate_fn_map=fmap) == {"b": 3}


@requires_torch
def test_default_collate_matches_torch():
    import torch.utils.data as td
    for (name, pb), (_, tb) in zip(samples(pyctorch), samples(torch)):
        p, t = default_collate(pb), td.default_collate(tb)
        try:
            assert_same(p, t, exact=True)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


@requires_torch
def test_default_convert_matches_torch():
    import torch.utils.data as td
    for (name, pb), (_, tb) in zip(samples(pyctorch), samples(torch)):
        for pe, te in zip(pb, tb):
            try:
                assert_same(default_convert(pe), td.default_convert(te), exact=True)
            except AssertionError as e:
                raise AssertionError(f"{name}: {e}") from None


@requires_torch
def test_collate_errors_match_torch():
    import torch.utils.data as td
    for bad in ([object(), object()], [[1, 2], [3]], [np.array(["a"]), np.array(["b"])], [{"a": 1}, {"b": 2}]):
        with pytest.raises(Exception) as te:
            td.default_collate(bad)
        with pytest.raises(Exception) as pe:
            default_collate(bad)
        assert type(pe.value) is type(te.value) and str(pe.value) == str(te.value)
