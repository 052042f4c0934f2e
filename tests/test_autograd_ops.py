"""The generic autograd test, driven by the op table: every differentiable entry of
`pyctorch._C._op_table()` (its formulas are not ("non_differentiable",)) has samples in the sample
registry (tests/samples.py, the samples made for "grad"), and so has every Python composite
(`_C._py_composite_table()`, samples.PY_DIFFERENTIABLE) but those of PY_NONDIFF (their reasons here).
Python composites have no node of their own: their graph is that of the table's ops they call.

With torch:
  * test_grad_vs_torch: forward and backward in pyctorch and in torch on the same values with the
    same random grad_outputs; the gradients of every input must agree (None-ness, shape, dtype,
    values at rtol 1e-6 / atol 1e-8, 1e-5 where float32 is involved), and so must the forward
    outputs and which of them require grad; then again with only the first and only the last input
    requiring grad (the `needs` mask). Where torch refuses the gradient, pyctorch must refuse too.
    The op's own node (its torch-style name, e.g. "MaxBackward1") must be in the recorded graph, so
    a sample cannot silently test another overload.
  * test_double_backward_vs_torch: the second derivatives of sum(v * grad_inputs) with respect to
    the inputs and the grad_outputs agree with torch (None on either side counts as zeros).
Without torch (always): test_gradcheck and test_gradgradcheck run pyctorch.autograd.gradcheck /
gradgradcheck on every sample that is differentiable there (gc=True, float64).
Coverage (test_every_float_op_has_a_formula): every op that takes a Tensor must have backward
formulas in the table; ("non_differentiable",) is accepted only for the reasons in NONDIFF (checked
against torch by test_non_differentiable_op on the registry's "nondiff" samples), no formulas only
where torch has no derivative either (MISSING_LIKE_TORCH, the registry's "missing" samples), and
every differentiable op must have samples.
A sample may carry strict xfails per kind of check (xfail=) for known engine bugs (none at the
moment); `skip=` marks derivatives pyctorch cannot have yet.
"""

import re

import numpy as np
import pytest

import pyctorch
import samples as SR
from comparison import assert_same, dtype_name
from conftest import HAVE_TORCH, requires_torch, torch

TABLE, BY_ID, DIFFERENTIABLE = SR.TABLE, SR.BY_ID, SR.DIFFERENTIABLE
FORMULAS = {e["id"]: e["formulas"] for e in TABLE}  # from _C: None where the op has no formulas
DEVICE = SR.DEVICE
# Implicit composites (Note [Composite ops], csrc/aten/op.h): no formula of their own, their gradient is that of the ops
# they call; their samples check the graph's root node against torch's instead of the op's own node
IMPLICIT_COMPOSITES = SR.IMPLICIT_COMPOSITES


def node_name(op_id):
    """The node name record.c gives an op: CamelCase of its name, Backward, its overload number."""
    name = BY_ID[op_id]["name"]
    overload = 0
    for e in TABLE:
        if e["id"] == op_id:
            break
        overload += e["name"] == name
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p) + f"Backward{overload}"


# torch defines the gradient of normal() with respect to mean and std as zero (no reparameterization),
# which is not the finite-difference derivative: those ops are compared with torch but not gradchecked
NO_GRADCHECK = {"normal_tensor_float", "normal_tensor_tensor", "normal_float_tensor",
                "type_as",  # type_as: a conversion, every sample has a float32 side
                # no gradgradcheck: torch has no double backward for the first two (the samples say gg=False), and
                # the grid samplers' double backward is second order only (Note [Grid sampler double backward])
                "embedding_bag", "ctc_loss", "grid_sampler_2d_backward", "grid_sampler_3d_backward",
                # Python composites whose every sample has an integer input (exponent, index): gradgradcheck takes
                # float64-only samples
                "ldexp", "ldexp_", "take_along_dim",
                # no output that requires grad (samples.PY_GRAD_XFAIL: torch differentiates it)
                "nextafter", "nextafter_",
                # eig's double backward (through complex solves) is not checked yet; first order: test_grad_vs_torch,
                # test_gradcheck and tests/test_linalg_complex_spectral.py
                "linalg_eig", "linalg_eigvals"}

# ---- non-differentiable and formula-less ops --------------------------------------------------

NO_FLOAT_OUT = "no floating-point output"
RANDOM = "a random sampler (the sample does not depend differentiably on the input)"
NO_GRAD_LIKE_TORCH = "the output does not require grad in torch either"
TORCH_NOT_IMPLEMENTED = "torch records the op but its backward raises 'not implemented'"
NONDIFF = {  # op id -> why its formulas are ("non_differentiable",); its call, if any: the registry's "nondiff" sample
    **{n: NO_FLOAT_OUT for n in ("logical_not", "isnan", "isinf", "isfinite", "signbit", "argmax", "argmin", "all",
                                 "any", "count_nonzero", "nonzero", "argwhere", "argsort", "logical_and", "logical_or",
                                 "logical_xor", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_not", "bitwise_and",
                                 "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "gcd",
                                 "lcm", "where_cond", "repeat_interleave_idx", "argsort_stable", "searchsorted",
                                 "bucketize", "multinomial")},
    **{"special_" + n: NO_GRAD_LIKE_TORCH for n in SR.SPECIAL_BESSEL + SR.SPECIAL_POLYNOMIALS},
    # polygamma's loop, run by its kernels with the order n (the polygamma entries carry the formula)
    "_polygamma_loop": NO_GRAD_LIKE_TORCH,
    **{n: NO_GRAD_LIKE_TORCH for n in ("histc", "view_dtype", "detach", "empty_like", "zeros_like", "ones_like",
                                       "full_like", "new_empty", "new_zeros", "new_ones", "new_full")},
    **{n: RANDOM for n in ("rand_like", "randn_like", "randint_like", "randint_like_low", "bernoulli", "bernoulli_p")},
    # torch gives these outputs a node whose backward raises; pyctorch does not record them
    **{n: TORCH_NOT_IMPLEMENTED for n in ("floor_divide", "bincount", "unique")},
    # max_norm renormalizes rows in place under no_grad (F.embedding); torch's derivative is not implemented
    **{n: TORCH_NOT_IMPLEMENTED for n in ("embedding_renorm_", "unique_consecutive", "unique_consecutive_kw",
                                          "unique_consecutive_p1", "unique_consecutive_p2", "unique_consecutive_p3")},
    # fused optimizer steps: in-place updates that return None (tests/test_optim_more.py)
    **{n: NO_FLOAT_OUT for n in ("fused_adam_", "fused_adamw_", "fused_sgd_", "fused_adagrad_")},
    # gradient scaling steps: in-place updates of gradients / the scale (tests/amp/test_grad_scaler.py)
    **{n: NO_FLOAT_OUT for n in ("amp_foreach_non_finite_check_and_unscale_", "amp_update_scale_")},
    # torch._linalg_check_errors: raises or returns None
    "linalg_check_errors": NO_FLOAT_OUT,
}
NO_TENSOR_OUT = "returns a Python bool"
# the Python composites without a gradient (samples.PY_NONDIFF; they have no formulas: the reason is all there is)
PY_NONDIFF = {**{n: NO_FLOAT_OUT for n in ("isneginf", "isposinf", "isreal", "isin", "nonzero_static", "hash_tensor")},
              **{n: NO_TENSOR_OUT for n in ("is_conj", "is_neg", "is_same_size", "is_inference", "is_distributed")},
              **{n: TORCH_NOT_IMPLEMENTED for n in ("heaviside", "heaviside_", "histogram")}}
NONDIFF.update(PY_NONDIFF)
# ops with a Tensor input and a float output but no formulas: backward raises, as in torch (their calls:
# the registry's "missing" samples)
MISSING_LIKE_TORCH = sorted(op for op in SR.SAMPLES if SR.samples_for(op, "missing"))


def test_every_float_op_has_a_formula():
    problems = []
    for e in TABLE:
        op = e["id"]
        f = FORMULAS[op]
        if not SR.has_tensor_param(e):  # factories: nothing to differentiate
            assert f in (None, ("non_differentiable",)), op
            continue
        if f is None and op in IMPLICIT_COMPOSITES:
            if op not in SR.SAMPLES:
                problems.append(f"{op}: an implicit composite without samples in tests/samples.py")
        elif f is None:
            if op not in MISSING_LIKE_TORCH:
                problems.append(f"{op}: no backward formulas (add its PCT_GRAD line, or 'non_differentiable' with a "
                                "reason here)")
        elif f == ("non_differentiable",):
            if op not in NONDIFF:
                problems.append(f"{op}: marked non_differentiable without a reason in NONDIFF")
        elif not SR.samples_for(op, "grad"):
            problems.append(f"{op}: differentiable but has no samples in tests/samples.py")
    for op in list(NONDIFF) + list(SR.SAMPLES):
        if op not in BY_ID and op not in SR.PY_BY_ID:  # (the Python composites' samples: their own table)
            problems.append(f"{op}: not in the op table any more")
    for e in SR.PY_TABLE:  # the Python composites: a reason here, or "grad" samples
        op = e["id"]
        if op in BY_ID or not SR.has_tensor_param(e):
            continue
        if (op in PY_NONDIFF) != (op in SR.PY_NONDIFF):
            problems.append(f"{op}: in only one of samples.PY_NONDIFF and PY_NONDIFF here")
        elif op not in PY_NONDIFF and not SR.samples_for(op, "grad"):
            problems.append(f"{op}: a differentiable Python composite without 'grad' samples")
    for op in NONDIFF:
        if op not in PY_NONDIFF and FORMULAS.get(op) != ("non_differentiable",):
            problems.append(f"{op}: has a reason in NONDIFF but its formulas are {FORMULAS.get(op)}")
    assert not problems, "\n".join(problems)


def _nondiff_cases():
    return sorted(op for op in NONDIFF if SR.samples_for(op, "nondiff"))


def _float_x(T, op, use):
    """The float64 input of op's first sample made for use, requiring grad."""
    k, sample = SR.samples_for(op, use)[0]
    return sample, SR.make_inputs(T, sample, SR.arrays(op, k, sample), device=SR.device_for(T))


@pytest.mark.parametrize("op", _nondiff_cases())
def test_non_differentiable_op(op):
    sample = SR.samples_for(op, "nondiff")[0][1]
    xf = _Xfails("nondiff")
    xf.run(0, sample, lambda: _check_non_differentiable(op))
    xf.finish()


def _check_non_differentiable(op):
    reason = NONDIFF[op]
    sample, xs = _float_x(pyctorch, op, "nondiff")
    if reason == NO_TENSOR_OUT:
        assert type(SR.call(pyctorch, sample, xs, DEVICE)) is bool
        if HAVE_TORCH:
            sample, xs = _float_x(torch, op, "nondiff")
            assert type(SR.call(torch, sample, xs, SR.TORCH_DEVICE)) is bool
        return
    outs = SR.tensors(SR.call(pyctorch, sample, xs, DEVICE))
    assert outs and not any(o.requires_grad for o in outs)
    if reason == NO_FLOAT_OUT:
        assert not any(o.is_floating_point() for o in outs), f"{op} has a floating-point output"
    if HAVE_TORCH:
        sample, xs = _float_x(torch, op, "nondiff")
        touts = SR.tensors(SR.call(torch, sample, xs, SR.TORCH_DEVICE))
        if reason in (NO_FLOAT_OUT, NO_GRAD_LIKE_TORCH):
            assert not any(o.requires_grad for o in touts), f"{op}: torch's output requires grad"
        elif reason == TORCH_NOT_IMPLEMENTED:
            with pytest.raises(RuntimeError, match="not implemented"):
                sum(o.sum() for o in touts if o.requires_grad).backward()


@pytest.mark.parametrize("op", MISSING_LIKE_TORCH)
def test_formula_less_op_raises_in_backward(op):
    libs = [pyctorch] + ([torch] if HAVE_TORCH else [])
    for T in libs:
        sample, xs = _float_x(T, op, "missing")
        out = SR.call(T, sample, xs, SR.device_for(T))
        assert out.requires_grad
        with pytest.raises(RuntimeError, match="not implemented"):
            out.sum().backward()


# ---- running a sample ----------------------------------------------------------------------------

def _leaves(T, sample, arrays, grad_mask=None):
    return SR.make_inputs(T, sample, arrays, grad_mask, device=SR.device_for(T))


def _run(T, sample, xs):
    return SR.tensors(SR.call(T, sample, xs, SR.device_for(T)))


def _graph_names(outs):
    seen, names, todo = set(), set(), [o.grad_fn for o in outs if o.grad_fn is not None]
    while todo:
        n = todo.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.add(n.name())
        todo.extend(f for f, _ in n.next_functions)
    return names


def _grad_outputs(op, k, outs, salt):
    rng = SR.rng_for(op, k, salt)
    return [rng.standard_normal(tuple(o.shape)) for o in outs]


def _as(T, arr, like, requires_grad=False):
    return T.tensor(np.asarray(arr).tolist(), dtype=like.dtype, device=like.device).requires_grad_(requires_grad)


def _cases(exclude=()):
    return [pytest.param(op, id=op) for op in DIFFERENTIABLE + SR.PY_DIFFERENTIABLE if op not in exclude]


def _samples(op):
    samples = SR.samples_for(op, "grad")
    if not samples:
        pytest.fail(f"{op} has no samples")
    return samples


def _check_first_order(op, k, sample, arrays, grad_mask):
    tol = sample.tol or (1e-6, 1e-8)
    xp, xt = _leaves(pyctorch, sample, arrays, grad_mask), _leaves(torch, sample, arrays, grad_mask)
    op_, ot = _run(pyctorch, sample, xp), _run(torch, sample, xt)
    assert len(op_) == len(ot), f"sample {k}: {len(op_)} outputs != torch {len(ot)}"
    for i, (a, b) in enumerate(zip(op_, ot)):
        assert_same(a, b, *tol, what=f"sample {k}: output {i}")
        assert a.requires_grad == b.requires_grad, f"sample {k}: output {i} requires_grad {a.requires_grad} != torch"
    # an output that is an input itself (torch's conj_physical of a real tensor) has no node of the op in either (on
    # another device torch's inputs are copies of the leaves, so only the CPU run compares the two libraries)
    is_input = [any(a is x for x in xp) for a in op_]
    if DEVICE == "cpu":
        assert is_input == [any(b is x for x in xt) for b in ot], f"sample {k}: which outputs are inputs differs"
    if op in SR.PY_BY_ID or (is_input and all(is_input)):
        pass  # a Python composite has no node of its own (torch's op often has one): its graph is its table ops'
    elif sample.node and grad_mask is None and op in IMPLICIT_COMPOSITES:
        # torch's view of an mm/bmm result is an _unsafe_view; pyctorch numbers some overloads differently (its one
        # sum op is SumBackward0, torch's sum.dim_IntList SumBackward1): the names are compared without that number
        def root(t):
            return re.sub(r"\d+$", "", t.grad_fn.name()).replace("UnsafeView", "View") if t.grad_fn else None
        for a, b in zip(op_, ot):
            assert root(a) == root(b), f"sample {k}: grad_fn {a.grad_fn} != torch's {b.grad_fn}"
    elif sample.node and grad_mask is None:
        want = node_name(op)
        assert want in _graph_names(op_), f"sample {k}: no {want} node in the graph ({_graph_names(op_)})"
    diff = [i for i, b in enumerate(ot) if b.requires_grad]
    wrt = [i for i, x in enumerate(xt) if x.requires_grad]
    if not diff or not wrt:
        return None
    gos = _grad_outputs(op, k, [ot[i] for i in diff], 1)
    try:
        gt = torch.autograd.grad([ot[i] for i in diff], [xt[i] for i in wrt],
                                 [_as(torch, g, ot[i]) for g, i in zip(gos, diff)], allow_unused=True)
    except RuntimeError as e:
        if "not implemented" in str(e):  # torch has no formula: gradcheck checks pyctorch's
            return None
        with pytest.raises(RuntimeError):  # torch refuses the gradient: pyctorch must refuse too
            pyctorch.autograd.grad([op_[i] for i in diff], [xp[i] for i in wrt],
                                   [_as(pyctorch, g, op_[i]) for g, i in zip(gos, diff)], allow_unused=True)
        return None
    gp = pyctorch.autograd.grad([op_[i] for i in diff], [xp[i] for i in wrt],
                                [_as(pyctorch, g, op_[i]) for g, i in zip(gos, diff)], allow_unused=True)
    for i, a, b in zip(wrt, gp, gt):
        assert (a is None) == (b is None), f"sample {k}: grad of input {i} is {a} but torch's is {b}"
        if a is not None:
            assert_same(a, b, *tol, what=f"sample {k}: grad of input {i}")
    return diff, wrt


class _Xfails:
    """Runs samples; a sample with xfail=reason must fail (strict), and the test then xfails."""

    def __init__(self, kind):
        self.kind = kind
        self.reasons = []

    def run(self, k, sample, check):
        reason = sample.xfail_for(self.kind)
        if not reason:
            check()
            return
        try:
            check()
        except Exception as e:  # noqa: BLE001  (the known failure)
            self.reasons.append(f"sample {k}: {reason} [{type(e).__name__}: {str(e).splitlines()[0][:120]}]")
            return
        pytest.fail(f"sample {k} passes now (XPASS): remove its xfail ({reason})")

    def finish(self):
        if self.reasons:
            pytest.xfail("; ".join(self.reasons))


@requires_torch
@pytest.mark.parametrize("op", _cases())
def test_grad_vs_torch(op):
    xf = _Xfails("grad")
    for k, sample in _samples(op):
        if sample.skip:
            continue
        arrays = SR.arrays(op, k, sample)

        def check():
            _check_first_order(op, k, sample, arrays, None)
            ngrad = sum(s.grad for s in sample.inputs)
            if ngrad > 1:  # only the first / the last differentiable input requires grad: the `needs` mask
                first = next(i for i, s in enumerate(sample.inputs) if s.grad)
                _check_first_order(op, k, sample, arrays, [i == first for i in range(len(sample.inputs))])
                last = max(i for i, s in enumerate(sample.inputs) if s.grad)
                _check_first_order(op, k, sample, arrays, [i == last for i in range(len(sample.inputs))])
        xf.run(k, sample, check)
    xf.finish()


def _second_order(T, sample, arrays, gos, vs):
    """d/d(inputs, grad_outputs) of sum(v * d(out)/d(inputs) . grad_outputs)."""
    xs = _leaves(T, sample, arrays)
    outs = _run(T, sample, xs)
    diff = [o for o in outs if o.requires_grad]
    wrt = [x for x in xs if x.requires_grad]
    g = [_as(T, a, o, True) for a, o in zip(gos, diff)]
    first = T.autograd.grad(diff, wrt, g, create_graph=True, allow_unused=True)
    total = None
    for f, v in zip(first, vs):
        if f is not None and f.requires_grad:
            term = (f * _as(T, v, f)).sum()
            total = term if total is None else total + term
    if total is None:
        return [None] * (len(wrt) + len(g)), first
    return T.autograd.grad(total, wrt + g, allow_unused=True), first


def _check_second_order(op, k, sample, arrays):
    xt = _leaves(torch, sample, arrays)
    ot = [o for o in _run(torch, sample, xt) if o.requires_grad]
    if not ot:
        return
    gos = _grad_outputs(op, k, ot, 1)
    vs = [SR.rng_for(op, k, 2).standard_normal(tuple(x.shape)) for x in xt if x.requires_grad]
    try:
        st, _ = _second_order(torch, sample, arrays, gos, vs)
    except RuntimeError as e:  # torch has no double backward here: nothing to compare
        if "not implemented" in str(e) or "does not require grad" in str(e) or "invalid gradient" in str(e):
            return
        raise
    sp, _ = _second_order(pyctorch, sample, arrays, gos, vs)
    tol = sample.tol or (1e-6, 1e-8)
    for i, (a, b) in enumerate(zip(sp, st)):
        if a is None and b is None:
            continue
        a = a if a is not None else pyctorch.zeros(tuple(b.shape), dtype=getattr(pyctorch, dtype_name(b)), device=DEVICE)
        b = b if b is not None else torch.zeros(tuple(a.shape), dtype=getattr(torch, dtype_name(a)), device=SR.TORCH_DEVICE)
        assert_same(a, b, *tol, what=f"sample {k}: second derivative {i} (of the inputs, then the grad_outputs)")


@requires_torch
@pytest.mark.parametrize("op", _cases())
def test_double_backward_vs_torch(op):
    xf = _Xfails("gradgrad")
    for k, sample in _samples(op):
        if sample.skip or not sample.gg:
            continue
        arrays = SR.arrays(op, k, sample)
        xf.run(k, sample, lambda: _check_second_order(op, k, sample, arrays))
    xf.finish()


def _gc_inputs(sample, arrays):
    return _leaves(pyctorch, sample, arrays)


@pytest.mark.parametrize("op", _cases())
def test_gradcheck(op):
    checked = 0
    xf = _Xfails("gradcheck")
    for k, sample in _samples(op):
        if sample.skip or not sample.gc:
            continue
        if any(s.dtype != "float64" for s in sample.inputs if s.grad):
            continue
        xs = _gc_inputs(sample, SR.arrays(op, k, sample))
        if not any(x.requires_grad for x in xs):
            continue

        def check():
            assert pyctorch.autograd.gradcheck(lambda *a: tuple(_run(pyctorch, sample, list(a))), xs), f"sample {k}"
        xf.run(k, sample, check)
        checked += 1
    if op not in NO_GRADCHECK:
        assert checked, f"{op}: no sample can be gradchecked"
    xf.finish()


@pytest.mark.parametrize("op", _cases(exclude=NO_GRADCHECK))
def test_gradgradcheck(op):
    """gradgradcheck (finite differences of the first derivative) on every gradcheckable sample."""
    xf = _Xfails("gradgradcheck")
    checked = 0
    for k, sample in _samples(op):
        if sample.skip or not sample.gc or not sample.gg or any(s.dtype != "float64" for s in sample.inputs):
            continue
        xs = _gc_inputs(sample, SR.arrays(op, k, sample))
        if not any(o.requires_grad for o in _run(pyctorch, sample, xs)):
            continue

        def check():
            assert pyctorch.autograd.gradgradcheck(lambda *a: tuple(_run(pyctorch, sample, list(a))), xs), f"sample {k}"
        xf.run(k, sample, check)
        checked += 1
    assert checked, f"{op}: no sample can be gradgradchecked (list it in NO_GRADCHECK with a reason)"
    xf.finish()


@pytest.mark.parametrize("call", [lambda T, x: T.linalg.matrix_norm(x, "nuc"), lambda T, x: T.linalg.matrix_norm(x, 2),
                                  lambda T, x: T.linalg.matrix_norm(x, -2), lambda T, x: T.linalg.norm(x, "nuc"),
                                  lambda T, x: T.linalg.norm(x, 2), lambda T, x: T.norm(x, "nuc")],
                         ids=["nuc", "2", "-2", "norm_nuc", "norm_2", "torch_norm_nuc"])
def test_svd_norm_gradients_against_numpy(call):
    """The spectral and nuclear norms' gradients from numpy's SVD: U V^T for 'nuc', u_1 v_1^T for
    ord 2 and u_k v_k^T for -2 (distinct singular values)."""
    a = np.array([[2.0, 1.0, 0.5], [0.0, 1.5, -1.0], [1.0, -0.5, 3.0], [0.5, 0.25, -2.0]])
    x = pyctorch.tensor(a).requires_grad_()
    y = call(pyctorch, x)
    y.backward()
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    value = float(y)
    if np.isclose(value, s.sum()):
        want = u @ vt
    elif np.isclose(value, s[0]):
        want = np.outer(u[:, 0], vt[0])
    else:
        assert np.isclose(value, s[-1])
        want = np.outer(u[:, -1], vt[-1])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10, atol=1e-12)


# ---- engine/binding behaviours this file found broken once (now fixed in C) -----------------------

@pytest.mark.parametrize("method", ["double", "half", "bfloat16"])
def test_dtype_shorthand_methods_record(method):
    x = pyctorch.tensor([1.0, 2.0]).requires_grad_()
    y = getattr(x, method)()
    assert y.requires_grad and y.grad_fn is not None
    g, = pyctorch.autograd.grad(y.sum(), x)
    assert g.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("call", ["view_as", "reshape_as", "expand_as", "type_as", "to"])
def test_shape_only_tensor_arguments_do_not_require_grad(call):
    x = pyctorch.ones(3, 4, dtype=pyctorch.float64)
    f64 = pyctorch.float64
    other = {"view_as": pyctorch.ones(12, dtype=f64), "reshape_as": pyctorch.ones(2, 6, dtype=f64),
             "expand_as": pyctorch.ones(2, 3, 4, dtype=f64), "type_as": pyctorch.ones(2),
             "to": pyctorch.ones(2)}[call].requires_grad_()
    assert not getattr(x, call)(other).requires_grad
