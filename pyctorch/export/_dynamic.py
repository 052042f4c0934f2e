"""Dynamic dimensions of torch.export: Dim, the dynamic_shapes argument, and symbolic sizes found by reruns.

Note [Dynamic dims by reruns]
torch traces with symbolic sizes (SymInts) and propagates them through every op's meta function. pyctorch's
capture runs on real tensors (Note [Export capture]), so it finds how each recorded int depends on the dynamic
dims by running the model again with those dims changed: the inputs are tiled or cut along a dynamic dim to
its new size (their data stays valid: token ids stay token ids). With k dynamic dims it runs at the 2**k
corners {b_i, b_i + h_i} (h_i = +1, or -1 where b_i + 1 is above the dim's range) and once more at other
sizes. The runs must record the same ops with the same arguments except for ints: a model whose Python code
takes another path at another size fails here, as torch fails a guard that contradicts a declared range. Each
int (an op's argument, a result's dim) is then fitted by the multilinear polynomial with integer coefficients
through the corners (products like batch * seq appear in reshapes), and the fit must predict the last run,
else export raises (an int such as batch // 2 is not representable here). Ints equal in every run are
constants. The result is exact for sizes that are polynomials of the dims, which covers views, reshapes,
expands, slices and factories sized by the inputs.
"""
import itertools
import math

import pyctorch

__all__ = ["Dim", "SymExpr", "ValueRange", "Symbol", "parse_dynamic_shapes", "plan_runs", "fit_runs"]


class _DimHint:
    """Dim.AUTO / Dim.DYNAMIC / Dim.STATIC."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"_DimHint.{self.kind}"

    def __call__(self, min=None, max=None):
        hint = _DimHint(self.kind)
        hint.min, hint.max = min, max
        return hint


class Dim:
    """torch.export.Dim(name, *, min=None, max=None): a named dynamic dimension and its range."""

    AUTO = _DimHint("AUTO")
    DYNAMIC = _DimHint("DYNAMIC")
    STATIC = _DimHint("STATIC")

    def __init__(self, name, *, min=None, max=None):
        if not isinstance(name, str):
            raise TypeError(f"Dim name must be a string, got {type(name).__name__}")
        lower = 0 if min is None else min
        upper = math.inf if max is None else max
        if upper < lower:
            raise ValueError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if upper <= 2:
            raise ValueError(f"Cannot create Dim with max={max}, max must be >= 3")  # torch's 0/1 specialization
        self.__name__ = name
        self.min, self.max = lower, upper

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min not in (0, 2):
            parts.append(f"min={self.min}")
        if self.max != math.inf:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"

    def _arith(self, *_):
        raise NotImplementedError("pyctorch's torch.export does not support derived dims (Dim arithmetic) yet")

    __add__ = __radd__ = __sub__ = __mul__ = __rmul__ = __floordiv__ = _arith


def dims(*names, min=None, max=None):
    """torch.export.dims: several Dims with the same range."""
    return tuple(Dim(n, min=min, max=max) for n in names)


class ValueRange:
    """The range of a symbol: printed as torch prints its ValueRanges (`VR[2, 64]`, `VR[2, int_oo]`)."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def __repr__(self):
        upper = "int_oo" if self.upper == math.inf else self.upper
        return f"VR[{self.lower}, {upper}]"

    def __eq__(self, other):
        return isinstance(other, ValueRange) and (self.lower, self.upper) == (other.lower, other.upper)


class Symbol:
    """One dynamic dim of an export: its name (s0, s1...), range, the Dim's name and where it is read from."""

    def __init__(self, index, dim_name, lower, upper, user_min, user_max):
        self.index, self.name, self.dim_name = index, f"s{index}", dim_name
        self.lower, self.upper = lower, upper
        self.user_min, self.user_max = user_min, user_max
        self.sources = []   # (input leaf index, dim)
        self.base = None    # the example's size

    @property
    def range(self):
        return ValueRange(self.lower, self.upper)


class SymExpr:
    """An integer polynomial of the symbols, multilinear: {(i, j, ...): coefficient} (() is the constant)."""

    def __init__(self, terms):
        self.terms = {k: v for k, v in terms.items() if v != 0}

    def evaluate(self, values):
        return sum(c * math.prod(values[i] for i in mono) for mono, c in self.terms.items())

    @property
    def symbols(self):
        return sorted({i for mono in self.terms for i in mono})

    def key(self):
        return tuple(sorted(self.terms.items()))

    def __eq__(self, other):
        return isinstance(other, SymExpr) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __str__(self):
        parts = []
        for mono, c in sorted(self.terms.items(), key=lambda kv: (-len(kv[0]), kv[0])):
            if not mono:
                parts.append(str(c))
                continue
            names = "*".join(f"s{i}" for i in mono)
            parts.append(names if c == 1 else (f"-{names}" if c == -1 else f"{c}*{names}"))
        text = " + ".join(parts) if parts else "0"
        return text.replace("+ -", "- ")

    __repr__ = __str__

    def to_json(self):
        return [[list(m), c] for m, c in sorted(self.terms.items())]

    @classmethod
    def from_json(cls, data):
        return cls({tuple(m): c for m, c in data})


def _user_error(msg):
    from pyctorch._dynamo.exc import UserError
    return UserError(msg)


def _signature_names(mod, args, kwargs):
    import inspect
    try:
        sig = inspect.signature(mod.forward)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [f"args_{i}" for i in range(len(args))] + list(kwargs), None
    names = []
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind == inspect.Parameter.VAR_POSITIONAL:
            names += [f"{name}_{i}" for i in range(len(value))]
        elif kind == inspect.Parameter.VAR_KEYWORD:
            names += list(value)
        else:
            names.append(name)
    return names, bound


def input_names(mod, args, kwargs):
    """A placeholder name per flattened input leaf: the forward's parameter names (x, y), with the leaf's path
    for nested inputs (xs_0, d_key)."""
    from pyctorch.utils import _pytree as pytree
    names, _ = _signature_names(mod, args, kwargs)
    top = list(args) + list(kwargs.values())
    out = []
    for name, value in zip(names, top):
        paths, _ = pytree.tree_flatten_with_path(value)
        for path, _leaf in paths:
            suffix = "".join("_" + str(getattr(k, "idx", getattr(k, "key", getattr(k, "name", k)))) for k in path)
            out.append(_identifier(name + suffix))
    return out


def _identifier(text):
    import re
    text = re.sub(r"\W", "_", text)
    return text if text and not text[0].isdigit() else "_" + text


def _dim_specs_of(spec, value, where):
    """{dim: Dim or hint} of one tensor input's spec (a dict, a tuple/list per dim, or None)."""
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return dict(spec)
    if isinstance(spec, (tuple, list)):
        if len(spec) != value.dim():
            raise _user_error(f"Expected dynamic shape spec {spec} at {where} to have the same length as the "
                              f"actual tensor shape {tuple(value.shape)} (expected {value.dim()}, but got {len(spec)})")
        return {d: s for d, s in enumerate(spec) if s is not None}
    raise _user_error(f"Unexpected dynamic_shape {spec!r} of Tensor at {where}, try None instead")


def parse_dynamic_shapes(dynamic_shapes, mod, args, kwargs, leaves):
    """The symbols of an export and, for each flattened input leaf, {dim: symbol index}."""
    per_leaf = [dict() for _ in leaves]
    if dynamic_shapes is None:
        return [], per_leaf
    names, bound = _signature_names(mod, args, kwargs)
    top = list(args) + list(kwargs.values())
    if isinstance(dynamic_shapes, dict):
        unknown = [k for k in dynamic_shapes if k not in names]
        if unknown:
            raise _user_error(f"When `dynamic_shapes` is specified as a dict, its top-level keys must be the arg "
                              f"names {names} of `inputs`, but here they are {list(dynamic_shapes)}.")
        specs = [dynamic_shapes.get(n) for n in names]
    elif isinstance(dynamic_shapes, (tuple, list)):
        specs = list(dynamic_shapes) + [None] * (len(top) - len(dynamic_shapes))
    else:
        raise _user_error(f"dynamic_shapes must be a dict, tuple or list, got {type(dynamic_shapes).__name__}")
    symbols, by_dim, leaf = [], {}, 0

    def walk(spec, value, where):
        nonlocal leaf
        if isinstance(value, pyctorch.Tensor):
            for d, s in _dim_specs_of(spec, value, where).items():
                d = d % value.dim() if -value.dim() <= d < value.dim() else d
                if d >= value.dim():
                    raise _user_error(f"dynamic_shapes at {where} names dim {d} of a {value.dim()}-d tensor")
                if s is None or (isinstance(s, _DimHint) and s.kind == "STATIC"):
                    continue
                if isinstance(s, int):
                    if value.shape[d] != s:
                        raise _user_error(f"Expected input at {where}.shape[{d}] to be equal to {s}, but got "
                                          f"{value.shape[d]}")
                    continue
                if isinstance(s, Dim):
                    key, dim_name, lo, hi = ("dim", s.__name__), s.__name__, s.min, s.max
                    user_min = s.min if s.min != 0 else None
                    user_max = s.max if s.max != math.inf else None
                elif isinstance(s, _DimHint):
                    key, dim_name = ("hint", len(symbols)), None
                    lo = getattr(s, "min", None) or 0
                    hi = getattr(s, "max", None) or math.inf
                    user_min, user_max = getattr(s, "min", None), getattr(s, "max", None)
                else:
                    raise _user_error(f"Unexpected dimension mapped to index {d} in input tensor shape {where}: "
                                      f"{s!r}")
                size = value.shape[d]
                if key not in by_dim:
                    if size < 2:
                        raise _user_error(
                            f"Constraints violated ({dim_name or 'dim'})! The example input's size {size} at "
                            f"{where}.size()[{d}] is specialized: dynamic dims need example sizes of at least 2")
                    sym = Symbol(len(symbols), dim_name, lo, hi, user_min, user_max)
                    sym.base = size
                    symbols.append(sym)
                    by_dim[key] = sym
                sym = by_dim[key]
                if sym.base != size:
                    raise _user_error(f"Constraints violated ({dim_name})! The values of {dim_name} must always be "
                                      f"equal, but the example inputs give {sym.base} and {size} ({where})")
                if not (sym.lower <= size <= sym.upper):
                    raise _user_error(f"Constraints violated ({dim_name})! The example size {size} at "
                                      f"{where}.size()[{d}] is outside the range [{lo}, {hi}]")
                sym.sources.append((leaf, d))
                per_leaf[leaf][d] = sym.index
            leaf += 1
            return
        if isinstance(value, (list, tuple)) and not isinstance(value, pyctorch.Size):
            sub = spec if isinstance(spec, (list, tuple)) else [None] * len(value)
            for i, v in enumerate(value):
                walk(sub[i] if i < len(sub) else None, v, f"{where}[{i}]")
            return
        if isinstance(value, dict):
            sub = spec if isinstance(spec, dict) else {}
            for k, v in value.items():
                walk(sub.get(k), v, f"{where}['{k}']")
            return
        leaf += 1  # a non-tensor leaf

    for name, spec, value in zip(names, specs, top):
        walk(spec, value, name)
    return symbols, per_leaf


def plan_runs(symbols):
    """The symbol values of each run (Note [Dynamic dims by reruns]): the corners, then a check run (or None)."""
    steps = []
    for s in symbols:
        h = 1 if s.base + 1 <= s.upper else -1
        if s.base + h < max(s.lower, 2):
            h = 0  # a range of one value: the dim is static
        steps.append(h)
    corners = []
    for mask in range(2 ** len(symbols)):
        corners.append([s.base + (steps[i] if mask >> i & 1 else 0) for i, s in enumerate(symbols)])
    check = []
    for s, h in zip(symbols, steps):
        for v in (s.base + 2 * h, s.base - 2 * h, s.base + 3, s.base - 1):
            if h and max(s.lower, 2) <= v <= s.upper and v not in (s.base, s.base + h):
                check.append(v)
                break
        else:
            check.append(None)
    if not symbols or any(v is None for v, h in zip(check, steps) if h):
        check = None
    return steps, corners, check


def _fit(values, symbols, steps, check_value, where):
    """The SymExpr (or int) through the corner values; verified against the check run."""
    k = len(symbols)
    if all(v == values[0] for v in values):
        result = values[0]
    else:
        active = [i for i in range(k) if steps[i]]
        d = {}
        for mask in range(2 ** k):
            if any(mask >> i & 1 for i in range(k) if not steps[i]):
                continue
            d[mask] = sum((-1) ** (bin(mask).count("1") - bin(sub).count("1")) * values[sub]
                          for sub in _submasks(mask))
        terms = {}
        for mask, dm in d.items():
            if not dm:
                continue
            members = [i for i in active if mask >> i & 1]
            for r in range(len(members) + 1):
                for chosen in itertools.combinations(members, r):
                    coeff = dm
                    for i in members:
                        coeff *= steps[i]
                        if i not in chosen:
                            coeff *= -symbols[i].base
                    terms[chosen] = terms.get(chosen, 0) + coeff
        result = SymExpr(terms)
        if not result.terms or list(result.terms) == [()]:
            result = result.terms.get((), 0)
    if check_value is not None:
        predicted = result.evaluate(check_value[1]) if isinstance(result, SymExpr) else result
        if predicted != check_value[0]:
            raise _user_error(
                f"torch.export: {where} depends on the dynamic dims in a way pyctorch cannot express (values "
                f"{values + [check_value[0]]} at sizes {check_value[2] + [check_value[1]]}); pyctorch represents "
                "sizes that are polynomials of the dynamic dims (no //, %, min/max of them)")
    return result


def _submasks(mask):
    sub = mask
    while True:
        yield sub
        if sub == 0:
            return
        sub = (sub - 1) & mask


def fit_runs(runs, symbols, steps, corners, check):
    """One TraceRun's records with the ints fitted across the runs (Note [Dynamic dims by reruns]). runs holds
    the corner runs in order, then the check run if there is one. Returns (records, outputs)."""
    from ._trace import Ref
    base = runs[0]
    ncorner = len(corners)
    check_run = runs[ncorner] if check is not None else None

    def mismatch(what):
        return _user_error(
            f"torch.export: the model records different operations at different sizes of its dynamic dims "
            f"({what}). Python code that branches on a dynamic size specializes it; pyctorch's export cannot "
            "capture such a model with that dim dynamic (mark it static, or remove the branch)")

    def unify(values, where):
        first = values[0]
        if isinstance(first, bool) or not isinstance(first, int):
            if isinstance(first, Ref):
                if any(v != first for v in values):
                    raise mismatch(f"{where}: different inputs")
                return first
            if isinstance(first, (list, tuple)):
                if any(not isinstance(v, (list, tuple)) or len(v) != len(first) for v in values):
                    raise mismatch(f"{where}: lists of different lengths")
                return type(first)(unify([v[i] for v in values], f"{where}[{i}]") for i in range(len(first)))
            if isinstance(first, dict):
                return {k: unify([v[k] for v in values], f"{where}.{k}") for k in first}
            if isinstance(first, float) and any(v != first and not (v != v and first != first) for v in values):
                raise _user_error(f"torch.export: {where} is a float that changes with the dynamic dims "
                                  f"({values}); pyctorch's export cannot make it symbolic")
            if not isinstance(first, float) and any(type(v) is not type(first) or v != first for v in values):
                raise mismatch(f"{where}: {values}")
            return first
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise mismatch(f"{where}: {values}")
        corner_values = values[:ncorner]
        chk = None
        if check_run is not None:
            chk = (values[ncorner], check, corners)
        return _fit(corner_values, symbols, steps, chk, where)

    for r in runs[1:]:
        if len(r.records) != len(base.records) or len(r.consts) != len(base.consts):
            raise mismatch(f"{len(base.records)} ops at the example sizes, {len(r.records)} at others")
    for k, c in enumerate(base.consts):
        for r in runs[1:]:
            other = r.consts[k]
            if other.shape != c.shape or other.dtype != c.dtype or not pyctorch.equal(other, c):
                raise _user_error("torch.export: a constant tensor created by the model changes with the dynamic "
                                  "dims; pyctorch's export cannot capture it")
    records = []
    for i, rec in enumerate(base.records):
        others = [r.records[i] for r in runs]
        if any(o.target is not rec.target for o in others):
            raise mismatch(f"op {i}: {[str(o.target) for o in others]}")
        where = f"argument of {rec.target} (op {i})"
        args = unify([o.args for o in others], where)
        kwargs = unify([o.kwargs for o in others], where)
        meta = unify([o.meta for o in others], f"a result size of {rec.target} (op {i})")
        rec.args, rec.kwargs, rec.meta = tuple(args), kwargs, meta
        records.append(rec)
    outputs = unify([r.outputs for r in runs], "the outputs")
    return records, outputs
