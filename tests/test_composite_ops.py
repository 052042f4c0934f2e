"""Composite ops of the op table (Note [Composite ops], csrc/aten/op.h; Note [Python composites],
pyctorch/_composites.py): written once over other ops, they run on the meta device without a kernel of their own,
and their gradients (implicit: the ops they call record; explicit: their own PCT_GRAD formula) and grad_fn names
are torch's. The Python composites' table entries agree with the functions they name."""
import importlib
import inspect
import re

import numpy as np
import pytest

import pyctorch
from comparison import assert_same, assert_same_outcome
from conftest import requires_torch, torch

TABLE = pyctorch._C._op_table()
COMPOSITES = {e["id"]: e for e in TABLE if e["kind"] == "composite"}
PY_TABLE = pyctorch._C._py_composite_table()


def test_the_moved_ops_are_composites():
    for op in ("matmul", "kron", "tensordot", "inner", "einsum", "linalg_matrix_norm", "linalg_matrix_norm_str",
               "linalg_norm", "linalg_norm_str", "norm_str"):
        assert op in COMPOSITES, op


# (a's shape, b's shape): every branch of matmul (dot, mv, 1-d @ 2-d, mm, fold, transposed fold, broadcast bmm)
MATMUL_SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 3)), ((3, 4), (4, 2)), ((2, 3, 4), (4, 2)),
                 ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((3, 4), (2, 4, 3)), ((2, 1, 3, 4), (5, 4, 3)),
                 ((2, 3, 4), (2, 4, 3)), ((0, 3, 4), (4, 2))]


def _pair(T, sa, sb, requires_grad=False, seed=0):
    rng = np.random.default_rng(seed)
    a = T.tensor(rng.standard_normal(sa).tolist(), dtype=T.float64).reshape(sa).requires_grad_(requires_grad)
    b = T.tensor(rng.standard_normal(sb).tolist(), dtype=T.float64).reshape(sb).requires_grad_(requires_grad)
    return a, b


def _root_name(name):
    """A node name without its overload number (pyctorch numbers some overloads differently: its one squeeze_ op, its
    one sum op), torch's _unsafe_view of an mm/bmm result being a view here."""
    return re.sub(r"\d+$", "", name).replace("UnsafeView", "View")


# kron, tensordot, inner and einsum are implicit composites as in torch (no PCT_GRAD line): grad_fn is the node of the
# last op they call, and names it as torch does (kron: UnsafeViewBackward0 of torch's _unsafe_view; tensordot, inner
# and einsum's contractions: ViewBackward0; inner with a 0-d operand and einsum without a contraction: MulBackward0;
# einsum's output permutation: PermuteBackward0)
CALLS = [("matmul", lambda T, a, b: T.matmul(a, b), s) for s in MATMUL_SHAPES] + [
    ("kron", lambda T, a, b: T.kron(a, b), ((2, 3), (3, 2))),
    ("kron", lambda T, a, b: T.kron(a, b), ((3,), (2, 2))),
    ("kron", lambda T, a, b: T.kron(a, b), ((), (2, 2))),
    ("tensordot", lambda T, a, b: T.tensordot(a, b, ([1, 0], [0, 1])), ((3, 4), (4, 3, 2))),
    ("tensordot", lambda T, a, b: T.tensordot(a, b, 1), ((3, 4), (4, 2))),
    ("tensordot", lambda T, a, b: T.tensordot(a, b, 0), ((3,), (2,))),
    ("tensordot", lambda T, a, b: T.tensordot(a, b, ([1], [0])), ((3, 1), (4, 2))),
    ("inner", lambda T, a, b: T.inner(a, b), ((2, 3), (4, 3))),
    ("inner", lambda T, a, b: T.inner(a, b), ((3,), (3,))),
    ("inner", lambda T, a, b: T.inner(a, b), ((), (2, 3))),
    ("einsum", lambda T, a, b: T.einsum("bij,bjk->bik", a, b), ((2, 3, 4), (2, 4, 2))),
    ("einsum", lambda T, a, b: T.einsum("iij,kl->jil", a, b), ((2, 2, 3), (2, 4))),
    ("einsum", lambda T, a, b: T.einsum("...ij,...jk", a, b), ((2, 3, 4), (4, 2))),
    ("einsum", lambda T, a, b: T.einsum("i,j->ji", a, b), ((3,), (2,))),
    ("einsum", lambda T, a, b: T.einsum("ij,ij->ij", a, b), ((2, 3), (2, 3))),
    ("einsum", lambda T, a, b: T.einsum("ii->i", a) * b, ((3, 3), (3,))),
    ("einsum", lambda T, a, b: T.einsum("ij->ji", a) * b, ((2, 3), (3, 2))),
]
# Where pyctorch's name differs from torch's only in its overload number: einsum's reduction of a single operand ends
# in a sum over dims, torch's sum.dim_IntList (SumBackward1); pyctorch has one sum op for both of torch's overloads,
# so its node is SumBackward0. Numbering them as torch does means splitting the op table's sum entry in two.
SUM_OVERLOAD_CALLS = [
    ("einsum", lambda T, a, b: T.einsum("ii", a) * b, ((3, 3), ())),
    ("einsum", lambda T, a, b: T.einsum("ij->j", a) * b, ((3, 2), (2,))),
]


@requires_torch
@pytest.mark.parametrize("op,fn,shapes", CALLS, ids=[f"{c[0]}-{c[2]}" for c in CALLS])
def test_meta_shapes_like_torch(op, fn, shapes):
    a, b = (pyctorch.empty(s, device="meta") for s in shapes)
    ta, tb = (torch.empty(s, device="meta") for s in shapes)
    r, tr = fn(pyctorch, a, b), fn(torch, ta, tb)
    assert r.device.type == "meta"
    assert tuple(r.shape) == tuple(tr.shape) and str(r.dtype) == str(tr.dtype)


def _check_gradients(fn, shapes):
    """fn's value, first and second gradients against torch's; returns the two results."""
    a, b = _pair(pyctorch, *shapes, requires_grad=True)
    ta, tb = _pair(torch, *shapes, requires_grad=True)
    r, tr = fn(pyctorch, a, b), fn(torch, ta, tb)
    assert_same(r, tr, rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(1).standard_normal(tuple(tr.shape)).tolist()
    g = pyctorch.tensor(g, dtype=pyctorch.float64).reshape(tuple(tr.shape)).requires_grad_()
    tg = torch.tensor(g.tolist(), dtype=torch.float64).reshape(tuple(tr.shape)).requires_grad_()
    grads = pyctorch.autograd.grad(r, (a, b), g, create_graph=True)
    tgrads = torch.autograd.grad(tr, (ta, tb), tg, create_graph=True)
    assert_same(grads, tgrads, rtol=1e-10, atol=1e-12, what="gradients")
    # double backward: the gradients' own gradient (through the nodes the composite's ops recorded)
    w = [np.random.default_rng(2 + i).standard_normal(tuple(x.shape)).tolist() for i, x in enumerate(tgrads)]
    second = pyctorch.autograd.grad([(x * pyctorch.tensor(v, dtype=pyctorch.float64).reshape(x.shape)).sum()
                                     for x, v in zip(grads, w)], (a, b, g), allow_unused=True)
    tsecond = torch.autograd.grad([(x * torch.tensor(v, dtype=torch.float64).reshape(x.shape)).sum()
                                   for x, v in zip(tgrads, w)], (ta, tb, tg), allow_unused=True)
    assert_same(second, tsecond, rtol=1e-10, atol=1e-12, what="double backward")
    return r, tr


@requires_torch
@pytest.mark.parametrize("op,fn,shapes", CALLS, ids=[f"{c[0]}-{c[2]}" for c in CALLS])
def test_gradients_and_grad_fn_like_torch(op, fn, shapes):
    r, tr = _check_gradients(fn, shapes)
    mine, theirs = r.grad_fn.name(), tr.grad_fn.name()
    if op == "matmul":  # the node of the op matmul ran last, as in torch (an _unsafe_view there is a view)
        assert _root_name(mine) == _root_name(theirs), (mine, theirs)
    else:
        assert mine == theirs


@requires_torch
@pytest.mark.parametrize("op,fn,shapes", SUM_OVERLOAD_CALLS, ids=[f"{c[0]}-{c[2]}" for c in SUM_OVERLOAD_CALLS])
def test_grad_fn_differs_from_torch_only_in_sums_overload_number(op, fn, shapes):
    r, tr = _check_gradients(fn, shapes)
    # the product's node is torch's; the einsum's (its input) is the sum's, one overload number away
    (node, _), (tnode, _) = r.grad_fn.next_functions[0], tr.grad_fn.next_functions[0]
    assert (node.name(), tnode.name()) == ("SumBackward0", "SumBackward1")


@pytest.mark.parametrize("op,fn,shapes", [c for c in CALLS if c[0] != "matmul"][::2],
                         ids=[f"{c[0]}-{c[2]}" for c in CALLS if c[0] != "matmul"][::2])
def test_gradcheck_and_gradgradcheck(op, fn, shapes):
    a, b = _pair(pyctorch, *shapes, requires_grad=True)
    assert pyctorch.autograd.gradcheck(lambda x, y: fn(pyctorch, x, y), (a, b))
    assert pyctorch.autograd.gradgradcheck(lambda x, y: fn(pyctorch, x, y), (a, b))


@requires_torch
@pytest.mark.parametrize("layouts", ["tc", "ct", "tt", "sc", "ps"])
def test_kron_of_strided_operands_has_torchs_outcome(layouts):
    """torch's kron merges the product's dim pairs with _unsafe_view, which refuses a product laid out in its
    operands' memory order when that order keeps the pairs apart (a transposed operand): so does pyctorch's."""
    def operand(T, layout, shape=(2, 3, 4)):
        x = T.arange(24, dtype=T.float64).reshape(shape)
        return {"c": x, "t": x.transpose(-1, -2), "s": x[..., ::2], "p": x.permute(2, 0, 1)}[layout]
    for rg in (False, True):
        assert_same_outcome(lambda: pyctorch.kron(*(operand(pyctorch, l).requires_grad_(rg) for l in layouts)),
                            lambda: torch.kron(*(operand(torch, l).requires_grad_(rg) for l in layouts)))


def test_the_four_products_have_no_formula_of_their_own():
    for op in ("kron", "tensordot", "inner", "einsum"):
        assert COMPOSITES[op]["formulas"] is None, op


inf = float("inf")
NORM_CALLS = [(name, fn, shape) for name, fn in [
    ("matrix_norm 1", lambda T, x: T.linalg.matrix_norm(x, 1)),
    ("matrix_norm -inf keepdim", lambda T, x: T.linalg.matrix_norm(x, -inf, dim=(1, 0), keepdim=True)),
    ("matrix_norm 2", lambda T, x: T.linalg.matrix_norm(x, 2)),
    ("matrix_norm -2 keepdim", lambda T, x: T.linalg.matrix_norm(x, -2, keepdim=True)),
    ("matrix_norm fro", lambda T, x: T.linalg.matrix_norm(x)),
    ("matrix_norm nuc", lambda T, x: T.linalg.matrix_norm(x, "nuc")),
    ("norm", lambda T, x: T.linalg.norm(x)),
    ("norm inf dims", lambda T, x: T.linalg.norm(x, inf, dim=(0, 1))),
    ("norm 3 dim", lambda T, x: T.linalg.norm(x, 3, dim=1)),
    ("norm nuc", lambda T, x: T.linalg.norm(x, "nuc", dim=(0, 1))),
    ("torch.norm fro", lambda T, x: T.norm(x, "fro")),
    ("torch.norm nuc", lambda T, x: T.norm(x, "nuc", dim=(0, 1))),
] for shape in ((3, 4), (2, 3, 3))]


@requires_torch
@pytest.mark.parametrize("name,fn,shape", NORM_CALLS, ids=[f"{c[0]}-{c[2]}" for c in NORM_CALLS])
def test_norms_on_meta_and_their_gradients_like_torch(name, fn, shape):
    try:
        tr = fn(torch, torch.empty(shape, device="meta"))
    except RuntimeError:  # torch refuses the shape: so must pyctorch
        with pytest.raises(RuntimeError):
            fn(pyctorch, pyctorch.empty(shape, device="meta"))
        return
    r = fn(pyctorch, pyctorch.empty(shape, device="meta"))
    assert r.device.type == "meta" and tuple(r.shape) == tuple(tr.shape)
    x = pyctorch.tensor(np.random.default_rng(2).standard_normal(shape).tolist(), dtype=pyctorch.float64)
    tx = torch.tensor(np.random.default_rng(2).standard_normal(shape).tolist(), dtype=torch.float64)
    x.requires_grad_()
    tx.requires_grad_()
    r, tr = fn(pyctorch, x), fn(torch, tx)
    np.testing.assert_allclose(np.array(r.tolist()), np.array(tr.tolist()), rtol=1e-10)
    assert _root_name(r.grad_fn.name()) == _root_name(tr.grad_fn.name())
    r.sum().backward()
    tr.sum().backward()
    np.testing.assert_allclose(np.array(x.grad.tolist()), np.array(tx.grad.tolist()), rtol=1e-8, atol=1e-10)


def test_tensordot_refuses_dims_on_the_meta_device():
    a, b = pyctorch.ones(2, 3), pyctorch.ones(3, 2)
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        pyctorch.tensordot(a, b, dims=pyctorch.tensor(1, device="meta"))
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        pyctorch.tensordot(a, b, dims=pyctorch.tensor([[1], [0]], device="meta"))


def test_implicit_composite_records_no_node_of_its_own():
    a, b = _pair(pyctorch, (3, 4), (4, 2), requires_grad=True)
    assert pyctorch.matmul(a, b).grad_fn.name() == "MmBackward0"
    with pyctorch.no_grad():
        assert pyctorch.matmul(a, b).grad_fn is None


@requires_torch
def test_matmul_out_and_errors_like_torch():
    for T in (pyctorch, torch):
        a, b = _pair(T, (2, 3, 4), (4, 2))
        out = T.empty(0, dtype=T.float64)
        T.matmul(a, b, out=out)
        assert tuple(out.shape) == (2, 3, 2)
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        pyctorch.matmul(pyctorch.tensor(1.0), pyctorch.ones(2))
    a = pyctorch.ones(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"matmul\(\): functions with out=\.\.\. arguments don't support"):
        pyctorch.matmul(a, pyctorch.ones(4, 2), out=pyctorch.empty(3, 2))


def test_composite_calls_are_profiled_as_nested_ops():
    a, b = _pair(pyctorch, (2, 3, 4), (2, 4, 3))
    with pyctorch.profiler.profile() as prof:
        pyctorch.matmul(a, b)
    names = [e.name for e in prof.events()]
    assert "aten::matmul" in names and "aten::bmm" in names


# ---- Python composites (PCT_COMPOSITE_PY) ----

_SCHEMA_PARAM = re.compile(r"^(?P<type>[\w|\[\]?]+)\s+(?P<name>\w+)(=(?P<default>.*))?$")


def _schema_params(schema):
    inner = schema[schema.index("(") + 1:schema.rindex(")")]
    params, kwonly = [], False
    for part in (p.strip() for p in re.split(r",\s*(?![^\[]*\])", inner) if p.strip()):
        if part == "*":
            kwonly = True
            continue
        m = _SCHEMA_PARAM.match(part)
        assert m, (schema, part)
        params.append((m.group("name"), m.group("type"), m.group("default"), kwonly))
    return params


def _schema_default(text):
    return {"None": None, "True": True, "False": False}.get(text, None if text is None else eval(text))  # noqa: S307


@pytest.mark.parametrize("entry", PY_TABLE, ids=[e["id"] for e in PY_TABLE])
def test_python_composite_schema_matches_its_function(entry):
    module, _, name = entry["impl"].partition(":")
    fn = getattr(importlib.import_module(module), name)
    sig = inspect.signature(fn)
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):  # an in-place form: fn_(self, *args, **kw)
        sig = inspect.signature(getattr(importlib.import_module(module), name[:-1]))
        sig = sig.replace(parameters=[p for p in sig.parameters.values() if p.name != "out"])
    params = _schema_params(entry["schema"])
    assert [p[0] for p in params] == list(sig.parameters), entry["schema"]
    for (pname, _, default, kwonly), p in zip(params, sig.parameters.values()):
        assert kwonly == (p.kind == p.KEYWORD_ONLY), (entry["schema"], pname)
        if p.default is not p.empty:
            want = list(p.default) if isinstance(p.default, tuple) else p.default
            assert _schema_default(default) == want, (entry["schema"], pname)


def test_python_composites_are_bound_from_the_table():
    for e in PY_TABLE:
        if "F" in e["variants"]:
            assert hasattr(pyctorch, e["name"]), e["name"]
        if "M" in e["variants"]:
            assert e["name"] in pyctorch.Tensor.__dict__, e["name"]
    assert sorted(pyctorch._composites.__all__) == sorted(e["name"] for e in PY_TABLE if "F" in e["variants"])
