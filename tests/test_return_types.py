"""Named result tuples (Note [Result tuples] in csrc/aten/dispatch.c): kernels return plain tuples, ops_returns.def
says which ops give torch.return_types.<name>, and the binding names them, <name>_out with out=. Every listed op is
called here, with and without out=, and its result type and fields are compared with torch's."""
import os
import re

import numpy as np
import pytest

import pyctorch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _square(T):
    a = np.arange(9, dtype=np.float64).reshape(3, 3) / 7 + 3 * np.eye(3)
    return T.tensor(a @ a.T)


def _rect(T):
    return T.tensor(np.linspace(-1, 2, 12).reshape(3, 4))


# op id -> (call(T, out) giving the op's result, the out= tuple's dtypes); out None: no out= argument
CASES = {
    "max_dim": (lambda T, out: T.max(_rect(T), 1, out=out), ("float64", "int64")),
    "min_dim": (lambda T, out: T.min(_rect(T), 1, out=out), ("float64", "int64")),
    "aminmax": (lambda T, out: T.aminmax(_rect(T), dim=0), None),
    "cummax": (lambda T, out: T.cummax(_rect(T), 1, out=out), ("float64", "int64")),
    "cummin": (lambda T, out: T.cummin(_rect(T), 1, out=out), ("float64", "int64")),
    "sort": (lambda T, out: T.sort(_rect(T), 1, out=out), ("float64", "int64")),
    "sort_stable": (lambda T, out: T.sort(_rect(T), stable=True, dim=1, out=out), ("float64", "int64")),
    "topk": (lambda T, out: T.topk(_rect(T), 2, out=out), ("float64", "int64")),
    "kthvalue": (lambda T, out: T.kthvalue(_rect(T), 2, out=out), ("float64", "int64")),
    "median_dim": (lambda T, out: T.median(_rect(T), 1, out=out), ("float64", "int64")),
    "nanmedian_dim": (lambda T, out: T.nanmedian(_rect(T), 1, out=out), ("float64", "int64")),
    "mode": (lambda T, out: T.mode(_rect(T), 1, out=out), ("float64", "int64")),
    "svd": (lambda T, out: T.svd(_rect(T), out=out), ("float64",) * 3),
    "linalg_svd": (lambda T, out: T.linalg.svd(_rect(T), out=out), ("float64",) * 3),
    "linalg_qr": (lambda T, out: T.linalg.qr(_rect(T), out=out), ("float64",) * 2),
    "geqrf": (lambda T, out: T.geqrf(_rect(T), out=out), ("float64",) * 2),
    "linalg_eigh": (lambda T, out: T.linalg.eigh(_square(T), out=out), ("float64",) * 2),
    "linalg_eig": (lambda T, out: T.linalg.eig(_square(T), out=out), ("complex128",) * 2),
    "linalg_lu_factor_ex": (lambda T, out: T.linalg.lu_factor_ex(_square(T), out=out), ("float64", "int32", "int32")),
    "linalg_ldl_factor_ex": (lambda T, out: T.linalg.ldl_factor_ex(_square(T), out=out), ("float64", "int32", "int32")),
    "linalg_cholesky_ex": (lambda T, out: T.linalg.cholesky_ex(_square(T), out=out), ("float64", "int32")),
    "linalg_inv_ex": (lambda T, out: T.linalg.inv_ex(_square(T), out=out), ("float64", "int32")),
    "linalg_solve_ex": (lambda T, out: T.linalg.solve_ex(_square(T), _rect(T)[:, :3], out=out), ("float64", "int32")),
    "slogdet": (lambda T, out: T.slogdet(_square(T), out=out), ("float64",) * 2),
    "linalg_slogdet": (lambda T, out: T.linalg.slogdet(_square(T), out=out), ("float64",) * 2),
    "linalg_lstsq": (lambda T, out: T.linalg.lstsq(_square(T), _rect(T)[:, :3]), None),
}


def _named_ops():
    return {op["id"]: op["returns"] for op in pyctorch._C._op_table() if op["returns"]}


def test_every_named_result_has_a_case():
    assert set(_named_ops()) == set(CASES)


def _outs(T, dtypes):
    return tuple(T.empty(0, dtype=getattr(T, d)) for d in dtypes)


def _describe(r):
    return type(r).__module__, type(r).__name__, r.n_fields, r.n_sequence_fields, [type(x).__name__ for x in r]


@pytest.mark.parametrize("op_id,with_out", [(op, False) for op in sorted(CASES)] +
                         [(op, True) for op in sorted(CASES) if CASES[op][1] is not None])
def test_named_result_is_torchs(op_id, with_out):
    call, out_dtypes = CASES[op_id]
    out = _outs(pyctorch, out_dtypes) if with_out else None
    r = call(pyctorch, out)
    fields = _named_ops()[op_id]
    name = pyctorch._C._op_table()[[o["id"] for o in pyctorch._C._op_table()].index(op_id)]["name"]
    # the checks that need no oracle: the name, the fields, and out= returning the out tensors themselves
    assert type(r).__module__ == "torch.return_types"
    assert type(r).__name__ == name + ("_out" if with_out else "")
    assert tuple(getattr(r, f) is r[i] for i, f in enumerate(fields)) == (True,) * len(fields)
    if with_out:
        assert all(a is b for a, b in zip(r, out))
    torch = pytest.importorskip("torch")  # only the comparison needs the oracle
    t = call(torch, _outs(torch, out_dtypes) if with_out else None)
    assert _describe(r)[:4] == _describe(t)[:4]
    assert [type(x).__name__ for x in t] == ["Tensor"] * len(t)
    assert repr(r).split("(")[0] == repr(t).split("(")[0]
    for f in fields:
        assert hasattr(t, f)


def test_a_plain_tuple_stays_plain():
    r = pyctorch.var_mean(_rect(pyctorch), 1)
    assert type(r) is tuple


def test_kernels_name_no_return_type():
    """The named types live in ops_returns.def and the binding; no C file of the core spells one."""
    offenders = []
    for root, _, files in os.walk(os.path.join(REPO, "csrc", "aten")):
        for f in files:
            if f.endswith((".c", ".h")):
                text = open(os.path.join(root, f)).read()
                if re.search(r'"torch\.return_types', text):
                    offenders.append(f)
    assert offenders == []
