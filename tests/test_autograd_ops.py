"""The generic autograd test, driven by the op table: every differentiable entry of
`pyctorch._C._op_table()` (its PCT_GRAD line is not "non_differentiable") has samples here.

Samples are small float64 inputs: broadcast, transposed and sliced (non-contiguous leaves) and 0-d
cases where the op allows them, ties/zeros/NaN at the known weak spots, the in-place variants (the
recorder saves the value before the op), dtype= arguments (float32 <-> float64). With torch:
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
Coverage (test_every_float_op_has_a_formula): every op that takes a Tensor must have a PCT_GRAD
line; "non_differentiable" is accepted only for the reasons in NONDIFF (checked against torch by
test_non_differentiable_op), a missing line only where torch has no derivative either
(MISSING_LIKE_TORCH), and every differentiable op must have samples here.
A sample may carry strict xfails per kind of check (xfail=) for known engine bugs (none at the
moment); `skip=` marks derivatives pyctorch cannot have yet.
"""
import glob
import os
import re
import warnings
import zlib

import numpy as np
import pytest

import pyctorch
from conftest import HAVE_TORCH, requires_torch, torch

TABLE = pyctorch._C._op_table()
BY_ID = {e["id"]: e for e in TABLE}
def _source_root():
    """The checkout holding csrc/ (make asan runs a copy of tests/ from build/asan, two levels down)."""
    d = os.path.dirname(os.path.abspath(__file__))
    for _ in range(4):
        d = os.path.dirname(d)
        if os.path.exists(os.path.join(d, "csrc", "aten", "ops.def")):
            return d
    raise RuntimeError("csrc/aten/ops.def not found above " + os.path.abspath(__file__))


ROOT = _source_root()


def _read_formulas():
    """op id -> list of formula strings, parsed from the PCT_GRAD lines of csrc/aten/ops*.def."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "csrc", "aten", "ops*.def"))):
        with open(path) as f:
            for line in f:
                m = re.match(r"\s*PCT_GRAD\((\w+),\s*(.*)\)\s*$", line)
                if m:
                    out[m.group(1)] = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
    return out


FORMULAS = _read_formulas()
DIFFERENTIABLE = [e["id"] for e in TABLE if e["id"] in FORMULAS and FORMULAS[e["id"]] != ["non_differentiable"]]


def node_name(op_id):
    """The node name record.c gives an op: CamelCase of its name, Backward, its overload number."""
    name = BY_ID[op_id]["name"]
    overload = 0
    for e in TABLE:
        if e["id"] == op_id:
            break
        overload += e["name"] == name
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p) + f"Backward{overload}"


# ---- samples -------------------------------------------------------------------------------------

class In:
    """One float input: its shape, layout ("c" contiguous, "t" last two dims transposed, "s" sliced
    with step 2 along the last dim), value range or explicit values, dtype, and whether it is
    differentiated (grad=False: a constant float tensor passed to the op)."""

    def __init__(self, shape=(3, 4), layout="c", lo=-2.0, hi=2.0, values=None, dtype="float64", signed=False,
                 grad=True):
        self.shape, self.layout, self.lo, self.hi = tuple(shape), layout, lo, hi
        self.values, self.dtype, self.signed, self.grad = values, dtype, signed, grad
        if values is not None:
            self.shape = np.asarray(values).shape

    def sample(self, rng):
        if self.values is not None:
            return np.asarray(self.values, dtype=np.float64)
        v = rng.uniform(self.lo, self.hi, self.shape)
        if self.signed:
            v = v * rng.choice([-1.0, 1.0], self.shape)
        return np.asarray(v, dtype=np.float64)


def X(*shape, **kw):
    return In(shape, **kw)


def V(values, **kw):
    return In(values=values, **kw)


POS = dict(lo=0.5, hi=2.0)
NZ = dict(lo=0.5, hi=2.0, signed=True)
UNIT = dict(lo=-0.9, hi=0.9)
PROB = dict(lo=0.05, hi=0.95)


class S:
    """A sample: fn(T, *tensors) with T the library (pyctorch or torch), its inputs, and flags.
    tfn: a different call for torch. gc: gradcheck it (False at kinks, ties, non-finite values and
    for float32 inputs). gg: compare double backward with torch. node: the op's node must be in
    the graph. tol: (rtol, atol) for the torch comparisons."""

    def __init__(self, fn, *inputs, tfn=None, gc=True, gg=True, node=True, tol=None, skip=None, xfail=None):
        self.fn, self.inputs, self.tfn = fn, inputs, tfn
        self.gc, self.gg, self.node, self.tol = gc, gg, node, tol
        self.skip, self.xfail = skip, xfail

    def xfail_for(self, kind):
        """The known-failure reason for one kind of check ("grad", "gradgrad", "gradcheck",
        "gradgradcheck"): xfail is a reason for all of them or a {kind: reason} dict."""
        if isinstance(self.xfail, dict):
            return self.xfail.get(kind)
        return self.xfail

    def call(self, T, xs):
        if T is not pyctorch and self.tfn is not None:
            return self.tfn(T, *xs)
        return self.fn(T, *xs)


def gen(T):
    return T.Generator().manual_seed(7)


SAMPLES = {}
# gg=SINGULAR: no double-backward comparison at a point where the op is not differentiable and
# torch's second derivative is NaN (a masked 0/0), while pyctorch's masks before dividing (0)
SINGULAR = False
# torch defines the gradient of normal() with respect to mean and std as zero (no reparameterization),
# which is not the finite-difference derivative: those ops are compared with torch but not gradchecked
NO_GRADCHECK = {"normal_tensor_float", "normal_tensor_tensor", "normal_float_tensor",
                "type_as",  # type_as: a conversion, every sample has a float32 side
                # no gradgradcheck: torch has no double backward for the first two (the samples say gg=False), and
                # the grid samplers' double backward is second order only (Note [Grid sampler double backward])
                "embedding_bag", "ctc_loss", "grid_sampler_2d_backward", "grid_sampler_3d_backward"}


def add(op_id, *samples):
    SAMPLES.setdefault(op_id, []).extend(samples)


# unary ops of the table: contiguous, transposed, 0-d and sliced inputs
UNARY_DOMAIN = {
    "sqrt": POS, "rsqrt": POS, "log": POS, "log2": POS, "log10": POS, "reciprocal": NZ, "log1p": dict(lo=-0.5, hi=2.0),
    "asin": UNIT, "acos": UNIT, "atanh": UNIT, "erfinv": UNIT, "acosh": dict(lo=1.2, hi=3.0),
    "tan": dict(lo=-1.2, hi=1.2), "special_ndtri": PROB,
}
for _e in TABLE:
    if _e["kind"] == "unary" and _e["id"] in DIFFERENTIABLE:
        _d = UNARY_DOMAIN.get(_e["name"], {})
        # torch.special's ops (ops_special.def) are special_<name> in the table, <name> in torch.special
        _f = (lambda name: lambda T, x: (getattr(T.special, name[8:]) if name.startswith("special_")
                                         else getattr(T, name))(x))(_e["name"])
        add(_e["id"], S(_f, X(3, 4, **_d)), S(_f, X(3, 4, layout="t", **_d)), S(_f, X(**_d)),
            S(_f, X(2, 3, layout="s", **_d)))
# ops_api.def: torch spells these torch.special.i1 and torch.polygamma(1, x)
SAMPLES["_i1"] = [S(lambda T, x: pyctorch._C._i1(x), x, tfn=lambda T, x: T.special.i1(x))
                  for x in (X(3, 4), X(2, 3, layout="s"))]
SAMPLES["_trigamma"] = [S(lambda T, x: pyctorch._C._trigamma(x), x, tfn=lambda T, x: T.polygamma(1, x))
                        for x in (X(3, 4, **POS), X(2, 3, layout="t", **POS))]
add("abs", S(lambda T, x: T.abs(x), V([0.0, -1.5, 2.0]), gc=False))
add("sqrt", S(lambda T, x: T.sqrt(x), V([0.0, 1.5]), gc=False))

# binary ops of the table: same shape, broadcast, non-contiguous, 0-d, Python scalars
BINARY_DOMAIN = {  # name -> (input range, other range)
    "div": ({}, NZ), "divide": ({}, NZ), "true_divide": ({}, NZ), "_div_trunc": ({}, NZ), "remainder": ({}, NZ),
    "fmod": ({}, NZ), "pow": (POS, {}), "float_power": (POS, {}), "xlogy": ({}, POS), "copysign": (NZ, {}),
}
SCALAR_FIRST = {"add", "sub", "subtract", "mul", "multiply", "div", "true_divide", "pow", "float_power", "xlogy",
                "remainder"}
TORCH_NAME = {"_div_trunc": lambda T, a, b: T.div(a, b, rounding_mode="trunc")}


def _binary_samples(e):
    name = e["name"]
    di, do = BINARY_DOMAIN.get(name, ({}, {}))
    mod = (lambda T: pyctorch._C) if name.startswith("_") else (lambda T: T)
    f = lambda T, a, b: getattr(mod(T), name)(a, b)  # noqa: E731
    tf = (lambda T, a, b: TORCH_NAME[name](T, a, b)) if name in TORCH_NAME else None
    out = [S(f, X(3, 4, **di), X(3, 4, **do), tfn=tf),
           S(f, X(3, 1, **di), X(4, **do), tfn=tf),
           S(f, X(3, 4, layout="t", **di), X(3, 4, layout="s", **do), tfn=tf),
           S(f, X(**di), X(2, 3, **do), tfn=tf)]
    if "Tensor|Scalar other" in e["schema"]:
        c = 1.5 if name not in ("pow", "float_power") else 2.5
        out.append(S(lambda T, a: getattr(mod(T), name)(a, c), X(2, 3, **di),
                     tfn=(lambda T, a: TORCH_NAME[name](T, a, c)) if tf else None))
    if name in SCALAR_FIRST:
        out.append(S(lambda T, b: getattr(T, name)(1.5, b), X(2, 3, **do)))
    if "alpha" in e["schema"]:
        out.append(S(lambda T, a, b: getattr(T, name)(a, b, alpha=2.5), X(3, 1), X(3, 4)))
        out.append(S(lambda T, a: getattr(T, name)(a, 1.5, alpha=-2), X(3, 4)))
    return out


# ops_special.def: torch has no derivative of zeta and igamma/igammac w.r.t. their first argument (a constant here;
# test_special_functions.py checks the error), polygamma's order is an int
SPECIAL_SECOND_ONLY = {"special_zeta": (lambda T, a, b: T.special.zeta(a, b), dict(lo=2.0, hi=4.0), POS),
                       "igamma": (lambda T, a, b: T.igamma(a, b), POS, POS),
                       "igammac": (lambda T, a, b: T.igammac(a, b), POS, POS)}
for _op, (_f, _di, _do) in SPECIAL_SECOND_ONLY.items():
    add(_op, S(_f, X(3, 4, grad=False, **_di), X(3, 4, **_do)), S(_f, X(3, 1, grad=False, **_di), X(4, **_do)),
        S(_f, X(grad=False, **_di), X(2, 3, layout="s", **_do)))
for _k in (0, 1, 2, 3):
    add("polygamma", S((lambda k: lambda T, x: T.polygamma(k, x))(_k), X(3, 4, **POS)),
        S((lambda k: lambda T, x: T.special.polygamma(k, x))(_k), X(2, 3, layout="t", **POS)))
    add("polygamma_method", S((lambda k: lambda T, x: x.polygamma(k))(_k), X(3, 4, **POS)))

for _e in TABLE:
    if _e["kind"] == "binary" and _e["id"] in DIFFERENTIABLE and _e["id"] not in SPECIAL_SECOND_ONLY:
        add(_e["id"], *_binary_samples(_e))

# pow / float_power: zero bases, zero exponents, integer exponents
_base0 = V([0.0, 0.0, 0.0, 1.5, 0.0, 2.0])
_expo = V([2.0, 0.0, 1.0, 0.0, 0.5, -1.0])
add("pow",
    S(lambda T, x, y: T.pow(x, y), _base0, _expo, gc=False),
    S(lambda T, x: T.pow(x, 2), V([0.0, -1.5, 2.0])),
    S(lambda T, x: T.pow(x, 0), V([0.0, -1.5, 2.0])),
    S(lambda T, x: T.pow(x, 0.5), V([0.0, 1.5, 2.0]), gc=False),
    S(lambda T, x: T.pow(0.0, x), V([2.0, 0.0, 1.0, -1.0]), gc=False),
    S(lambda T, x: T.pow(2.0, x), X(3)))
add("float_power",
    S(lambda T, x, y: T.float_power(x, y), _base0, _expo, gc=False),
    S(lambda T, x: T.float_power(x, 2), V([0.0, -1.5, 2.0])),
    S(lambda T, x: T.float_power(x, 0.0), V([0.0, -1.5, 2.0])),
    S(lambda T, x: T.float_power(0.0, x), V([2.0, 0.0, 1.0, -1.0]), gc=False),
    S(lambda T, x, y: T.float_power(x, y), X(3, dtype="float32", **POS), X(3, dtype="float32"), gc=False,
      tol=(1e-5, 1e-6)))
add("xlogy",
    S(lambda T, x, y: T.xlogy(x, y), V([0.0, 0.0, 1.5, 2.0]), V([0.0, 1.5, 0.5, float("nan")]), gc=False),
    S(lambda T, x: T.xlogy(x, 3.0), X(3)))
add("copysign",
    S(lambda T, x, y: T.copysign(x, y), V([0.0, -1.0, 2.0, 0.0]), V([-1.0, 2.0, -0.0, 3.0]), gc=False, gg=SINGULAR),
    S(lambda T, x: T.copysign(x, -1.0), X(3, **NZ)))
for _n in ("remainder", "fmod"):
    add(_n, S(lambda T, x, y, _n=_n: getattr(T, _n)(x, y), V([5.5, -5.5, 3.25, -0.75]), V([2.0, 2.0, -1.5, 0.5])))
for _n in ("fmin", "fmax", "minimum", "maximum"):
    add(_n, S(lambda T, x, y, _n=_n: getattr(T, _n)(x, y), V([1.0, 2.0, -1.0, float("nan"), 3.0]),
              V([1.0, 3.0, -2.0, 1.0, float("nan")]), gc=False))

# division with a rounding mode, and a 0-d divisor
add("div_mode",
    *[S(lambda T, x, y, m=m: T.div(x, y, rounding_mode=m), X(3, 4), X(4, **NZ)) for m in ("floor", "trunc")],
    S(lambda T, x, y: T.div(x, y, rounding_mode=None), X(3, 4, layout="t"), X(**NZ)),
    S(lambda T, x: T.div(x, 0.75, rounding_mode="floor"), X(3)))

# pointwise with extra arguments
for _n in ("clamp", "clip"):
    add(_n,
        S(lambda T, x, _n=_n: getattr(T, _n)(x, -0.5, 0.5), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, min=-0.5), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, max=0.3), X()),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, -0.5, 0.5), V([-0.5, 0.5, 0.0, 1.0, -1.0]), gc=False),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1, 0), X(4), gc=False))
MASK34 = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]
add("where",
    S(lambda T, x, y: T.where(T.tensor(MASK34), x, y), X(3, 4), X(3, 4, layout="t")),
    S(lambda T, x, y: T.where(T.tensor(MASK34), x, y), X(3, 1), X(4)),
    S(lambda T, x: T.where(T.tensor(MASK34), x, 0.5), X(3, 4, layout="s")),
    S(lambda T, y: T.where(T.tensor(MASK34), 1.5, y), X()),
    S(lambda T, x, y: T.where(T.tensor(True), x, y), X(), X()))
add("lerp",
    S(lambda T, a, b, w: T.lerp(a, b, w), X(3, 4), X(3, 4, layout="t"), X(4)),
    S(lambda T, a, b, w: T.lerp(a, b, w), X(3, 1), X(4), X()),
    S(lambda T, a, b: T.lerp(a, b, 0.3), X(3, 4, layout="s"), X(3, 4)),
    S(lambda T, a, b: T.lerp(a, b, 0.7), X(), X(2)))
for _n in ("addcmul", "addcdiv"):
    _d = NZ if _n == "addcdiv" else {}
    add(_n,
        S(lambda T, a, b, c, _n=_n: getattr(T, _n)(a, b, c), X(3, 4), X(3, 4, layout="t"), X(3, 4, **_d)),
        S(lambda T, a, b, c, _n=_n: getattr(T, _n)(a, b, c, value=0.5), X(4), X(3, 1), X(3, 4, layout="s", **_d)),
        S(lambda T, a, b, c, _n=_n: getattr(T, _n)(a, b, c, value=-2), X(), X(), X(**_d)))
add("nan_to_num",
    S(lambda T, x: T.nan_to_num(x), V([float("nan"), float("inf"), -float("inf"), 1.5]), gc=False),
    S(lambda T, x: T.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0), X(3, 4, layout="t")),
    S(lambda T, x: T.nan_to_num(x), X()))
add("round",
    S(lambda T, x: T.round(x), X(3, 4)),
    S(lambda T, x: T.round(x, decimals=2), X(3, 4, layout="t")),
    S(lambda T, x: T.round(x), X()))
add("logit",
    S(lambda T, x: T.logit(x), X(3, 4, **PROB)),
    S(lambda T, x: T.logit(x, eps=0.2), X(3, 4, layout="t", lo=0.01, hi=0.99)),
    S(lambda T, x: T.logit(x, 0.25), V([0.1, 0.25, 0.5, 0.75, 0.9]), gc=False),
    S(lambda T, x: T.logit(x), V([-0.5, 0.5, 1.5]), gc=False),
    S(lambda T, x: T.logit(x), X(**PROB)))
add("square", S(lambda T, x: T.square(x), X(3, 4)), S(lambda T, x: T.square(x), X(3, 4, layout="t")),
    S(lambda T, x: T.square(x), X()))

# conversions and copies
F32 = (1e-5, 1e-6)
add("to_dtype",
    S(lambda T, x: x.to(T.float32), X(3, 4), gc=False, tol=F32),
    S(lambda T, x: x.to(T.float64, copy=True), X(3, 4, layout="t")),
    S(lambda T, x: x.to(T.float64), X(3, dtype="float32"), gc=False, tol=F32))
add("to_device",
    S(lambda T, x: x.to(device="cpu", dtype=T.float32), X(3, 4), gc=False, tol=F32),
    S(lambda T, x: x.to("cpu", T.float64, copy=True), X()))
add("to_other",
    S(lambda T, x: x.to(T.zeros(1, dtype=T.float32)), X(3, 4, layout="t"), gc=False, tol=F32),
    S(lambda T, x, o: x.to(o, copy=True), X(3), X(2, grad=False)))
_xf = _xfg = {}
add("copy_",
    S(lambda T, x, s: (x * 1).copy_(s), X(3, 4), X(4), **_xfg),
    S(lambda T, x, s: (x * 1).copy_(s), X(3, 4, layout="t"), X(3, 4, layout="s"), **_xf),
    S(lambda T, x, s: (x * 1).copy_(s), X(3), X(), **_xfg),
    S(lambda T, x, s: (x * 1).copy_(s), X(3), X(3, dtype="float32"), gc=False, tol=F32, **_xf))
add("clone", S(lambda T, x: T.clone(x), X(3, 4, layout="t")), S(lambda T, x: x.clone(), X()))
add("contiguous", S(lambda T, x: x.contiguous(), X(3, 4, layout="t")),
    S(lambda T, x: x.contiguous(), X(2, 3, layout="s")))
add("fill_", S(lambda T, x: (x * 1).fill_(2.0), X(3, 4), **_xfg))
add("fill", S(lambda T, x: T.fill(x, 2.0), X(3, 4, layout="t"), **_xfg))
add("fill_tensor", S(lambda T, x, v: T.fill(x, v), X(3, 4), X()))
add("zero_", S(lambda T, x: (x * 1).zero_(), X(3, 4, layout="t"), **_xfg))
add("type_as", S(lambda T, x: x.type_as(T.zeros(1, dtype=T.float32)), X(3, 4), gc=False, tol=F32),
    S(lambda T, x, o: x.type_as(o), X(3, dtype="float32"), X(2, grad=False), gc=False, tol=F32))

# views
add("view", S(lambda T, x: x.view(4, 3), X(3, 4)), S(lambda T, x: x.view(-1), X()),
    S(lambda T, x: x.view(2, 1, 2), X(4)))
add("view_as", S(lambda T, x, o: x.view_as(o), X(3, 4), X(2, 6, grad=False)))
add("reshape", S(lambda T, x: T.reshape(x, (2, 6)), X(3, 4, layout="t")), S(lambda T, x: x.reshape(1, 1), X()),
    S(lambda T, x: x.reshape(-1), X(2, 3, layout="s")))
add("reshape_as", S(lambda T, x, o: x.reshape_as(o), X(3, 4, layout="t"), X(12, grad=False)))
add("flatten", S(lambda T, x: T.flatten(x), X(2, 3, 2)), S(lambda T, x: x.flatten(1), X(2, 3, 2, layout="t")),
    S(lambda T, x: x.flatten(), X()))
add("unflatten", S(lambda T, x: T.unflatten(x, 1, (2, 2)), X(3, 4, layout="s")),
    S(lambda T, x: x.unflatten(0, (3, -1)), X(6)))
add("squeeze", S(lambda T, x: T.squeeze(x), X(3, 1, 4)), S(lambda T, x: x.squeeze(0), X(1, 3, 4, layout="t")),
    S(lambda T, x: x.squeeze((0, 2)), X(1, 3, 1)), S(lambda T, x: x.squeeze(), X()))
add("unsqueeze", S(lambda T, x: T.unsqueeze(x, 1), X(3, 4, layout="t")), S(lambda T, x: x.unsqueeze(-1), X()))
add("permute", S(lambda T, x: T.permute(x, (2, 0, 1)), X(2, 3, 4)),
    S(lambda T, x: x.permute(1, 0), X(3, 4, layout="t")),
    S(lambda T, x: x.permute(()), X()))
for _n in ("transpose", "swapaxes", "swapdims"):
    add(_n, S(lambda T, x, _n=_n: getattr(T, _n)(x, 0, 2), X(2, 3, 4)),
        S(lambda T, x, _n=_n: getattr(x, _n)(-1, 0), X(3, 4, layout="s")))
add("t", S(lambda T, x: T.t(x), X(3, 4, layout="t")), S(lambda T, x: x.t(), X(3)), S(lambda T, x: x.t(), X()))
for _n in ("movedim", "moveaxis"):
    add(_n, S(lambda T, x, _n=_n: getattr(T, _n)(x, 0, 2), X(2, 3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, (0, 1), (2, 0)), X(2, 3, 4)))
add("expand", S(lambda T, x: x.expand(2, 3, 4), X(3, 1)), S(lambda T, x: x.expand(3), X()),
    S(lambda T, x: x.expand(4, -1), X(1, 3, layout="s")))
add("expand_as", S(lambda T, x, o: x.expand_as(o), X(4), X(3, 4, grad=False)))
add("broadcast_to", S(lambda T, x: T.broadcast_to(x, (2, 3, 4)), X(3, 1)), S(lambda T, x: T.broadcast_to(x, (2,)), X()))
add("narrow", S(lambda T, x: T.narrow(x, 1, 1, 2), X(3, 4, layout="t")), S(lambda T, x: x.narrow(0, 0, 1), X(3)))
add("select", S(lambda T, x: T.select(x, 1, -1), X(3, 4)), S(lambda T, x: x.select(0, 1), X(3, 4, layout="t")))
add("unbind", S(lambda T, x: T.unbind(x, 1), X(3, 4, layout="t")), S(lambda T, x: T.unbind(x)[1:], X(3, 2)))
add("split", S(lambda T, x: T.split(x, 3, 1), X(3, 4, layout="t")), S(lambda T, x: T.split(x, 2)[0], X(5)))
add("split_list", S(lambda T, x: T.split(x, [1, 3], 1), X(3, 4)), S(lambda T, x: x.split([2, 1])[1], X(3)))
add("split_with_sizes", S(lambda T, x: T.split_with_sizes(x, [1, 2], 0), X(3, 4, layout="t")))
add("tensor_split", S(lambda T, x: T.tensor_split(x, 3, 1), X(3, 4)), S(lambda T, x: T.tensor_split(x, 2)[1], X(5)))
add("tensor_split_indices", S(lambda T, x: T.tensor_split(x, [1, 3], 1), X(3, 4, layout="s")))
add("chunk", S(lambda T, x: T.chunk(x, 2, 1), X(3, 4)), S(lambda T, x: x.chunk(3)[:2], X(5)))
add("diagonal", S(lambda T, x: T.diagonal(x), X(3, 4)), S(lambda T, x: T.diagonal(x, 1, 1, 0), X(3, 4, layout="t")),
    S(lambda T, x: x.diagonal(-1, 0, 2), X(3, 2, 4)))
add("as_strided",
    S(lambda T, x: T.as_strided(x, (2, 2), (1, 2), 1), X(3, 4)),
    S(lambda T, x: x.as_strided((3, 3), (1, 1)), X(3, 4)),  # overlapping windows
    S(lambda T, x: x.as_strided((2, 3), (2, 1)), X(3, 4, layout="t")),
    S(lambda T, x: x.as_strided((), (), 2), X(5)))
add("unfold", S(lambda T, x: x.unfold(1, 2, 1), X(3, 4)), S(lambda T, x: x.unfold(0, 2, 2), X(5, layout="s")),
    S(lambda T, x: x.unfold(0, 1, 1), X()))
add("alias", S(lambda T, x: T.alias(x), X(3, 4), tfn=lambda T, x: T.ops.aten.alias(x)))

# reductions
TIES = [[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.0, 2.0], [-1.0, -4.0, 5.0, -4.0]]
for _n in ("sum", "nansum", "mean", "nanmean"):
    add(_n,
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, (0, 2), keepdim=True), X(2, 3, 2)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, -1), X(2, 3, layout="s")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X()),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0, dtype=T.float32), X(3, 4), gc=False, tol=F32),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, dtype=T.float64), X(3, 4, dtype="float32"), gc=False, tol=F32))
for _n in ("nansum", "nanmean"):
    add(_n, S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), V([[1.0, float("nan"), 2.0], [float("nan")] * 3]), gc=False))
add("prod",
    S(lambda T, x: T.prod(x), X(3, 4)),
    S(lambda T, x: T.prod(x, 1), X(3, 4, layout="t")),
    S(lambda T, x: T.prod(x, 0, keepdim=True), X(2, 3, layout="s")),
    S(lambda T, x: T.prod(x), X()),
    S(lambda T, x: T.prod(x, 0), X()),
    S(lambda T, x: T.prod(x, 1), V([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [1.0, 2.0, -1.0]])),
    S(lambda T, x: T.prod(x), V([[1.5, 0.0], [2.0, 3.0]])),
    S(lambda T, x: T.prod(x), V([[1.5, 0.0], [0.0, 3.0]])),
    S(lambda T, x: T.prod(x, 1, dtype=T.float64), X(2, 3, dtype="float32"), gc=False, tol=F32))
for _n in ("amax", "amin"):
    add(_n,
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, (0, 1), keepdim=True), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X(2, 3, layout="s")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X()),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), V(TIES), gc=False),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0, keepdim=True), V(TIES), gc=False),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), V(TIES), gc=False))
for _n in ("max", "min"):
    add(_n,
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X()),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), V(TIES), gc=False),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), V([1.0, float("nan"), 2.0, float("nan")]), gc=False))
    add(_n + "_dim",
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0, keepdim=True), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0), X()),
        S(lambda T, x, _n=_n: getattr(x, _n)(-1)[0], X(2, 3, layout="s")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), V(TIES), gc=False))
    add(_n + "_other",
        S(lambda T, x, y, _n=_n: getattr(T, _n)(x, y), X(3, 4), X(4)),
        S(lambda T, x, y, _n=_n: getattr(T, _n)(x, y), X(3, 4, layout="t"), X()),
        S(lambda T, x, y, _n=_n: getattr(T, _n)(x, y), V([1.0, 2.0, 3.0]), V([1.0, 3.0, 2.0]), gc=False))
add("aminmax",
    S(lambda T, x: T.aminmax(x), X(3, 4)),
    S(lambda T, x: T.aminmax(x, dim=1, keepdim=True), X(3, 4, layout="t")),
    S(lambda T, x: T.aminmax(x, dim=0)[1], X(2, 3, layout="s")),
    S(lambda T, x: T.aminmax(x), X()),
    S(lambda T, x: T.aminmax(x, dim=1), V(TIES), gc=False),
    S(lambda T, x: T.aminmax(x), V(TIES), gc=False))
for _n in ("var", "std"):
    add(_n + "_unbiased",
        S(lambda T, x, _n=_n: getattr(T, _n)(x, False), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, True), X(3, 4, layout="t")))
    add(_n,
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, (0, 2), correction=0, keepdim=True), X(2, 3, 2)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, dim=1, unbiased=False), X(2, 3, layout="s")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, correction=2), X(5)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, correction=0), X(), gc=False, gg=SINGULAR),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X(), gc=False, gg=SINGULAR),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0), X(1, 3), gc=False, gg=SINGULAR),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), V([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]]), gc=False, gg=SINGULAR))
    add(_n + "_mean_unbiased",
        S(lambda T, x, _n=_n: getattr(T, _n + "_mean")(x, False), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n + "_mean")(x, True)[1], X(3, 4, layout="t")))
    add(_n + "_mean",
        S(lambda T, x, _n=_n: getattr(T, _n + "_mean")(x), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n + "_mean")(x, 1, keepdim=True), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(T, _n + "_mean")(x, (0, 1), correction=0)[0], X(2, 3, layout="s")),
        S(lambda T, x, _n=_n: getattr(T, _n + "_mean")(x, dim=0)[1], X(3, 4)))
add("logsumexp",
    S(lambda T, x: T.logsumexp(x, 1), X(3, 4, layout="t")),
    S(lambda T, x: T.logsumexp(x, (0, 1), keepdim=True), X(3, 4)),
    S(lambda T, x: T.logsumexp(x, 0), X()),
    S(lambda T, x: T.logsumexp(x, 1), V([[1.0, -float("inf")], [0.5, 0.5]]), gc=False))
_zeros_in = [[0.0, 1.5, -2.0], [0.0, 0.0, 0.0]]
add("norm",
    S(lambda T, x: T.norm(x), X(3, 4)),
    S(lambda T, x: T.norm(x, 1, dim=1), X(3, 4, layout="t")),
    S(lambda T, x: T.norm(x, 3, dim=(0, 1), keepdim=True), X(3, 4)),
    S(lambda T, x: T.norm(x, 1.5, dim=0), X(2, 3, layout="s")),
    S(lambda T, x: T.norm(x, 0.5), X(2, 3)),
    S(lambda T, x: T.norm(x, float("inf"), dim=1), X(3, 4)),
    S(lambda T, x: T.norm(x, -float("inf")), X(3, 4)),
    S(lambda T, x: T.norm(x, 0), X(3, 4)),
    S(lambda T, x: T.norm(x), X()),
    S(lambda T, x: T.norm(x, dim=1), V(_zeros_in), gc=False, gg=SINGULAR),
    S(lambda T, x: T.norm(x, 1.5, dim=1), V(_zeros_in), gc=False, gg=SINGULAR),
    S(lambda T, x: T.norm(x, 0.5, dim=1), V(_zeros_in), gc=False, gg=SINGULAR),
    S(lambda T, x: T.norm(x, 3, dim=1), V(_zeros_in), gc=False, gg=SINGULAR),
    S(lambda T, x: T.norm(x, float("inf"), dim=1), V([[1.0, -3.0, 3.0], [2.0, 0.5, -2.0]]), gc=False))
add("norm_str", S(lambda T, x: T.norm(x, "fro"), X(3, 4)),
    S(lambda T, x: T.norm(x, "nuc"), X(3, 4)),
    S(lambda T, x: T.norm(x, "nuc", dim=(0, 2), keepdim=True), X(2, 3, 4, layout="t")),
    S(lambda T, x: T.norm(x, "fro", dim=(0, 1)), X(3, 4, layout="t")))
for _n in ("softmax", "log_softmax"):
    add(_n,
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(x, _n)(-1), X(2, 3, layout="s")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0), X()),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1, dtype=T.float64), X(2, 3, dtype="float32"), gc=False, tol=F32),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1, dtype=T.float32), X(2, 3), gc=False, tol=F32))
# the fused backward kernels, called directly (output = a real (log_)softmax, so the sums are meaningful)
for _n, _f in (("softmax_backward_data", "softmax"), ("log_softmax_backward_data", "log_softmax")):
    add(_n,
        S(lambda T, g, x, _n=_n, _f=_f: getattr(T, "_" + _n)(g, getattr(x, _f)(1), 1, T.float64), X(3, 4), X(3, 4)),
        S(lambda T, g, x, _n=_n, _f=_f: getattr(T, "_" + _n)(g, getattr(x, _f)(0), 0, T.float64),
          X(3, 4, layout="t"), X(3, 4, layout="s")),
        S(lambda T, g, x, _n=_n, _f=_f: getattr(T, "_" + _n)(g, getattr(x, _f)(-1), -1, T.float64), X(2, 3), X(2, 3)))

# fused activations (nn.functional in both) and their backward kernels (torch's aten ops for torch)
_F = lambda T: T.nn.functional  # noqa: E731
add("gelu", S(lambda T, x: _F(T).gelu(x), X(3, 4)), S(lambda T, x: _F(T).gelu(x, approximate="tanh"), X(3, 4, layout="t")))
for _a in ("none", "tanh"):
    add("gelu_backward", S(lambda T, g, x, _a=_a: T.gelu_backward(g, x, approximate=_a), X(3, 4), X(3, 4, layout="s"),
                           tfn=lambda T, g, x, _a=_a: T.ops.aten.gelu_backward(g, x, approximate=_a)))
add("silu", S(lambda T, x: _F(T).silu(x), X(3, 4, layout="s")), S(lambda T, x: _F(T).silu(x * 1, inplace=True), X(3, 4)))
add("silu_backward", S(lambda T, g, x: T.silu_backward(g, x), X(3, 4), X(3, 4),
                       tfn=lambda T, g, x: T.ops.aten.silu_backward(g, x)))
add("softplus", S(lambda T, x: _F(T).softplus(x), X(3, 4)),
    S(lambda T, x: _F(T).softplus(x, beta=2, threshold=1), V([-1.0, 0.2, 0.4, 0.9, 3.0])))
add("softplus_backward", S(lambda T, g, x: T.softplus_backward(g, x, 1.5, 2), X(3, 4), X(3, 4),
                           tfn=lambda T, g, x: T.ops.aten.softplus_backward(g, x, 1.5, 2)))
add("elu", S(lambda T, x: _F(T).elu(x, 0.7), X(3, 4)), S(lambda T, x: _F(T).selu(x), X(3, 4, layout="t")),
    S(lambda T, x: _F(T).celu(x, 0.5), X(3, 4)), S(lambda T, x: _F(T).elu(x * 1, inplace=True), X(3, 4)))
add("elu_backward", S(lambda T, g, x: T.elu_backward(g, x, 0.7, 1.2, 0.9), X(3, 4), X(3, 4),
                      tfn=lambda T, g, x: T.ops.aten.elu_backward(g, 0.7, 1.2, 0.9, False, x)))
add("leaky_relu", S(lambda T, x: _F(T).leaky_relu(x, 0.2), X(3, 4)),
    S(lambda T, x: _F(T).leaky_relu(x * 1, 0.1, inplace=True), X(3, 4, layout="t")))
add("leaky_relu_backward", S(lambda T, g, x: T.leaky_relu_backward(g, x, 0.2), X(3, 4), X(3, 4),
                             tfn=lambda T, g, x: T.ops.aten.leaky_relu_backward(g, x, 0.2, False)))
add("hardtanh", S(lambda T, x: _F(T).hardtanh(x, -0.5, 0.5), X(3, 4)), S(lambda T, x: _F(T).relu6(x * 4), X(3, 4)),
    S(lambda T, x: _F(T).hardtanh(x * 1, inplace=True), X(3, 4)))
add("threshold_backward", S(lambda T, g, x: T.threshold_backward(g, x, 0.1), X(3, 4), X(3, 4, layout="t"),
                            tfn=lambda T, g, x: T.ops.aten.threshold_backward(g, x, 0.1)))
add("hardtanh_backward", S(lambda T, g, x: T.hardtanh_backward(g, x, -0.5, 0.5), X(3, 4), X(3, 4),
                           tfn=lambda T, g, x: T.ops.aten.hardtanh_backward(g, x, -0.5, 0.5)))
# fused attention (cpu/attention.c): torch's scaled_dot_product_attention is the oracle of the
# forward (and of logsumexp through its math), torch's first derivative of it that of the backward op
_ATTN_MASK = [[True, False, True, True, False], [False, False, False, True, False], [True, True, True, False, True]]


def _attn_ref(T, q, k, v, causal=False, mask=None):
    s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if causal:
        s = s.masked_fill(T.ones(q.shape[-2], k.shape[-2], dtype=T.bool).tril().logical_not(), float("-inf"))
    if mask is not None:
        s = s.masked_fill(mask.logical_not(), float("-inf"))
    # logsumexp does not depend on v, but the fused op's second output requires grad when v does
    lse = s.logsumexp(-1) + 0 * v.sum((-2, -1)).unsqueeze(-1)
    return T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal), lse


def _attn_bwd_torch(T, g, q, k, v, causal=False):
    """The attention backward written out in differentiable ops (torch's math), so that torch also
    gives the second derivatives."""
    scale = 1 / q.shape[-1] ** 0.5
    s = q @ k.transpose(-2, -1) * scale
    if causal:
        s = s.masked_fill(T.ones(q.shape[-2], k.shape[-2], dtype=T.bool).tril().logical_not(), float("-inf"))
    p = s.softmax(-1)
    dp = g @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    zero = 0 * (g.sum() + q.sum() + k.sum() + v.sum())  # the fused op's outputs require grad when any input does
    return ds @ k * scale + zero, ds.transpose(-2, -1) @ q * scale + zero, p.transpose(-2, -1) @ g + zero


def _attn_bwd(T, g, q, k, v, causal=False):
    out, lse = T._C._flash_attention_cpu(q, k, v, None, causal)
    return T._C._flash_attention_cpu_backward(g, q, k, v, out, lse, None, causal, None, None, [1, 1, 1])


add("flash_attention_cpu",
    S(lambda T, q, k, v: T._C._flash_attention_cpu(q, k, v)[0], X(1, 2, 3, 4), X(1, 2, 5, 4), X(1, 2, 5, 3),
      tfn=lambda T, q, k, v: _attn_ref(T, q, k, v)[0]),
    S(lambda T, q, k, v: T._C._flash_attention_cpu(q, k, v, None, True), X(2, 4, 3, layout="t"), X(2, 5, 3),
      X(2, 5, 2, layout="s"), tfn=lambda T, q, k, v: _attn_ref(T, q, k, v, causal=True)),
    S(lambda T, q, k, v: T._C._flash_attention_cpu(q, k, v, T.tensor(_ATTN_MASK).expand(2, 3, 5)),
      X(2, 3, 4), X(2, 5, 4), X(2, 5, 3), tfn=lambda T, q, k, v: _attn_ref(T, q, k, v, mask=T.tensor(_ATTN_MASK))))
add("flash_attention_cpu_backward",
    S(_attn_bwd, X(1, 2, 3, 3), X(1, 2, 3, 4), X(1, 2, 5, 4), X(1, 2, 5, 3), tfn=_attn_bwd_torch),
    S(lambda T, g, q, k, v: _attn_bwd(T, g, q, k, v, True), X(2, 4, 2), X(2, 4, 3, layout="t"), X(2, 5, 3),
      X(2, 5, 2), tfn=lambda T, g, q, k, v: _attn_bwd_torch(T, g, q, k, v, True)))

# random sampling: the same generator seed gives the same values in both libraries
add("normal_tensor_float", S(lambda T, m: T.normal(m, 0.5, generator=gen(T)), X(3, 4), gc=False))
add("normal_tensor_tensor", S(lambda T, m, s: T.normal(m, s, generator=gen(T)), X(3, 4), X(3, 4, **POS), gc=False),
    S(lambda T, m, s: T.normal(m, s, generator=gen(T)), X(3, 4, layout="t"), X(3, 4, layout="s", **POS), gc=False))
add("normal_float_tensor", S(lambda T, s: T.normal(0.5, s, generator=gen(T)), X(3, 4, **POS), gc=False))
add("normal_", S(lambda T, x: (x * 1).normal_(generator=gen(T)), X(3, 4)))
add("bernoulli_float_", S(lambda T, x: (x * 1).bernoulli_(0.3, generator=gen(T)), X(3, 4)))
add("bernoulli_tensor_", S(lambda T, x, p: (x * 1).bernoulli_(p, generator=gen(T)), X(3, 4), X(3, 4, **PROB)))
add("uniform_", S(lambda T, x: (x * 1).uniform_(-1, 2, generator=gen(T)), X(3, 4)))
add("random_from_", S(lambda T, x: (x * 1).random_(0, 10, generator=gen(T)), X(3, 4)))
add("random_to_", S(lambda T, x: (x * 1).random_(10, generator=gen(T)), X(3, 4)))
add("random_default_", S(lambda T, x: (x * 1).random_(generator=gen(T)), X(3, 4)))
add("exponential_", S(lambda T, x: (x * 1).exponential_(2.0, generator=gen(T)), X(3, 4)))
add("cauchy_", S(lambda T, x: (x * 1).cauchy_(generator=gen(T)), X(3, 4)))
add("log_normal_", S(lambda T, x: (x * 1).log_normal_(generator=gen(T)), X(3, 4)))
add("geometric_", S(lambda T, x: (x * 1).geometric_(0.3, generator=gen(T)), X(3, 4)))

# linear algebra
add("matmul",
    S(lambda T, a, b: T.matmul(a, b), X(3, 4), X(4, 2)),
    S(lambda T, a, b: T.matmul(a, b), X(4), X(4)),
    S(lambda T, a, b: T.matmul(a, b), X(4), X(2, 4, 3)),
    S(lambda T, a, b: T.matmul(a, b), X(2, 3, 4, layout="t"), X(4)),
    S(lambda T, a, b: a @ b, X(2, 1, 2, 3), X(3, 3, 2, layout="t")),
    S(lambda T, a, b: T.matmul(a, b), X(3, 4, layout="s"), X(2, 4, 2)))
add("mm", S(lambda T, a, b: T.mm(a, b), X(3, 4, layout="t"), X(4, 2, layout="s")),
    S(lambda T, a, b: a.mm(b), X(1, 3), X(3, 1)))
add("bmm", S(lambda T, a, b: T.bmm(a, b), X(2, 3, 4), X(2, 4, 2, layout="t")))
add("mv", S(lambda T, a, b: T.mv(a, b), X(3, 4, layout="t"), X(4, layout="s")))
add("dot", S(lambda T, a, b: T.dot(a, b), X(4), X(4, layout="s")))
add("vdot", S(lambda T, a, b: T.vdot(a, b), X(4, layout="s"), X(4)))
add("inner",
    S(lambda T, a, b: T.inner(a, b), X(3, 4), X(2, 4, layout="t")),
    S(lambda T, a, b: T.inner(a, b), X(4), X(4)),
    S(lambda T, a, b: T.inner(a, b), X(2, 3, 4), X(4)),
    S(lambda T, a, b: T.inner(a, b), X(), X(2, 3)),
    S(lambda T, a, b: T.inner(a, b), X(2, 3), X()))
for _n in ("outer", "ger"):
    add(_n, S(lambda T, a, b, _n=_n: getattr(T, _n)(a, b), X(3), X(4, layout="s")))
add("addmm",
    S(lambda T, c, a, b: T.addmm(c, a, b), X(3, 2), X(3, 4), X(4, 2)),
    S(lambda T, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2), X(2), X(3, 4, layout="t"), X(4, 2)),
    S(lambda T, c, a, b: T.addmm(c, a, b, beta=0), X(), X(3, 4), X(4, 2, layout="s")))
add("addmv",
    S(lambda T, c, a, b: T.addmv(c, a, b), X(3), X(3, 4), X(4)),
    S(lambda T, c, a, b: T.addmv(c, a, b, beta=2, alpha=-0.5), X(), X(3, 4, layout="t"), X(4, layout="s")))
add("baddbmm",
    S(lambda T, c, a, b: T.baddbmm(c, a, b), X(2, 3, 2), X(2, 3, 4), X(2, 4, 2)),
    S(lambda T, c, a, b: T.baddbmm(c, a, b, beta=0.5, alpha=2), X(3, 1), X(2, 3, 4, layout="t"), X(2, 4, 2)))
add("trace", S(lambda T, x: T.trace(x), X(3, 4)), S(lambda T, x: x.trace(), X(3, 3, layout="t")))
add("kron",
    S(lambda T, a, b: T.kron(a, b), X(2, 3), X(3, 2)),
    S(lambda T, a, b: T.kron(a, b), X(3, layout="s"), X(2, 2)),  # torch's kron fails on a 1-d and a transposed input
    S(lambda T, a, b: T.kron(a, b), X(2, 1, 2), X(2, 3, layout="s")),
    S(lambda T, a, b: T.kron(a, b), X(), X(3)))
add("tensordot",
    S(lambda T, a, b: T.tensordot(a, b, 1), X(3, 4), X(4, 2)),
    S(lambda T, a, b: T.tensordot(a, b), X(2, 3, 4), X(3, 4, 2)),
    S(lambda T, a, b: T.tensordot(a, b, ([1, 0], [0, 1])), X(3, 4, layout="t"), X(4, 3, 2)),
    S(lambda T, a, b: T.tensordot(a, b, dims=0), X(2), X(3, layout="s")),
    S(lambda T, a, b: T.tensordot(a, b, ([0], [1])), X(3, 2), X(2, 3)))
add("einsum",
    S(lambda T, a, b: T.einsum("ij,jk->ik", a, b), X(3, 4), X(4, 2)),
    S(lambda T, a, b: T.einsum("bij,bjk", a, b), X(2, 3, 4, layout="t"), X(2, 4, 2)),
    S(lambda T, a, b: T.einsum("i,i->", a, b), X(4), X(4, layout="s")),
    S(lambda T, a, b: T.einsum("ij,kl->ijkl", a, b), X(2, 3), X(2, 2)),
    S(lambda T, a, b: T.einsum("...ij,...jk->...ik", a, b), X(2, 3, 4), X(4, 2)),
    S(lambda T, a: T.einsum("ij->j", a), X(3, 4)),
    S(lambda T, a, b: T.einsum("ij,j->i", a, b), X(3, 4), X(4)),
    S(lambda T, a, b: T.einsum("ij,jk", a, b), X(3, 4), X(4, 2)),
    S(lambda T, a: T.einsum("ii->i", a), X(3, 3)),
    S(lambda T, a: T.einsum("ii", a), X(3, 3, layout="t")),
    S(lambda T, a, b: T.einsum("iij,jk->ik", a, b), X(2, 2, 3), X(3, 2)),
    S(lambda T, a, b, c: T.einsum("ij,jk,kl->il", a, b, c), X(2, 3), X(3, 4), X(4, 2)),
    S(lambda T, a, b: T.einsum("ij,ij->ij", a, b), X(2, 3), X(2, 3)),
    S(lambda T, a, b: T.einsum("ij,j->", a, b), X(3, 4), X(4)))
add("linalg_vector_norm",
    *[S(lambda T, x, o=o: T.linalg.vector_norm(x, o), X(3, 4)) for o in (2, 1, 3, 0.5, 0, float("inf"), -float("inf"))],
    S(lambda T, x: T.linalg.vector_norm(x, 2, dim=1, keepdim=True), X(3, 4, layout="t")),
    S(lambda T, x: T.linalg.vector_norm(x, 1.5, dim=(0, 1)), X(2, 3, layout="s")),
    S(lambda T, x: T.linalg.vector_norm(x), X()),
    S(lambda T, x: T.linalg.vector_norm(x, dim=1), V(_zeros_in), gc=False, gg=SINGULAR),
    S(lambda T, x: T.linalg.vector_norm(x, 1.5, dim=1), V(_zeros_in), gc=False, gg=SINGULAR),
    S(lambda T, x: T.linalg.vector_norm(x, float("inf"), dim=1), V([[1.0, -3.0, 3.0], [2.0, 0.5, -2.0]]), gc=False),
    S(lambda T, x: T.linalg.vector_norm(x, dtype=T.float64), X(2, 3, dtype="float32"), gc=False, tol=F32))
_MATRIX_ORDS = (1, -1, float("inf"), -float("inf"))
add("linalg_matrix_norm",
    *[S(lambda T, x, o=o: T.linalg.matrix_norm(x, o), X(3, 4)) for o in _MATRIX_ORDS],
    S(lambda T, x: T.linalg.matrix_norm(x, 1, dim=(1, 0), keepdim=True), X(3, 4, layout="t")),
    S(lambda T, x: T.linalg.matrix_norm(x, float("inf")), X(2, 3, 2, layout="s")),
    S(lambda T, x: T.linalg.matrix_norm(x, 1), V([[1.0, -2.0], [-1.0, 2.0]]), gc=False),
    S(lambda T, x: T.linalg.matrix_norm(x, 2), X(3, 3)),
    S(lambda T, x: T.linalg.matrix_norm(x, -2, dim=(0, 2), keepdim=True), X(3, 2, 4, layout="t")),
    S(lambda T, x: T.linalg.matrix_norm(x, 2, dtype=T.float64), X(2, 3, 2, dtype="float32"), gc=False, tol=F32))
add("linalg_matrix_norm_str",
    S(lambda T, x: T.linalg.matrix_norm(x), X(3, 4)),
    S(lambda T, x: T.linalg.matrix_norm(x, "fro", dim=(0, 2), keepdim=True), X(2, 3, 2, layout="t")),
    S(lambda T, x: T.linalg.matrix_norm(x, "nuc"), X(3, 3)),
    S(lambda T, x: T.linalg.matrix_norm(x, "nuc", dim=(2, 0)), X(4, 2, 3, layout="s")))
# The SVD: singular vectors are defined up to sign (LAPACKs differ), so the samples take
# sign-invariant functions of them: U diag(f(S)) Vh, or products of a vector with itself.
add("linalg_svd",
    S(lambda T, x: (lambda r: r[0] @ r[2])(T.linalg.svd(x, full_matrices=False)), X(4, 3)),
    S(lambda T, x: (lambda r: (r[0] * r[1].sin().unsqueeze(-2)) @ r[2])(T.linalg.svd(x, full_matrices=False)), X(2, 3, 5, layout="t")),
    S(lambda T, x: (lambda r: r[0][..., :3].abs())(T.linalg.svd(x)), X(5, 3)),
    S(lambda T, x: (lambda r: r[2][..., :2, :].mT @ r[2][..., :2, :])(T.linalg.svd(x)), X(2, 4, layout="s")),
    S(lambda T, x: T.linalg.svd(x)[1], X(3, 3)))
add("linalg_svdvals",
    S(lambda T, x: T.linalg.svdvals(x), X(3, 4)),
    S(lambda T, x: T.linalg.svdvals(x), X(2, 4, 3, layout="t")))
add("svd",
    S(lambda T, x: (lambda r: (r[0] * r[1].unsqueeze(-2)) @ r[2].mT)(T.svd(x)), X(4, 3)),
    S(lambda T, x: (lambda r: r[2][..., :2] @ r[2][..., :2].mT)(T.svd(x, some=False)), X(2, 3, layout="t")),
    S(lambda T, x: T.svd(x, compute_uv=False)[1], X(3, 4)))
add("linalg_norm",
    S(lambda T, x: T.linalg.norm(x), X(3, 4)),
    S(lambda T, x: T.linalg.norm(x, 3, dim=1), X(3, 4, layout="t")),
    S(lambda T, x: T.linalg.norm(x, float("inf"), dim=(0, 1)), X(3, 4)),
    S(lambda T, x: T.linalg.norm(x, -1, dim=(0, 1)), X(3, 4)),
    S(lambda T, x: T.linalg.norm(x, 1), X(4, layout="s")),
    S(lambda T, x: T.linalg.norm(x, dim=(0, 1)), X(2, 3)),
    S(lambda T, x: T.linalg.norm(x), X()))
add("linalg_norm_str",
    S(lambda T, x: T.linalg.norm(x, "fro"), X(3, 4)),
    S(lambda T, x: T.linalg.norm(x, "fro", dim=(1, 2)), X(2, 3, 4, layout="t")),
    S(lambda T, x: T.linalg.norm(x, "nuc"), X(3, 3)))

# LAPACK-backed linalg (csrc/aten/cpu/linalg_factor.c, linalg_solve.c): well-conditioned inputs (x + 4 I),
# factors unique up to signs compared through sign-free functions of them
_I = lambda T, n=3: T.eye(n, dtype=T.float64)  # noqa: E731
_SPD = lambda T, x: x @ x.mT + _I(T, x.shape[-1])  # noqa: E731
add("linalg_inv_ex",
    S(lambda T, x: T.linalg.inv(x + 4 * _I(T)), X(3, 3)),
    S(lambda T, x: T.linalg.inv_ex(x + 4 * _I(T)).inverse, X(2, 3, 3, layout="t")))
add("linalg_det",
    S(lambda T, x: T.linalg.det(x), X(3, 3)),
    S(lambda T, x: T.linalg.det(x), X(2, 3, 3, layout="s")))
add("det", S(lambda T, x: T.det(x), X(3, 3)), S(lambda T, x: x.det(), X(2, 2, 2)))
add("linalg_slogdet", S(lambda T, x: T.linalg.slogdet(x + 4 * _I(T)).logabsdet, X(2, 3, 3)),
    S(lambda T, x: T.logdet(_SPD(T, x)), X(3, 3)))
add("slogdet", S(lambda T, x: T.slogdet(x + 4 * _I(T))[1], X(3, 3)))
add("linalg_solve_ex",
    S(lambda T, a, b: T.linalg.solve(a + 4 * _I(T), b), X(3, 3), X(3, 2)),
    S(lambda T, a, b: T.linalg.solve(a + 4 * _I(T), b), X(2, 3, 3), X(2, 3)),
    S(lambda T, a, b: T.linalg.solve(a + 4 * _I(T), b, left=False), X(3, 3), X(2, 2, 3, layout="t")))
add("linalg_solve_triangular",
    S(lambda T, a, b: T.linalg.solve_triangular(a + 4 * _I(T), b, upper=True), X(3, 3), X(3, 2)),
    S(lambda T, a, b: T.linalg.solve_triangular(a + 4 * _I(T), b, upper=False, left=False, unitriangular=True),
      X(2, 3, 3), X(2, 3)))
add("linalg_cholesky_ex",
    S(lambda T, x: T.linalg.cholesky(_SPD(T, x)), X(3, 3)),
    S(lambda T, x: T.linalg.cholesky_ex(_SPD(T, x), upper=True).L, X(2, 3, 3)))
add("cholesky", S(lambda T, x: T.cholesky(_SPD(T, x)), X(3, 3)))
add("linalg_qr",
    S(lambda T, x: (lambda r: (r[0] * r[1].diagonal(0, -2, -1).sign().unsqueeze(-2), r[1].abs()))(T.linalg.qr(x)),
      X(4, 3)),
    S(lambda T, x: (lambda r: r[0] @ r[1])(T.linalg.qr(x)), X(2, 3, 4)))
add("linalg_eigh",
    S(lambda T, x: (lambda r: ((r[1] * r[0].sin().unsqueeze(-2)) @ r[1].mT, r[0]))(T.linalg.eigh(x + x.mT)), X(3, 3)))
add("linalg_eigvalsh", S(lambda T, x: T.linalg.eigvalsh(x + x.mT, UPLO="U"), X(2, 3, 3)))
add("linalg_lu_factor_ex",
    S(lambda T, x: T.linalg.lu_factor(x).LU, X(3, 3)),
    S(lambda T, x: T.linalg.lu(x)[1:], X(4, 3)),
    S(lambda T, x: T.linalg.lu(x)[1:], X(2, 3, 4)))
add("linalg_lu_solve",
    S(lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a + 4 * _I(T)), b), X(3, 3), X(3, 2)),
    S(lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a + 4 * _I(T)), b, adjoint=True, left=False),
      X(3, 3), X(2, 3)))
add("linalg_lstsq", S(lambda T, a, b: T.linalg.lstsq(a, b).solution, X(4, 3), X(4, 2)))
add("linalg_householder_product",
    S(lambda T, a, t: T.linalg.householder_product(a, t), X(4, 3), X(2, lo=0.5, hi=1.5)))
add("orgqr", S(lambda T, a, t: T.orgqr(a, t), X(2, 3, 2), X(2, 2, lo=0.5, hi=1.5)))
add("ormqr",
    S(lambda T, a, t, c: T.ormqr(a, t, c), X(3, 2), X(2, lo=0.5, hi=1.5), X(3, 2)),
    S(lambda T, a, t, c: T.ormqr(a, t, c, left=False, transpose=True), X(3, 2), X(2, lo=0.5, hi=1.5), X(4, 3)))

# indexing
IDX = [0, 2, 0]
GIDX = [[0, 2, 0], [1, 1, 3], [3, 0, 2]]       # index into dim 1 of a (3, 4), with repeats
SIDX = [[0, 2], [3, 1], [2, 0]]                # unique per row: scatter without collisions
M = lambda T, m=MASK34: T.tensor(m)  # noqa: E731
add("index_select",
    S(lambda T, x: T.index_select(x, 1, T.tensor(IDX)), X(3, 4, layout="t")),
    S(lambda T, x: x.index_select(0, T.tensor([1, 1])), X(3, 4)),
    S(lambda T, x: T.index_select(x, 0, T.tensor([0])), X()))
add("gather",
    S(lambda T, x: T.gather(x, 1, T.tensor(GIDX)), X(3, 4)),
    S(lambda T, x: x.gather(0, T.tensor([[0, 2, 2, 1]])), X(3, 4, layout="t")),
    S(lambda T, x: T.gather(x, 0, T.tensor(0)), X()))
add("scatter_src",
    S(lambda T, x, s: T.scatter(x, 1, T.tensor(SIDX), s), X(3, 4), X(3, 2)),
    # src larger than index: its gradient has index's shape, which the engine rejects (as torch's does)
    S(lambda T, x, s: T.scatter(x, 1, T.tensor(SIDX), s), X(3, 4), X(3, 3), gc=False, gg=False),
    S(lambda T, x, s: x.scatter(1, T.tensor(SIDX), s), X(3, 4, layout="t"), X(3, 2, layout="s")))
add("scatter_value",
    S(lambda T, x: T.scatter(x, 1, T.tensor(SIDX), 2.0), X(3, 4)),
    S(lambda T, x: x.scatter(0, T.tensor([[1, 0, 2, 1]]), -1.0), X(3, 4, layout="t")))
add("scatter_add",
    S(lambda T, x, s: T.scatter_add(x, 1, T.tensor(GIDX), s), X(3, 4), X(3, 3)),
    S(lambda T, x, s: x.scatter_add(0, T.tensor([[1, 0, 1, 1]]), s), X(3, 4, layout="t"), X(1, 4, layout="s")))
for _r in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        add("scatter_reduce",
            S(lambda T, x, s, r=_r, i=_inc: T.scatter_reduce(x, 1, T.tensor(GIDX), s, r, include_self=i),
              X(3, 4), X(3, 3, layout="t")))
add("scatter_reduce",
    S(lambda T, x, s: x.scatter_reduce(0, T.tensor([[1, 0, 1], [1, 1, 0]]), s, "prod"),
      V([[1.0, 0.0, 2.0], [0.0, 3.0, 1.5]]), V([[0.0, 2.0, 1.5], [2.0, 0.0, 3.0]]), gc=False),
    S(lambda T, x, s: x.scatter_reduce(0, T.tensor([[1, 0, 1], [1, 1, 0]]), s, "amax"),
      V([[1.0, 3.0, 2.0], [2.0, 3.0, 1.5]]), V([[2.0, 3.0, 1.5], [2.0, 0.0, 3.0]]), gc=False),
    S(lambda T, x, s: x.scatter_reduce(0, T.tensor([[1, 0, 1], [1, 1, 0]]), s, "amin", include_self=False),
      V([[1.0, 3.0, 2.0], [2.0, 3.0, 1.5]]), V([[2.0, 3.0, 1.5], [2.0, 0.0, 3.0]]), gc=False))
add("index_add",
    S(lambda T, x, s: T.index_add(x, 1, T.tensor(IDX), s), X(3, 4), X(3, 3)),
    S(lambda T, x, s: x.index_add(0, T.tensor([2, 2]), s, alpha=-1.5), X(3, 4, layout="t"), X(2, 4, layout="s")),
    S(lambda T, x, s: T.index_add(x, 0, T.tensor([0]), s), X(), X()))
add("index_copy",
    S(lambda T, x, s: T.index_copy(x, 1, T.tensor([3, 0]), s), X(3, 4), X(3, 2)),
    S(lambda T, x, s: x.index_copy(0, T.tensor([2, 0]), s), X(3, 4, layout="t"), X(2, 4, layout="s")),
    S(lambda T, x, s: T.index_copy(x, 0, T.tensor([0]), s), X(), X()))
add("index_fill",
    S(lambda T, x: T.index_fill(x, 1, T.tensor(IDX), 2.0), X(3, 4)),
    S(lambda T, x, v: x.index_fill(0, T.tensor([1, 1]), v), X(3, 4, layout="t"), X()),
    S(lambda T, x, v: x.index_fill(1, T.tensor(IDX), v), X(3, 4), X()))
add("masked_fill",
    S(lambda T, x: T.masked_fill(x, M(T), 2.0), X(3, 4)),
    S(lambda T, x, v: x.masked_fill(T.tensor([True, False, False, True]), v), X(3, 4, layout="t"), X()),
    S(lambda T, x: x.masked_fill(T.tensor(True), -1.0), X()))
add("masked_select",
    S(lambda T, x: T.masked_select(x, M(T)), X(3, 4, layout="t")),
    S(lambda T, x: T.masked_select(x, M(T)), X(3, 1)),
    S(lambda T, x: x.masked_select(T.tensor([True, False, True, True])), X(3, 4)),
    S(lambda T, x: T.masked_select(x, T.tensor(True)), X()))
add("masked_scatter",
    S(lambda T, x, s: T.masked_scatter(x, M(T), s), X(3, 4), X(3, 5)),
    S(lambda T, x, s: x.masked_scatter(T.tensor([True, False, False, True]), s), X(3, 4, layout="t"), X(7)),
    S(lambda T, x, s: x.masked_scatter(T.tensor(True), s), X(), X(2)))
add("take",
    S(lambda T, x: T.take(x, T.tensor([[0, 5], [5, 11]])), X(3, 4, layout="t")),
    S(lambda T, x: x.take(T.tensor([0, 0])), X()))
add("put",
    S(lambda T, x, s: T.put(x, T.tensor([1, 7, 4]), s), X(3, 4), X(3)),
    S(lambda T, x, s: x.put(T.tensor([[1, 7], [1, 0]]), s, accumulate=True), X(3, 4, layout="t"), X(2, 2)),
    S(lambda T, x, s: x.put(T.tensor([0]), s), X(), X()))
add("index_put",
    S(lambda T, x, v: T.index_put(x, (T.tensor([0, 2]),), v), X(3, 4), X(2, 4)),
    S(lambda T, x, v: x.index_put((T.tensor([0, 2, 0]), T.tensor([1, 3, 1])), v, accumulate=True),
      X(3, 4, layout="t"), X(3)),
    S(lambda T, x, v: x.index_put((T.tensor([2, 1]), T.tensor([3, 0])), v), X(3, 4), X()),
    S(lambda T, x, v: x.index_put((M(T),), v), X(3, 4), X(1)),
    S(lambda T, x, v: x.index_put((T.tensor([1]),), v), X(3, 4), X(4, layout="s")))

# joining and shape ops
for _n in ("cat", "concat", "concatenate"):
    add(_n,
        S(lambda T, a, b, c, _n=_n: getattr(T, _n)([a, b, c], 1), X(3, 4), X(3, 2, layout="t"), X(3, 1)),
        S(lambda T, a, b, _n=_n: getattr(T, _n)((a, b)), X(2), X(3, layout="s")),
        S(lambda T, a, b, _n=_n: getattr(T, _n)([a, b], -1), X(2, 3), X(0)),
        S(lambda T, a, b, _n=_n: getattr(T, _n)([a, b], 0), X(2, 3), X(1, 3, grad=False)))
add("concatenate_axis", S(lambda T, a, b: T.concatenate([a, b], axis=1), X(3, 4, layout="t"), X(3, 2)))
add("stack",
    S(lambda T, a, b: T.stack([a, b]), X(3, 4), X(3, 4, layout="t")),
    S(lambda T, a, b: T.stack((a, b), -1), X(3, layout="s"), X(3)),
    S(lambda T, a, b: T.stack([a, b], 0), X(), X()))
add("hstack",
    S(lambda T, a, b: T.hstack([a, b]), X(3, 4), X(3, 2, layout="t")),
    S(lambda T, a, b: T.hstack([a, b]), X(2), X(3)),
    S(lambda T, a, b: T.hstack([a, b]), X(), X(2)))
add("vstack",
    S(lambda T, a, b: T.vstack([a, b]), X(3, 4), X(2, 4, layout="t")),
    S(lambda T, a, b: T.vstack([a, b]), X(3), X(1, 3)),
    S(lambda T, a, b: T.vstack([a, b]), X(), X()))
add("dstack",
    S(lambda T, a, b: T.dstack([a, b]), X(3, 4), X(3, 4, layout="s")),
    S(lambda T, a, b: T.dstack([a, b]), X(3), X(1, 3, 2)),
    S(lambda T, a, b: T.dstack([a, b]), X(), X()))
add("flip", S(lambda T, x: T.flip(x, (0, 1)), X(3, 4, layout="t")), S(lambda T, x: x.flip(-1), X(2, 3, layout="s")),
    S(lambda T, x: x.flip(()), X()))
add("fliplr", S(lambda T, x: T.fliplr(x), X(3, 4, layout="t")))
add("flipud", S(lambda T, x: T.flipud(x), X(3, 4, layout="s")))
add("roll",
    S(lambda T, x: T.roll(x, 1), X(3, 4)),
    S(lambda T, x: T.roll(x, (1, -1), (0, 1)), X(3, 4, layout="t")),
    S(lambda T, x: x.roll(2, -1), X(2, 3, layout="s")),
    S(lambda T, x: x.roll(1), X()))
add("repeat",
    S(lambda T, x: x.repeat(2, 1, 3), X(3, 2)),
    S(lambda T, x: x.repeat(1, 2), X(3, 2, layout="t")),
    S(lambda T, x: x.repeat(2, 2), X(3)),
    S(lambda T, x: x.repeat(3), X()),
    S(lambda T, x: x.repeat(()), X()))
add("repeat_interleave_int",
    S(lambda T, x: T.repeat_interleave(x, 2), X(2, 3)),
    S(lambda T, x: T.repeat_interleave(x, 3, dim=1), X(3, 2, layout="t")),
    S(lambda T, x: x.repeat_interleave(2, 0), X(3, layout="s")),
    S(lambda T, x: x.repeat_interleave(3), X()))
add("repeat_interleave",
    S(lambda T, x: T.repeat_interleave(x, T.tensor([1, 0, 2]), dim=0), X(3, 2)),
    S(lambda T, x: T.repeat_interleave(x, T.tensor([2, 1]), dim=1), X(3, 2, layout="t")),
    S(lambda T, x: x.repeat_interleave(T.tensor([2])), X(2, 2)),
    S(lambda T, x: x.repeat_interleave(T.tensor([3])), X()))
add("tile",
    S(lambda T, x: T.tile(x, (2, 1, 3)), X(3, 2)),
    S(lambda T, x: T.tile(x, (2,)), X(3, 2, layout="t")),
    S(lambda T, x: x.tile((3,)), X()),
    S(lambda T, x: x.tile(()), X(2)))
for _n in ("tril", "triu"):
    add(_n, S(lambda T, x, _n=_n: getattr(T, _n)(x), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, -1), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(x, _n)(1), X(2, 3, 3)))
add("diag",
    S(lambda T, x: T.diag(x), X(3)),
    S(lambda T, x: T.diag(x, 1), X(3, layout="s")),
    S(lambda T, x: T.diag(x, -2), X(2)),
    S(lambda T, x: T.diag(x), X(3, 4, layout="t")),
    S(lambda T, x: T.diag(x, 1), X(3, 4)),
    S(lambda T, x: x.diag(-1), X(3, 4)))
add("diag_embed",
    S(lambda T, x: T.diag_embed(x), X(2, 3)),
    S(lambda T, x: T.diag_embed(x, 1), X(3, layout="s")),
    S(lambda T, x: T.diag_embed(x, -1, 0, 2), X(2, 3, layout="t")))

# sorting, selection, scans
SORTED_TIES = [[1.0, 3.0, 3.0, -1.0, 3.0], [2.0, 2.0, 0.0, 2.0, 5.0]]
for _n, _f in (("sort", lambda T, x: T.sort(x)), ("sort_stable", lambda T, x: T.sort(x, stable=True, dim=0))):
    add(_n, S(_f, X(3, 4)), S(_f, X(3, 4, layout="t")), S(_f, X()))
add("sort", S(lambda T, x: T.sort(x, 0, descending=True)[0], X(2, 3, layout="s")))
add("sort_stable", S(lambda T, x: x.sort(stable=True, descending=True), V(SORTED_TIES), gc=False))
add("msort", S(lambda T, x: T.msort(x), X(3, 4)), S(lambda T, x: x.msort(), X(3, 4, layout="t")))
add("topk",
    S(lambda T, x: T.topk(x, 2), X(3, 4)),
    S(lambda T, x: T.topk(x, 2, dim=0, largest=False), X(3, 4, layout="t")),
    S(lambda T, x: x.topk(1)[0], X(2, 3, layout="s")),
    S(lambda T, x: T.topk(x, 1), X()))
add("kthvalue",
    S(lambda T, x: T.kthvalue(x, 2), X(3, 4)),
    S(lambda T, x: T.kthvalue(x, 1, 0, keepdim=True), X(3, 4, layout="t")),
    S(lambda T, x: x.kthvalue(1), X()))
for _n in ("median", "nanmedian"):
    add(_n,
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(x, _n)(), X(3, 3, layout="t")),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), X()),
        S(lambda T, x, _n=_n: getattr(T, _n)(x), V([[1.0, 2.0, 2.0], [2.0, 0.0, 5.0]]), gc=False))
    add(_n + "_dim",
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0, keepdim=True), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(x, _n)(0), X()))
    add(_n + "_dim", S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), V([[1.0, 2.0, 2.0, 0.0], [3.0, 3.0, 3.0, 1.0]]), gc=False))
add("kthvalue", S(lambda T, x: T.kthvalue(x, 2, 1), V([[1.0, 2.0, 2.0, 0.0], [3.0, 3.0, 3.0, 1.0]]), gc=False))
add("nanmedian", S(lambda T, x: T.nanmedian(x), V([1.0, float("nan"), 2.0, 0.5, float("nan")]), gc=False))
add("nanmedian_dim", S(lambda T, x: T.nanmedian(x, 1), V([[1.0, float("nan"), 2.0], [0.5, 3.0, -1.0]]), gc=False))
add("mode",
    S(lambda T, x: T.mode(x), V([[1.0, 2.0, 2.0, 3.0], [0.5, 0.5, 1.5, 0.5]]), gc=False),
    S(lambda T, x: T.mode(x, 0, keepdim=True), V([[1.0, 2.0], [2.0, 2.0], [1.0, 0.5]]), gc=False),
    S(lambda T, x: T.mode(x), X(3, 4)),
    S(lambda T, x: x.mode(0), X()))
add("cumsum",
    S(lambda T, x: T.cumsum(x, 1), X(3, 4)),
    S(lambda T, x: T.cumsum(x, 0), X(3, 4, layout="t")),
    S(lambda T, x: x.cumsum(0), X()),
    S(lambda T, x: T.cumsum(x, 1, dtype=T.float64), X(2, 3, dtype="float32"), gc=False, tol=F32))
add("cumprod",
    S(lambda T, x: T.cumprod(x, 1), X(3, 4)),
    S(lambda T, x: T.cumprod(x, 0), X(3, 4, layout="t")),
    S(lambda T, x: x.cumprod(-1), X(2, 3, layout="s")),
    S(lambda T, x: T.cumprod(x, 1), V([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 2.0], [2.0, 3.0, 0.5, 0.0]])),
    S(lambda T, x: x.cumprod(0), X()),
    S(lambda T, x: T.cumprod(x, 1, dtype=T.float64), X(2, 3, dtype="float32"), gc=False, tol=F32))
add("logcumsumexp",
    S(lambda T, x: T.logcumsumexp(x, 1), X(3, 4)),
    S(lambda T, x: T.logcumsumexp(x, 0), X(3, 4, layout="t")),
    S(lambda T, x: x.logcumsumexp(0), X()))
for _n in ("cummax", "cummin"):
    add(_n,
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), X(3, 4)),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 0), X(3, 4, layout="t")),
        S(lambda T, x, _n=_n: getattr(x, _n)(0), X()),
        S(lambda T, x, _n=_n: getattr(T, _n)(x, 1), V(SORTED_TIES), gc=False))


# in-place variants: the recorder saves the value before the op (formulas that read `input`)
for _e in TABLE:
    if "I" in _e["variants"] and _e["id"] in DIFFERENTIABLE and _e["kind"] in ("unary", "binary"):
        _n = _e["name"]
        if _e["kind"] == "unary":
            _d = UNARY_DOMAIN.get(_n, {})
            add(_e["id"], S(lambda T, x, _n=_n: getattr(x * 1, _n + "_")(), X(3, 4, layout="t", **_d)))
        elif _e["id"] in SPECIAL_SECOND_ONLY:  # igamma_, igammac_: `self` is the argument without a derivative
            _di, _do = SPECIAL_SECOND_ONLY[_e["id"]][1:]
            add(_e["id"], S(lambda T, a, b, _n=_n: getattr(a * 1, _n + "_")(b), X(3, 4, grad=False, **_di),
                            X(4, **_do)))
        else:
            _di, _do = BINARY_DOMAIN.get(_n, ({}, {}))
            add(_e["id"], S(lambda T, a, b, _n=_n: getattr(a * 1, _n + "_")(b), X(3, 4, **_di), X(4, **_do)))
            if "Tensor|Scalar other" in _e["schema"]:
                add(_e["id"], S(lambda T, a, _n=_n: getattr(a * 1, _n + "_")(1.5), X(2, 3, **_di)))


def _ip(name, *args, **kw):
    """(x * 1).name_(*args(T), *tensors, **kw): the in-place form on a non-leaf."""
    return lambda T, x, *ts: getattr(x * 1, name + "_")(*[a(T) if callable(a) else a for a in args], *ts, **kw)


add("div_mode", S(_ip("div", rounding_mode="floor"), X(3, 4), X(4, **NZ)))
add("float_power", S(_ip("float_power"), X(3, 4, **POS), X(4)))
add("clamp", S(_ip("clamp", -0.5, 0.5), X(3, 4, layout="t")))
add("clip", S(_ip("clip", max=0.5), X(3, 4)))
add("lerp", S(_ip("lerp"), X(3, 4), X(4), X(3, 1)))
add("addcmul", S(_ip("addcmul", value=0.5), X(3, 4), X(4), X(3, 1)))
add("addcdiv", S(_ip("addcdiv", value=-2), X(3, 4), X(4), X(3, 1, **NZ)))
add("nan_to_num", S(_ip("nan_to_num", posinf=1.0), V([float("inf"), 1.5, float("nan")]), gc=False))
add("round", S(_ip("round", decimals=1), X(3, 4)))
add("logit", S(_ip("logit", 0.1), X(3, 4, **PROB)))
add("square", S(_ip("square"), X(3, 4, layout="s")))
add("fill_tensor_", S(lambda T, x, v: (x * 1).fill_(v), X(3, 4, layout="t"), X()))
# In-place shape ops (t_, transpose_, squeeze_, ...): the input edge keeps the shape before the op.
_xv = {}
add("squeeze", S(_ip("squeeze", 1), X(3, 1, 4), **_xv))
add("unsqueeze", S(_ip("unsqueeze", 0), X(3, 4), **_xv))
for _n in ("transpose", "swapaxes", "swapdims"):
    add(_n, S(_ip(_n, 0, 1), X(3, 4), **_xv))
add("t", S(_ip("t"), X(3, 4), **_xv))
add("addmm", S(_ip("addmm", beta=0.5), X(3, 2), X(3, 4), X(4, 2)))
add("addmv", S(_ip("addmv", alpha=2), X(3), X(3, 4), X(4)))
add("baddbmm", S(_ip("baddbmm"), X(2, 3, 2), X(2, 3, 4), X(2, 4, 2)))
add("scatter_src", S(_ip("scatter", 1, lambda T: T.tensor(SIDX)), X(3, 4), X(3, 2)))
add("scatter_value", S(_ip("scatter", 1, lambda T: T.tensor(SIDX), 2.0), X(3, 4)))
add("scatter_add", S(_ip("scatter_add", 1, lambda T: T.tensor(GIDX)), X(3, 4), X(3, 3)))
add("scatter_reduce",
    S(lambda T, x, s: (x * 1).scatter_reduce_(1, T.tensor(GIDX), s, "mean", include_self=False), X(3, 4), X(3, 3)))
add("index_add", S(_ip("index_add", 1, lambda T: T.tensor(IDX)), X(3, 4), X(3, 3)))
add("index_copy", S(_ip("index_copy", 0, lambda T: T.tensor([2, 0])), X(3, 4), X(2, 4)))
add("index_fill", S(_ip("index_fill", 1, lambda T: T.tensor(IDX)), X(3, 4), X()))
add("masked_fill", S(_ip("masked_fill", M), X(3, 4), X()))
add("masked_scatter", S(_ip("masked_scatter", M), X(3, 4), X(8)))
add("put", S(_ip("put", lambda T: T.tensor([1, 7, 4])), X(3, 4), X(3)))
add("index_put", S(_ip("index_put", lambda T: (T.tensor([0, 2]),), accumulate=True), X(3, 4), X(4)))
for _n in ("tril", "triu"):
    add(_n, S(_ip(_n, 1), X(3, 4)))
add("cumsum", S(_ip("cumsum", 1), X(3, 4)))
add("cumprod", S(_ip("cumprod", 0), X(3, 4)))


# ---- normalization, embedding, cross entropy (ops_norm.def) -------------------------------------
# The fused backward ops are reached as torch reaches them: through its aten ops, or through the
# double-differentiable torch.autograd.grad of the composite torch uses on CPU (rms_norm, cross_entropy).
def _aten(T, name):
    if T is pyctorch:
        return getattr(pyctorch, name, None) or getattr(pyctorch._C, name)
    return getattr(torch.ops.aten, name)


def _tgrad(T, f, xs, g):
    """torch.autograd.grad(f(*xs), xs, g, create_graph=True), with inputs that do not require grad
    made leaves that do (the `needs`-mask runs), so the result still depends on g."""
    xs = [x if x.requires_grad else x.detach().requires_grad_() for x in xs]
    return T.autograd.grad(f(*xs), xs, g, create_graph=True)


# torch's double-backward formulas of layer norm and batch norm read the saved statistics as constants,
# so torch's third derivatives miss their dependence on the input (pyctorch's pass gradgradcheck)
STATS_CONST_IN_TORCH = "torch's third derivative treats the saved mean/rstd as constants"
EIDX = [[0, 2, 2], [4, 1, 2]]
CE_T = [1, 0, -100, 3]
add("native_layer_norm",
    S(lambda T, x, w, b: T.native_layer_norm(x, [4], w, b, 1e-5)[0], X(3, 4), X(4), X(4)),
    S(lambda T, x: T.native_layer_norm(x, [3, 4], None, None, 1e-5)[0], X(2, 3, 4, layout="t")),
    S(lambda T, x, w: T.nn.functional.layer_norm(x, (4,), w), X(2, 3, 4, layout="s"), X(4)))
add("native_layer_norm_backward",
    S(lambda T, g, x, w: _aten(T, "native_layer_norm_backward")(
        g, x, [4], *T.native_layer_norm(x, [4], w, None, 1e-5)[1:], w, None, [True, True, False])[:2],
      X(3, 4), X(3, 4), X(4), xfail={"gradgrad": STATS_CONST_IN_TORCH}))
add("fused_rms_norm",
    S(lambda T, x, w: pyctorch._C._fused_rms_norm(x, [4], w, 1e-3)[0], X(3, 4), X(4),
      tfn=lambda T, x, w: T.nn.functional.rms_norm(x, (4,), w, 1e-3)),
    S(lambda T, x: pyctorch._C._fused_rms_norm(x, [3, 4], None, None)[0], X(2, 3, 4, layout="t"),
      tfn=lambda T, x: T.nn.functional.rms_norm(x, (3, 4))))
add("fused_rms_norm_backward",
    S(lambda T, g, x, w: pyctorch._C._fused_rms_norm_backward(
        g, x, [4], pyctorch._C._fused_rms_norm(x, [4], w, 1e-3)[1], w, [True, True]), X(3, 4), X(3, 4), X(4),
      tfn=lambda T, g, x, w: _tgrad(T, lambda x, w: T.nn.functional.rms_norm(x, (4,), w, 1e-3), (x, w), g)))
add("native_group_norm",
    S(lambda T, x, w, b: T.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5)[0], X(2, 4, 3), X(4), X(4)),
    S(lambda T, x: T.nn.functional.group_norm(x, 1), X(3, 2, 4, layout="t")))
add("native_group_norm_backward",
    S(lambda T, g, x, w: _aten(T, "native_group_norm_backward")(
        g, x, *T.native_group_norm(x, w, None, 2, 4, 3, 2, 1e-5)[1:], w, 2, 4, 3, 2, [True, True, True])[:2],
      X(2, 4, 3), X(2, 4, 3), X(4)))
add("native_batch_norm",
    S(lambda T, x, w, b: T.native_batch_norm(x, w, b, T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64), True,
                                             0.1, 1e-5)[0], X(4, 3, 2), X(3), X(3)),
    S(lambda T, x, w, b: T.native_batch_norm(x, w, b, T.tensor([0.5, -1.0, 0.0], dtype=T.float64),
                                             T.tensor([1.5, 0.5, 2.0], dtype=T.float64), False, 0.1, 1e-5)[0],
      X(4, 3, layout="t"), X(3), X(3)),
    S(lambda T, x: T.nn.functional.batch_norm(x, None, None, training=True), X(2, 3, 4, layout="s")))
add("native_batch_norm_backward",
    S(lambda T, g, x, w: _aten(T, "native_batch_norm_backward")(
        g, x, w, None, None, *T.native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5)[1:], True, 1e-5,
        [True, True, True]), X(4, 3, 2), X(4, 3, 2), X(3), xfail={"gradgrad": STATS_CONST_IN_TORCH}),
    S(lambda T, g, x, w: _aten(T, "native_batch_norm_backward")(
        g, x, w, T.tensor([0.5, -1.0, 0.0], dtype=T.float64), T.tensor([1.5, 0.5, 2.0], dtype=T.float64), None, None,
        False, 1e-5, [True, True, True]), X(4, 3), X(4, 3), X(3)))
add("embedding",
    S(lambda T, w: T.embedding(w, T.tensor(EIDX)), X(5, 3)),
    S(lambda T, w: T.nn.functional.embedding(T.tensor([3, 3, 0]), w, scale_grad_by_freq=True), X(4, 2, layout="t"),
      gc=False, gg=False),  # scaled by frequency: not the derivative
    S(lambda T, w: T.nn.functional.embedding(T.tensor(EIDX), w, padding_idx=2), X(5, 3), gc=False, gg=False))
add("embedding_dense_backward",
    S(lambda T, g: _aten(T, "embedding_dense_backward")(g, T.tensor(EIDX), 5, -1, False), X(2, 3, 3)),
    S(lambda T, g: _aten(T, "embedding_dense_backward")(g, T.tensor(EIDX), 5, 2, False), X(2, 3, 3)))
add("cross_entropy_loss",
    S(lambda T, x: pyctorch._C._cross_entropy_loss(x, T.tensor(CE_T), None, 1, -100, 0.0)[0], X(4, 5),
      tfn=lambda T, x: T.nn.functional.cross_entropy(x, T.tensor(CE_T))),
    S(lambda T, x, w: T.nn.functional.cross_entropy(x, T.tensor(CE_T), weight=w, reduction="none",
                                                    label_smoothing=0.2), X(4, 5, layout="t"), X(5, grad=False, **POS)),
    S(lambda T, x: T.nn.functional.cross_entropy(x, T.tensor([[0, 2], [1, 1]]), reduction="sum", ignore_index=1),
      X(2, 3, 2)))
add("cross_entropy_loss_backward",
    S(lambda T, g, x: pyctorch._C._cross_entropy_loss_backward(
        g, x, T.tensor(CE_T), None, 1, -100, 0.1, pyctorch._C._cross_entropy_loss(x, T.tensor(CE_T), None, 1, -100,
                                                                                   0.1)[1]), X(), X(4, 5),
      tfn=lambda T, g, x: _tgrad(T, lambda x: T.nn.functional.cross_entropy(x, T.tensor(CE_T), label_smoothing=0.1),
                                 (x,), g)))
# pooling, padding and resampling (csrc/aten/ops_pool.def): windows with ties and padding, ceil_mode,
# non-contiguous and unbatched inputs; the backward ops directly (torch's through torch.ops.aten)
def _nn(T, name):
    return getattr(T if not name.startswith("_") else T._C, name) if T is pyctorch else getattr(T._C._nn, name)


def _aten(T, name):
    return getattr(T if not name.startswith("_") else T._C, name) if T is pyctorch else getattr(T.ops.aten, name)


_TIES = [[[1.0, 3.0, 3.0, 0.5, 3.0, -1.0, 2.0]]]
add("max_pool1d",
    S(lambda T, x: T.max_pool1d(x, 3, 2, 1), X(2, 3, 7)),
    S(lambda T, x: T.max_pool1d(x, 2, ceil_mode=True), X(3, 7, layout="t")),
    S(lambda T, x: T.max_pool1d(x, 3, 1, 1, 2), X(2, 9, layout="s")),
    S(lambda T, x: T.max_pool1d(x, 3, 1, 1), V(_TIES), gc=False))
add("max_pool1d_with_indices",
    S(lambda T, x: T.max_pool1d_with_indices(x, 3, 2, 1), X(2, 3, 7)),
    S(lambda T, x: T.max_pool1d_with_indices(x, 2, ceil_mode=True), X(3, 7, layout="s")),
    S(lambda T, x: T.max_pool1d_with_indices(x, 3, 1, 1), V(_TIES), gc=False))
add("max_pool2d",
    S(lambda T, x: T.max_pool2d(x, 3, 2, 1), X(2, 2, 7, 8)),
    S(lambda T, x: T.max_pool2d(x, (2, 3), (1, 2), (1, 0), (2, 1), True), X(3, 6, 7, layout="t")),
    S(lambda T, x: T.max_pool2d(x, 2), X(2, 5, 8, layout="s")),
    S(lambda T, x: T.max_pool2d(x, 2, 1), V([[[1.0, 2.0, 2.0], [2.0, 2.0, 0.0], [1.0, 2.0, 2.0]]]), gc=False))
add("max_pool2d_with_indices",
    S(lambda T, x: _nn(T, "max_pool2d_with_indices")(x, 3, 2, 1), X(2, 2, 7, 8)),
    S(lambda T, x: _nn(T, "max_pool2d_with_indices")(x, 2, 2, 1, 1, True), X(3, 5, 6, layout="t")),
    S(lambda T, x: _nn(T, "max_pool2d_with_indices")(x, 2, 1), V([[[1.0, 2.0, 2.0], [2.0, 2.0, 0.0]]]), gc=False))
add("max_pool2d_with_indices_backward",
    S(lambda T, g, x: _aten(T, "max_pool2d_with_indices_backward")(
        g, x, [3, 3], [2, 2], [1, 1], [1, 1], False, _nn(T, "max_pool2d_with_indices")(x, 3, 2, 1)[1]),
      X(2, 3, 4, 4), X(2, 3, 7, 8, grad=False)),
    S(lambda T, g, x: _aten(T, "max_pool2d_with_indices_backward")(
        g, x, [2, 2], [1, 1], [0, 0], [1, 1], True, _nn(T, "max_pool2d_with_indices")(x, 2, 1, 0, 1, True)[1]),
      X(3, 4, 4, layout="t"), X(3, 5, 5, grad=False)))
add("avg_pool1d",
    S(lambda T, x: T.avg_pool1d(x, 3, 2, 1), X(2, 3, 7)),
    S(lambda T, x: T.avg_pool1d(x, 3, 2, 1, True, False), X(3, 8, layout="t")),
    S(lambda T, x: T.avg_pool1d(x, 2), X(2, 7, layout="s")))
add("avg_pool2d",
    S(lambda T, x: _nn(T, "avg_pool2d")(x, 3, 2, 1), X(2, 2, 7, 8)),
    S(lambda T, x: _nn(T, "avg_pool2d")(x, (2, 3), 2, (1, 1), True, False), X(3, 6, 7, layout="t")),
    S(lambda T, x: _nn(T, "avg_pool2d")(x, 2, 1, 1, False, True, 3), X(2, 5, 8, layout="s")))
add("avg_pool2d_backward",
    S(lambda T, g, x: _aten(T, "avg_pool2d_backward")(g, x, [3, 3], [2, 2], [1, 1], False, True, None),
      X(2, 3, 4, 4), X(2, 3, 7, 8, grad=False)),
    S(lambda T, g, x: _aten(T, "avg_pool2d_backward")(g, x, [2, 2], [2, 2], [1, 1], True, False, 3),
      X(3, 3, 4, layout="t"), X(3, 5, 6, grad=False)))
add("adaptive_avg_pool1d",
    S(lambda T, x: T.adaptive_avg_pool1d(x, 3), X(2, 3, 7)),
    S(lambda T, x: T.adaptive_avg_pool1d(x, 5), X(3, 4, layout="t")))
add("adaptive_avg_pool2d",
    S(lambda T, x: _nn(T, "adaptive_avg_pool2d")(x, (3, 2)), X(2, 2, 7, 5)),
    S(lambda T, x: _nn(T, "adaptive_avg_pool2d")(x, 4), X(3, 3, 5, layout="t")),
    S(lambda T, x: _nn(T, "adaptive_avg_pool2d")(x, 1), X(2, 4, 6, layout="s")))
add("adaptive_avg_pool2d_backward",
    S(lambda T, g, x: _aten(T, "_adaptive_avg_pool2d_backward")(g, x), X(2, 3, 3, 2), X(2, 3, 7, 5, grad=False)),
    S(lambda T, g, x: _aten(T, "_adaptive_avg_pool2d_backward")(g, x), X(3, 4, 4, layout="t"), X(3, 3, 3, grad=False)))
add("adaptive_max_pool1d",
    S(lambda T, x: T.adaptive_max_pool1d(x, 3), X(2, 3, 7)),
    S(lambda T, x: T.adaptive_max_pool1d(x, 2), V(_TIES), gc=False))
add("adaptive_max_pool2d",
    S(lambda T, x: _nn(T, "adaptive_max_pool2d")(x, (3, 2)), X(2, 2, 7, 5)),
    S(lambda T, x: _nn(T, "adaptive_max_pool2d")(x, 4), X(3, 3, 5, layout="t")))
add("adaptive_max_pool2d_backward",
    S(lambda T, g, x: _aten(T, "adaptive_max_pool2d_backward")(g, x, _nn(T, "adaptive_max_pool2d")(x, (3, 2))[1]),
      X(2, 3, 3, 2), X(2, 3, 7, 5, grad=False)))
# 3-d pooling, grid sampling, embedding bag, CTC (csrc/aten/ops_nn_extra.def; more in tests/nn/test_pool3d.py,
# test_grid_sample.py, test_embedding_bag.py, test_ctc_loss.py). torch has no double backward for _embedding_bag and
# _ctc_loss (gg=False); grid sampling's comes from a composite (Note [Grid sampler double backward]).
add("max_pool3d_with_indices",
    S(lambda T, x: _nn(T, "max_pool3d_with_indices")(x, 2, 1, 1), X(2, 2, 4, 3, 4)),
    S(lambda T, x: _nn(T, "max_pool3d_with_indices")(x, (2, 3, 2), 2, 0, (1, 1, 2), True), X(2, 5, 6, 5, layout="t")))
add("max_pool3d_with_indices_backward",
    S(lambda T, g, x: _aten(T, "max_pool3d_with_indices_backward")(
        g, x, [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], False, _nn(T, "max_pool3d_with_indices")(x, 2, 1, 1)[1]),
      X(2, 2, 5, 4, 5), X(2, 2, 4, 3, 4, grad=False)))
add("avg_pool3d",
    S(lambda T, x: _nn(T, "avg_pool3d")(x, 3, 2, 1), X(2, 2, 5, 4, 6)),
    S(lambda T, x: _nn(T, "avg_pool3d")(x, (2, 3, 2), 1, (1, 0, 1), True, False, 5), X(2, 4, 5, 4, layout="t")))
add("avg_pool3d_backward",
    S(lambda T, g, x: _aten(T, "avg_pool3d_backward")(g, x, [3, 3, 3], [2, 2, 2], [1, 1, 1], False, True, None),
      X(2, 2, 3, 2, 3), X(2, 2, 5, 4, 6, grad=False)))
add("adaptive_avg_pool3d",
    S(lambda T, x: _nn(T, "adaptive_avg_pool3d")(x, (2, 3, 2)), X(2, 2, 5, 4, 3)),
    S(lambda T, x: _nn(T, "adaptive_avg_pool3d")(x, 2), X(3, 4, 5, 3, layout="s")))
add("adaptive_avg_pool3d_backward",
    S(lambda T, g, x: _aten(T, "_adaptive_avg_pool3d_backward")(g, x), X(2, 2, 2, 3, 2), X(2, 2, 5, 4, 3, grad=False)))
add("adaptive_max_pool3d",
    S(lambda T, x: _nn(T, "adaptive_max_pool3d")(x, (2, 3, 2)), X(2, 2, 5, 4, 3)),
    S(lambda T, x: _nn(T, "adaptive_max_pool3d")(x, 2), X(3, 4, 5, 3, layout="t")))
add("adaptive_max_pool3d_backward",
    S(lambda T, g, x: _aten(T, "adaptive_max_pool3d_backward")(g, x, _nn(T, "adaptive_max_pool3d")(x, (2, 3, 2))[1]),
      X(2, 2, 2, 3, 2), X(2, 2, 5, 4, 3, grad=False)))
for _m in range(3):
    for _p in range(3):
        add("grid_sampler_2d",
            S(lambda T, x, g, _m=_m, _p=_p: T.grid_sampler_2d(x, g, _m, _p, _p == 1), X(2, 2, 4, 5),
              X(2, 3, 2, 2, lo=-1.2, hi=1.2)),
            S(lambda T, x, g, _m=_m, _p=_p: T.grid_sampler_2d(x, g, _m, _p, _p != 1), X(1, 2, 3, 4, layout="t"),
              X(1, 2, 3, 2, lo=-1.2, hi=1.2, grad=False)))
        if _m < 2:
            add("grid_sampler_3d",
                S(lambda T, x, g, _m=_m, _p=_p: T.grid_sampler_3d(x, g, _m, _p, _p == 1), X(1, 2, 3, 4, 3),
                  X(1, 2, 2, 3, 3, lo=-1.2, hi=1.2)),
                S(lambda T, x, g, _m=_m, _p=_p: T.grid_sampler_3d(x, g, _m, _p, _p != 1), X(1, 2, 3, 2, 4),
                  X(1, 3, 2, 2, 3, lo=-1.2, hi=1.2, grad=False)))
for _nd in (2, 3):
    for _m in ((0, 1, 2) if _nd == 2 else (0, 1)):
        add(f"grid_sampler_{_nd}d_backward",
            S(lambda T, go, x, g, _nd=_nd, _m=_m: _aten(T, f"grid_sampler_{_nd}d_backward")(
                go, x, g, _m, 2 - _m, _m == 1, [True, True]),
              X(1, 2, 3, 2) if _nd == 2 else X(1, 2, 2, 3, 2), X(1, 2, 4, 5) if _nd == 2 else X(1, 2, 3, 4, 3),
              X(1, 3, 2, 2, lo=-1.2, hi=1.2) if _nd == 2 else X(1, 2, 3, 2, 3, lo=-1.2, hi=1.2), gg=False))
_EB_IND, _EB_OFF = [1, 2, 4, 5, 4, 3, 2, 9, 2], [0, 4, 4, 6]
for _m in range(3):
    add("embedding_bag",
        S(lambda T, w, _m=_m: _aten(T, "_embedding_bag")(w, T.tensor(_EB_IND), T.tensor(_EB_OFF), False, _m, False,
                                                         None, False, 2)[0], X(10, 3), gg=False),
        S(lambda T, w, _m=_m: _aten(T, "_embedding_bag")(w, T.tensor(_EB_IND), T.tensor(_EB_OFF), False, _m, False,
                                                         None, True, -1)[0], X(10, 3, layout="t"), gg=False))
add("embedding_bag",  # scale_grad_by_freq: by design not the derivative (gc=False)
    S(lambda T, w, p: _aten(T, "_embedding_bag")(w, T.tensor(_EB_IND), T.tensor(_EB_OFF), True, 0, False, p, False,
                                                 -1)[0], X(10, 3), X(9), gg=False, gc=False),
    S(lambda T, w, p: _aten(T, "_embedding_bag")(w, T.tensor(_EB_IND), T.tensor(_EB_OFF), False, 0, False, p, True,
                                                 2)[0], X(10, 3), X(9), gg=False))
add("ctc_loss",
    S(lambda T, x: _aten(T, "_ctc_loss")(x.log_softmax(2), T.tensor([[1, 2, 2], [3, 1, 0]]), T.tensor([6, 5]),
                                         T.tensor([3, 2]), 0, False)[0], X(6, 2, 4), gg=False),
    S(lambda T, x: _aten(T, "_ctc_loss")(x.log_softmax(2), T.tensor([1, 2, 4]), T.tensor([4, 3]),
                                         T.tensor([2, 1]), 3, False)[0], X(4, 2, 5), gg=False))
add("constant_pad_nd",
    S(lambda T, x: T.constant_pad_nd(x, [1, 2, 0, 1], 1.5), X(2, 3, 4)),
    S(lambda T, x: T.constant_pad_nd(x, [-1, 2, 1, -1]), X(3, 4, layout="t")),
    S(lambda T, x: T.constant_pad_nd(x, [2, 1]), X(2, 6, layout="s")))
for _m in ("constant", "reflect", "replicate", "circular"):
    add("pad",
        S(lambda T, x, _m=_m: _nn(T, "pad")(x, [2, 1, 1, 2], _m), X(2, 3, 4)),
        S(lambda T, x, _m=_m: _nn(T, "pad")(x, [1, -1], _m), X(2, 3, 4, layout="t")),
        S(lambda T, x, _m=_m: _nn(T, "pad")(x, [1, 2], _m), X(2, 6, layout="s")))


def _pad_backward_torch(T, g, size, pad, mode):
    x = T.zeros(size, dtype=g.dtype, requires_grad=True)
    return T.autograd.grad(T._C._nn.pad(x, pad, mode), x, g, create_graph=True)[0]


for _m in ("constant", "reflect", "replicate", "circular"):
    add("pad_backward",
        S(lambda T, g, _m=_m: T._C._pad_backward(g, [2, 3, 4], [2, 1, 1, 2], _m), X(2, 6, 7),
          tfn=lambda T, g, _m=_m: _pad_backward_torch(T, g, (2, 3, 4), [2, 1, 1, 2], _m)),
        S(lambda T, g, _m=_m: T._C._pad_backward(g, [3, 4], [1, -1], _m), X(3, 4, layout="t"),
          tfn=lambda T, g, _m=_m: _pad_backward_torch(T, g, (3, 4), [1, -1], _m)))
for _n, _o in (("upsample_nearest1d", [7]), ("upsample_nearest_exact1d", [5]), ("upsample_linear1d", [7])):
    _name = "_upsample_nearest_exact1d" if "exact" in _n else _n
    _ac = (False,) if "linear" in _n else ()
    add(_n,
        S(lambda T, x, _name=_name, _o=_o, _ac=_ac: _nn(T, _name)(x, _o, *_ac), X(2, 3, 4)),
        S(lambda T, x, _name=_name, _o=_o, _ac=_ac: _nn(T, _name)(x, _o, *_ac, 1.7), X(2, 3, 4, layout="t")))
    add(_n + "_backward",
        S(lambda T, g, _name=_name, _o=_o, _ac=_ac: _aten(T, _name + "_backward")(g, _o, [2, 3, 4], *_ac),
          X(2, 3, _o[0])),
        S(lambda T, g, _name=_name, _o=_o, _ac=_ac: _aten(T, _name + "_backward")(g, _o, [1, 2, 3], *_ac, 2.5),
          X(1, 2, _o[0], layout="s")))
add("upsample_linear1d", S(lambda T, x: _nn(T, "upsample_linear1d")(x, [9], True), X(2, 3, 4, layout="s")))
for _n in ("upsample_nearest2d", "upsample_nearest_exact2d", "upsample_bilinear2d"):
    _name = "_upsample_nearest_exact2d" if "exact" in _n else _n
    _ac = (False,) if "bilinear" in _n else ()
    add(_n,
        S(lambda T, x, _name=_name, _ac=_ac: _nn(T, _name)(x, [5, 7], *_ac), X(2, 2, 3, 4)),
        S(lambda T, x, _name=_name, _ac=_ac: _nn(T, _name)(x, [4, 3], *_ac, 1.5, 0.9), X(1, 2, 3, 4, layout="t")))
    add(_n + "_backward",
        S(lambda T, g, _name=_name, _ac=_ac: _aten(T, _name + "_backward")(g, [5, 7], [2, 2, 3, 4], *_ac),
          X(2, 2, 5, 7)),
        S(lambda T, g, _name=_name, _ac=_ac: _aten(T, _name + "_backward")(g, [4, 3], [1, 2, 3, 4], *_ac, 1.5, 0.9),
          X(1, 2, 4, 3, layout="t")))
add("upsample_bilinear2d", S(lambda T, x: _nn(T, "upsample_bilinear2d")(x, [6, 5], True), X(1, 2, 3, 4, layout="s")))
# convolution (ops_conv.def): padded, strided + dilated + grouped (non-contiguous input), transposed with
# output_padding, 1-d depthwise; the fused backward called directly (torch: torch.ops.aten); unfold / fold
def _conv_bwd(T):
    return T.convolution_backward if T is pyctorch else T.ops.aten.convolution_backward


add("convolution",
    S(lambda T, x, w, b: T.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
      X(2, 3, 5, 4), X(4, 3, 3, 3), X(4)),
    S(lambda T, x, w: T.convolution(x, w, None, [2, 1], [0, 1], [1, 2], False, [0, 0], 2),
      X(2, 4, 6, 5, layout="t"), X(6, 2, 2, 3)),
    S(lambda T, x, w, b: T.convolution(x, w, b, [2, 2], [1, 0], [1, 1], True, [1, 0], 2),
      X(1, 4, 3, 4), X(4, 2, 3, 2), X(4)),
    S(lambda T, x, w: T.convolution(x, w, None, [1], [1], [1], False, [0], 4), X(2, 4, 7, layout="s"), X(8, 1, 3)))
add("convolution_backward",
    S(lambda T, g, x, w: _conv_bwd(T)(g, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True]),
      X(2, 4, 5, 4), X(2, 3, 5, 4), X(4, 3, 3, 3)),
    # (no output_padding here: torch's own double backward of it raises for a transposed one)
    S(lambda T, g, x, w: _conv_bwd(T)(g, x, w, None, [2, 2], [1, 0], [1, 1], True, [0, 0], 2, [True, True, False]),
      X(1, 4, 5, 8), X(1, 4, 3, 4), X(4, 2, 3, 2)),
    S(lambda T, g, x, w: _conv_bwd(T)(g, x, w, None, [1], [1], [1], False, [0], 4, [False, True, False]),
      X(2, 8, 7), X(2, 4, 7), X(8, 1, 3)))
add("im2col",
    S(lambda T, x: T.nn.functional.unfold(x, (2, 3), 1, (1, 0), (1, 2)), X(2, 3, 4, 5)),
    S(lambda T, x: T.nn.functional.unfold(x, 2, 2, 1, 1), X(2, 4, 5, layout="t")))
add("col2im",
    S(lambda T, x: T.nn.functional.fold(x, (4, 5), (2, 3), 1, (1, 0), (1, 2)), X(2, 18, 10)),
    S(lambda T, x: T.nn.functional.fold(x, (3, 4), 2, 1, 0, 1), X(8, 6, layout="s")))


# ---- non-differentiable and formula-less ops --------------------------------------------------

NO_FLOAT_OUT = "no floating-point output"
RANDOM = "a random sampler (the sample does not depend differentiably on the input)"
NO_GRAD_LIKE_TORCH = "the output does not require grad in torch either"
TORCH_NOT_IMPLEMENTED = "torch records the op but its backward raises 'not implemented'"
NONDIFF = {  # op id -> (reason, a call on a float64 tensor x that requires grad, or None)
    **{n: (NO_FLOAT_OUT, (lambda n: lambda T, x: getattr(T, n)(x))(n))
       for n in ("logical_not", "isnan", "isinf", "isfinite", "signbit", "argmax", "argmin", "all", "any",
                 "count_nonzero", "nonzero", "argwhere", "argsort")},
    **{n: (NO_FLOAT_OUT, (lambda n: lambda T, x: getattr(T, n)(x, x * 2))(n))
       for n in ("logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge")},
    **{n: (NO_FLOAT_OUT, None) for n in ("bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor",
                                         "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm")},
    "where_cond": (NO_FLOAT_OUT, lambda T, x: T.where(x > 0)),
    "repeat_interleave_idx": (NO_FLOAT_OUT, None),
    "argsort_stable": (NO_FLOAT_OUT, lambda T, x: T.argsort(x, stable=True)),
    "searchsorted": (NO_FLOAT_OUT, lambda T, x: T.searchsorted(T.tensor([0.0, 0.5, 1.0], dtype=T.float64), x)),
    "bucketize": (NO_FLOAT_OUT, lambda T, x: T.bucketize(x, T.tensor([0.0, 0.5], dtype=T.float64))),
    "multinomial": (NO_FLOAT_OUT, lambda T, x: T.multinomial(x.abs() + 0.1, 2, generator=gen(T))),
    "histc": (NO_GRAD_LIKE_TORCH, lambda T, x: T.histc(x, 4)),
    # torch.special's Bessel functions and orthogonal polynomials (ops_special.def) have no derivative in torch
    **{"special_" + n: (NO_GRAD_LIKE_TORCH, (lambda n: lambda T, x: getattr(T.special, n)(x))(n))
       for n in ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                 "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                 "scaled_modified_bessel_k1", "spherical_bessel_j0")},
    **{"special_" + n: (NO_GRAD_LIKE_TORCH, (lambda n: lambda T, x: getattr(T.special, n)(x, 3))(n))
       for n in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                 "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                 "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                 "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")},
    # polygamma's loop, run by its kernels with the order n (the polygamma entries carry the formula)
    "_polygamma_loop": (NO_GRAD_LIKE_TORCH, None),
    "view_dtype": (NO_GRAD_LIKE_TORCH, lambda T, x: x.view(T.int64)),
    "detach": (NO_GRAD_LIKE_TORCH, lambda T, x: T.detach(x)),
    **{n: (NO_GRAD_LIKE_TORCH, (lambda n: lambda T, x: getattr(T, n)(x))(n))
       for n in ("empty_like", "zeros_like", "ones_like")},
    "full_like": (NO_GRAD_LIKE_TORCH, lambda T, x: T.full_like(x, 2.0)),
    **{n: (NO_GRAD_LIKE_TORCH, (lambda n: lambda T, x: getattr(x, n)((2,)))(n))
       for n in ("new_empty", "new_zeros", "new_ones")},
    "new_full": (NO_GRAD_LIKE_TORCH, lambda T, x: x.new_full((2,), 1.0)),
    **{n: (RANDOM, (lambda n: lambda T, x: getattr(T, n)(x, generator=gen(T)))(n))
       for n in ("rand_like", "randn_like")},
    "randint_like": (RANDOM, lambda T, x: T.randint_like(x, 5, generator=gen(T))),
    "randint_like_low": (RANDOM, lambda T, x: T.randint_like(x, 1, 5, generator=gen(T))),
    "bernoulli": (RANDOM, lambda T, x: T.bernoulli(x.abs() / 3, generator=gen(T))),
    "bernoulli_p": (RANDOM, lambda T, x: T.bernoulli(x, 0.5, generator=gen(T))),
    # torch gives these outputs a node whose backward raises; pyctorch does not record them
    "floor_divide": (TORCH_NOT_IMPLEMENTED, lambda T, x: T.floor_divide(x, 0.3)),
    "bincount": (TORCH_NOT_IMPLEMENTED, lambda T, x: T.bincount(T.tensor([0, 1, 1]), x[0])),
    "unique": (TORCH_NOT_IMPLEMENTED, lambda T, x: T.unique(x)),
    # max_norm renormalizes rows in place under no_grad (F.embedding); torch's derivative is not implemented
    "embedding_renorm_": (TORCH_NOT_IMPLEMENTED, None),
    **{n: (TORCH_NOT_IMPLEMENTED, None) for n in ("unique_consecutive", "unique_consecutive_kw",
                                                  "unique_consecutive_p1", "unique_consecutive_p2",
                                                  "unique_consecutive_p3")},
    # fused optimizer steps: in-place updates that return None (tests/test_optim_more.py)
    **{n: (NO_FLOAT_OUT, None) for n in ("fused_adam_", "fused_adamw_", "fused_sgd_", "fused_adagrad_")},
    # gradient scaling steps: in-place updates of gradients / the scale (tests/amp/test_grad_scaler.py)
    **{n: (NO_FLOAT_OUT, None) for n in ("amp_foreach_non_finite_check_and_unscale_", "amp_update_scale_")},
    # torch._linalg_check_errors: raises or returns None
    "linalg_check_errors": (NO_FLOAT_OUT, None),
}
# ops with a Tensor input and a float output but no PCT_GRAD line: backward raises, as in torch
MISSING_LIKE_TORCH = {
    "ctc_loss_backward": lambda T, x: _aten(T, "_ctc_loss_backward")(
        T.ones(1, dtype=T.float64), x.reshape(2, 1, 3).log_softmax(2), T.tensor([[1]]), T.tensor([2]), T.tensor([1]),
        *_aten(T, "_ctc_loss")(x.reshape(2, 1, 3).log_softmax(2).detach(), T.tensor([[1]]), T.tensor([2]),
                               T.tensor([1]), 0, False), 0, False),
    "geqrf": lambda T, x: T.geqrf(x)[0],
    "linalg_ldl_factor_ex": lambda T, x: T.linalg.ldl_factor_ex(x @ x.mT)[0],
    "linalg_ldl_solve": lambda T, x: T.linalg.ldl_solve(*T.linalg.ldl_factor(T.eye(2, dtype=x.dtype) * 2), x[:, :2].mT),
    "scatter_src_reduce": lambda T, x: T.scatter(x * 1, 0, T.tensor([[0, 1, 0]]), x, reduce="add"),
    "scatter_value_reduce": lambda T, x: T.scatter(x * 1, 0, T.tensor([[0, 1, 0]]), 2.0, reduce="multiply"),
}


def _has_tensor_param(e):
    params = e["schema"].split("(", 1)[1]
    return re.search(r"\bTensor(\|Scalar)?(\[\])?\s+(?!out\b)\w+", params.replace("Tensor?", "OptTensor")) is not None


def test_every_float_op_has_a_formula():
    problems = []
    for e in TABLE:
        op = e["id"]
        if not _has_tensor_param(e):  # factories: nothing to differentiate
            assert op not in FORMULAS or FORMULAS[op] == ["non_differentiable"], op
            continue
        f = FORMULAS.get(op)
        if f is None:
            if op not in MISSING_LIKE_TORCH:
                problems.append(f"{op}: no PCT_GRAD line (add its formula, or 'non_differentiable' with a reason here)")
        elif f == ["non_differentiable"]:
            if op not in NONDIFF:
                problems.append(f"{op}: marked non_differentiable without a reason in NONDIFF")
        elif op not in SAMPLES:
            problems.append(f"{op}: differentiable but has no samples in test_autograd_ops.py")
    for op in list(NONDIFF) + list(MISSING_LIKE_TORCH) + list(SAMPLES):
        if op not in BY_ID:
            problems.append(f"{op}: not in the op table any more")
    assert not problems, "\n".join(problems)


def _float_x(T):
    return T.tensor([[0.25, -1.5, 0.75], [2.0, 0.5, -0.125]], dtype=T.float64).requires_grad_()


def _tensors(r):
    if isinstance(r, (tuple, list)):
        return [t for item in r for t in _tensors(item)]
    return [r] if hasattr(r, "dtype") and hasattr(r, "requires_grad") else []


@pytest.mark.parametrize("op", sorted(o for o, (_, fn) in NONDIFF.items() if fn is not None))
def test_non_differentiable_op(op):
    reason, fn = NONDIFF[op]
    outs = _tensors(fn(pyctorch, _float_x(pyctorch)))
    assert outs and not any(o.requires_grad for o in outs)
    if reason == NO_FLOAT_OUT:
        assert not any(o.is_floating_point() for o in outs), f"{op} has a floating-point output"
    if HAVE_TORCH:
        touts = _tensors(fn(torch, _float_x(torch)))
        if reason in (NO_FLOAT_OUT, NO_GRAD_LIKE_TORCH):
            assert not any(o.requires_grad for o in touts), f"{op}: torch's output requires grad"
        elif reason == TORCH_NOT_IMPLEMENTED:
            with pytest.raises(RuntimeError, match="not implemented"):
                sum(o.sum() for o in touts if o.requires_grad).backward()


@pytest.mark.parametrize("op", sorted(MISSING_LIKE_TORCH))
def test_formula_less_op_raises_in_backward(op):
    fn = MISSING_LIKE_TORCH[op]
    libs = [pyctorch] + ([torch] if HAVE_TORCH else [])
    for T in libs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(T, _float_x(T))
        assert out.requires_grad
        with pytest.raises(RuntimeError, match="not implemented"):
            out.sum().backward()


# ---- running a sample ----------------------------------------------------------------------------

def _rng(op, k, salt=0):
    return np.random.default_rng(zlib.crc32(f"{op}/{k}/{salt}".encode()))


def _make(T, arr, spec, requires_grad):
    dt = getattr(T, spec.dtype)
    if spec.layout == "t":
        x = T.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)).tolist(), dtype=dt).transpose(-1, -2)
    elif spec.layout == "s":
        big = np.full(arr.shape[:-1] + (2 * arr.shape[-1],), 99.0)
        big[..., ::2] = arr
        x = T.tensor(big.tolist(), dtype=dt)[..., ::2]
    else:
        x = T.tensor(arr.tolist(), dtype=dt)
    assert (spec.layout == "c") == x.is_contiguous() or arr.size <= 1
    return x.requires_grad_(requires_grad)


def _np(t):
    if HAVE_TORCH and isinstance(t, torch.Tensor) and t._is_zerotensor():  # torch's efficient zeros
        return np.zeros(tuple(t.shape))
    return np.array(t.detach().double().tolist() if t.is_floating_point() else t.tolist(), dtype=np.float64)


def _dname(t):
    return str(t.dtype).split(".")[-1]


def _close(p, t, what, tol):
    rtol, atol = tol
    assert _dname(p) == _dname(t), f"{what}: dtype {_dname(p)} != torch {_dname(t)}"
    assert tuple(p.shape) == tuple(t.shape), f"{what}: shape {tuple(p.shape)} != torch {tuple(t.shape)}"
    np.testing.assert_allclose(_np(p), _np(t), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _leaves(T, sample, arrays, grad_mask=None):
    xs = []
    for i, (spec, arr) in enumerate(zip(sample.inputs, arrays)):
        rg = spec.grad and (grad_mask is None or grad_mask[i])
        xs.append(_make(T, arr, spec, rg))
    return xs


def _run(T, sample, xs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _tensors(sample.call(T, xs))


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


def _arrays(op, k, sample):
    rng = _rng(op, k)
    return [spec.sample(rng) for spec in sample.inputs]


def _grad_outputs(op, k, outs, salt):
    rng = _rng(op, k, salt)
    return [rng.standard_normal(tuple(o.shape)) for o in outs]


def _as(T, arr, like, requires_grad=False):
    return T.tensor(np.asarray(arr).tolist(), dtype=like.dtype).requires_grad_(requires_grad)


def _cases(exclude=()):
    return [pytest.param(op, id=op) for op in DIFFERENTIABLE if op not in exclude]


def _samples(op):
    samples = SAMPLES.get(op)
    if not samples:
        pytest.fail(f"{op} has no samples")
    return list(enumerate(samples))


def _check_first_order(op, k, sample, arrays, grad_mask):
    tol = sample.tol or (1e-6, 1e-8)
    xp, xt = _leaves(pyctorch, sample, arrays, grad_mask), _leaves(torch, sample, arrays, grad_mask)
    op_, ot = _run(pyctorch, sample, xp), _run(torch, sample, xt)
    assert len(op_) == len(ot), f"sample {k}: {len(op_)} outputs != torch {len(ot)}"
    for i, (a, b) in enumerate(zip(op_, ot)):
        _close(a, b, f"sample {k}: output {i}", tol)
        assert a.requires_grad == b.requires_grad, f"sample {k}: output {i} requires_grad {a.requires_grad} != torch"
    if sample.node and grad_mask is None:
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
            _close(a, b, f"sample {k}: grad of input {i}", tol)
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
        arrays = _arrays(op, k, sample)

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
    vs = [_rng(op, k, 2).standard_normal(tuple(x.shape)) for x in xt if x.requires_grad]
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
        a = a if a is not None else pyctorch.zeros(tuple(b.shape), dtype=getattr(pyctorch, _dname(b)))
        b = b if b is not None else torch.zeros(tuple(a.shape), dtype=getattr(torch, _dname(a)))
        _close(a, b, f"sample {k}: second derivative {i} (of the inputs, then the grad_outputs)", tol)


@requires_torch
@pytest.mark.parametrize("op", _cases())
def test_double_backward_vs_torch(op):
    xf = _Xfails("gradgrad")
    for k, sample in _samples(op):
        if sample.skip or not sample.gg:
            continue
        arrays = _arrays(op, k, sample)
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
        xs = _gc_inputs(sample, _arrays(op, k, sample))
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
        xs = _gc_inputs(sample, _arrays(op, k, sample))
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
