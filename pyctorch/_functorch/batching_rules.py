"""vmap's batching rules, by category, from the op table (Note [vmap batching rules] in vmap.py).

`dispatch` is what BatchedTensor.__torch_function__ runs: it takes the highest vmap level among the arguments,
and either answers from the shell (metadata), raises torch's error (data-dependent calls), decomposes (functions
written in Python), applies the op's rule to the physical tensors of that level, or runs the labelled per-sample
fallback. Arguments of lower levels are left wrapped: the calls on the physical tensors unwrap them in turn.
"""
import functools
import types as _types
import warnings

from .. import _C
from .batched import BatchedTensor, wrap, level_info

# ---------------------------------------------------------------- errors torch raises inside vmap

_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
         "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
         "inside PyTorch internals, please file a bug report.")
_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
                 "don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


class DataDependentError(RuntimeError):
    """A call whose result depends on a sample's values (torch's vmap refuses it too)."""


def _dynamic(name):
    return DataDependentError(
        f"vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over "
        f"aten::{name}. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this feature.")


_DATA_DEPENDENT = {
    "item": _ITEM, "tolist": _ITEM, "__float__": _ITEM, "__int__": _ITEM, "__index__": _ITEM, "__complex__": _ITEM,
    "numpy": _ITEM, "__array__": _ITEM, "__bool__": _CONTROL_FLOW, "equal": _CONTROL_FLOW, "allclose": _CONTROL_FLOW,
}
_DYNAMIC = {"nonzero": "nonzero", "argwhere": "argwhere", "unique": "_unique2", "unique_consecutive":
            "unique_consecutive", "bincount": "bincount"}

# ---------------------------------------------------------------- the op table, by name


@functools.lru_cache(None)
def _table():
    """{name: [entry, ...]} with each entry's parameters parsed: [(name, type, has_default, default, kwonly)]."""
    from .._op_overloads import split_params
    import ast
    out = {}
    for e in _C._op_table():
        try:
            _, parts = split_params(e["schema"])
        except Exception:
            continue
        params, kwonly = [], False
        for part in parts:
            if part == "*":
                kwonly = True
                continue
            decl, eq, default = part.partition("=")
            bits = decl.split()
            if len(bits) < 2:
                continue
            value = None
            if eq:
                try:
                    value = ast.literal_eval(default.strip())
                except (ValueError, SyntaxError):
                    value = None
            params.append((bits[-1], bits[0], bool(eq), value, kwonly))
        out.setdefault(e["name"], []).append((e, params))
    return out


def _type_ok(typ, v):
    opt = typ.endswith("?")
    t = typ.rstrip("?")
    if v is None:
        return opt
    if t.startswith("Tensor|") or t.startswith("Scalar|"):
        return True
    if t == "Tensor":
        return isinstance(v, _C.Tensor)
    if t.startswith("Tensor["):
        return isinstance(v, (list, tuple))
    if t.startswith("int["):
        return (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, (list, tuple)) and all(isinstance(i, int) for i in v))
    if t == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "bool":
        return isinstance(v, bool)
    if t == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "Scalar":
        return isinstance(v, (int, float, complex, bool))
    if t == "str":
        return isinstance(v, str)
    return True


def _bind(name, args, kwargs):
    """(params, {param name: ('pos', index) | ('kw', key)}) of the first overload of `name` the call fits."""
    overloads = _table().get(name)
    if overloads is None and name.endswith("_") and not name.endswith("__"):
        overloads = _table().get(name[:-1])  # the in-place variant of an entry
    for entry, params in overloads or ():
        pos = [p for p in params if not p[4]]
        if len(args) > len(pos):
            continue
        where, ok = {}, True
        for i, (p, a) in enumerate(zip(pos, args)):
            if not _type_ok(p[1], a):
                ok = False
                break
            where[p[0]] = ("pos", i)
        if not ok:
            continue
        names = {p[0]: p for p in params}
        for k, v in kwargs.items():
            key = "input" if k == "self" and "input" in names else k
            p = names.get(key)
            if p is None or key in where or not _type_ok(p[1], v):
                ok = False
                break
            where[key] = ("kw", k)
        if ok and all(p[0] in where or p[2] for p in params):
            return entry, params, where
    return None


# ---------------------------------------------------------------- helpers

def _level_of(args, kwargs):
    level = 0
    for v in list(args) + list(kwargs.values()):
        if type(v) is BatchedTensor:
            level = max(level, v._level)
        elif type(v) in (list, tuple):
            for x in v:
                if type(x) is BatchedTensor:
                    level = max(level, x._level)
    return level


def _b(x, level):
    return type(x) is BatchedTensor and x._level == level


def _phys(x, level):
    return x._phys if type(x) is BatchedTensor and x._level == level else x


def _unwrap_all(args, kwargs, level):
    def one(v):
        if type(v) in (list, tuple):
            return type(v)(_phys(x, level) for x in v)
        return _phys(v, level)
    return [one(a) for a in args], {k: one(v) for k, v in kwargs.items()}


def _rebuild(like, items):
    """A tuple or list of like's type (a named result type too: torch.return_types.max, namedtuples)."""
    if type(like) in (tuple, list):
        return type(like)(items)
    if hasattr(type(like), "_fields"):
        return type(like)(*items)
    return type(like)(items)


def _wrap_out(r, level):
    if isinstance(r, _C.Tensor):
        return wrap(r, level)
    if isinstance(r, (tuple, list)):
        return _rebuild(r, [_wrap_out(x, level) for x in r])
    return r


def _pad(phys, ndim, rank):
    """phys (batch dim 0, logical rank ndim) with size-1 dims after the batch dim up to logical rank `rank`."""
    if rank <= ndim:
        return phys
    return phys[(slice(None),) + (None,) * (rank - ndim)]


def _name(func):
    name = getattr(func, "__name__", "")
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        if isinstance(owner, property):
            return "property:" + getattr(owner.fget, "__name__", "")
        return "property:" + getattr(owner, "__name__", "")
    return name


def _is_python_level(func):
    return type(func) is _C._torch_function_wrapper and isinstance(func.__wrapped__, _types.FunctionType)


# ---------------------------------------------------------------- the fallback

_warned = set()
# ops that read storage offsets: per sample, each sample gets a storage of its own (offsets count from its start)
_SAMPLE_STORAGE = {"as_strided_scatter"}
fallback_calls = []  # names of the ops that ran per sample (tests read it; cleared by them)


def _user_stacklevel():
    """The stacklevel of the innermost caller outside pyctorch (the line of the user's function that called the
    op)."""
    import os
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(root):
        frame, level = frame.f_back, level + 1
    return level


def per_sample(func, args, kwargs, level, name):
    """The labelled fallback: func once per sample of `level` on the samples' views, results stacked. In-place ops
    write through the views; random ops honour the level's randomness mode."""
    if _is_inplace(name) and args and not _b(args[0], level):
        raise _inplace_error(name)
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                      f"aten::{name}. Please file us an issue on GitHub so that we can prioritize its "
                      "implementation. (pyctorch runs it once per sample: Note [vmap batching rules])",
                      UserWarning, stacklevel=_user_stacklevel())
    fallback_calls.append(name)
    info = level_info(level)
    if info.size == 0:
        raise RuntimeError(f"vmap: cannot run {name} over a batch of size 0: it has no batching rule and its "
                           "per-sample fallback has no sample to infer the output from")
    same = info.randomness == "same" and name in _RANDOM
    if name in _RANDOM and info.randomness == "error":
        raise RuntimeError(_RANDOM_ERROR)
    import pyctorch
    start = pyctorch.get_rng_state() if same else None

    own = name in _SAMPLE_STORAGE

    def pick(v, b):
        if type(v) in (list, tuple):
            return type(v)(pick(x, b) for x in v)
        if not _b(v, level):
            return v
        return v._phys.select(0, b).clone() if own else v._phys.select(0, b)
    rows, selves = [], []
    for b in range(info.size):
        if same and b:
            pyctorch.set_rng_state(start)
        a = [pick(v, b) for v in args]
        k = {key: pick(v, b) for key, v in kwargs.items()}
        rows.append(func(*a, **k))
        selves.append(a[0] if a else None)
    if all(r is s for r, s in zip(rows, selves)) and args and _b(args[0], level):
        return args[0]  # in place on the batched self
    return _stack_rows(rows, level, name)


def _stack_rows(rows, level, name):
    first = rows[0]
    if isinstance(first, _C.Tensor):
        return wrap(_C.stack(list(rows)), level)
    if isinstance(first, (tuple, list)):
        return _rebuild(first, [_stack_rows([r[i] for r in rows], level, name) for i in range(len(first))])
    if first is None or all(r == first for r in rows):
        return first
    raise DataDependentError(_CONTROL_FLOW)


# ---------------------------------------------------------------- categories

_POINTWISE_EXTRA = {
    "where", "clamp", "clip", "clamp_min", "clamp_max", "addcmul", "addcdiv", "lerp", "nan_to_num", "masked_fill",
    "float_power", "logit", "round", "polygamma", "square", "elu", "gelu", "hardtanh", "leaky_relu", "silu",
    "softplus", "xlogy", "copy_", "fill_", "zero_", "fill", "positive", "true_divide", "mvlgamma", "heaviside",
    "isclose", "nextafter", "ldexp", "isreal", "isposinf", "isneginf", "real", "imag", "conj", "resolve_conj",
    "resolve_neg", "deg2rad", "rad2deg", "sinc", "softsign", "hardsigmoid", "hardswish", "mish", "relu6", "selu",
    "celu", "threshold", "logical_and", "logical_or", "absolute", "negative", "arccos", "arcsin", "arctan", "fix",
    "gelu_backward", "silu_backward", "elu_backward", "softplus_backward", "hardtanh_backward",
    "leaky_relu_backward", "threshold_backward",
}
_DUNDER_POINTWISE = {
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
    "__truediv__", "__rtruediv__", "__itruediv__", "__div__", "__rdiv__", "__idiv__", "__floordiv__",
    "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__", "__ipow__",
    "__and__", "__rand__", "__iand__", "__or__", "__ror__", "__ior__", "__xor__", "__rxor__", "__ixor__",
    "__lshift__", "__rlshift__", "__ilshift__", "__rshift__", "__rrshift__", "__irshift__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__pos__", "__abs__", "__invert__",
}
_DIM_NAMES = {"dim", "dims", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source", "destination", "axis",
              "axis0", "axis1", "dimension"}
# ops whose dim=None reduces every dim
_FULL_REDUCE = {"sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "argmax", "argmin", "std", "var",
                "std_mean", "var_mean", "norm", "linalg_vector_norm", "count_nonzero", "all", "any", "aminmax",
                "max", "min", "median", "nanmedian", "logsumexp"}
# ops whose dim 0 / -1 of a 0-d input is a size-1 dim (the result has the input's rank, or a reduction's)
_ZERO_D_OK = _FULL_REDUCE | {"softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp", "sort", "argsort",
                             "topk", "cummax", "cummin", "kthvalue", "mode", "flip", "squeeze", "_softmax",
                             "_log_softmax"}
# ops with a tensor argument (index, src) of the input's rank: unbatched ones are expanded over the batch
_SAME_RANK = {"gather", "scatter", "scatter_add", "scatter_reduce", "take_along_dim", "scatter_", "scatter_add_",
              "scatter_reduce_"}
# ops with an unbatched auxiliary tensor that leaves the batch alone
_AUX_OK = {"index_select", "index_fill", "index_fill_", "index_add", "index_copy"}
# metadata and value-free calls: answered by the shell (a plain tensor of the logical shape)
_SHELL = {"size", "dim", "ndimension", "numel", "nelement", "element_size", "is_floating_point", "is_complex",
          "is_contiguous", "stride", "storage_offset", "get_device", "is_signed", "new_empty", "new_zeros",
          "new_ones", "new_full", "new_tensor", "new_empty_strided", "__len__", "type", "is_inference",
          "is_pinned", "is_shared", "is_nonzero_dims", "__format__", "has_names", "untyped_storage",
          "data_ptr", "is_conj", "is_neg", "dim_order"}
# ops on the physical tensor as a whole (other tensor arguments are read for their dtype/device only)
_PHYS_SELF = {"to", "float", "double", "half", "bfloat16", "int", "long", "short", "bool", "byte", "char", "cfloat",
              "cdouble", "cpu", "cuda", "contiguous", "clone", "detach", "type_as", "conj_physical", "requires_grad_",
              "detach_", "retain_grad", "zeros_like", "ones_like", "empty_like", "full_like", "alias",
              "native_layer_norm", "pin_memory", "share_memory_", "coalesce", "to_dense"}
_RANDOM = {"rand_like", "randn_like", "randint_like", "bernoulli", "bernoulli_", "normal", "normal_", "uniform_",
           "random_", "exponential_", "geometric_", "log_normal_", "cauchy_", "multinomial", "poisson", "rrelu",
           "rrelu_", "exponential", "uniform", "random", "geometric", "log_normal", "cauchy"}
# spatial ops on [N, C, *spatial] or [C, *spatial]: the full rank; a batched input folds the batch into N
_SPATIAL = {"avg_pool1d": 3, "avg_pool2d": 4, "avg_pool3d": 5, "max_pool1d": 3, "max_pool2d": 4,
            "max_pool1d_with_indices": 3, "max_pool2d_with_indices": 4, "max_pool3d_with_indices": 5,
            "adaptive_avg_pool1d": 3, "adaptive_avg_pool2d": 4, "adaptive_avg_pool3d": 5,
            "adaptive_max_pool1d": 3, "adaptive_max_pool2d": 4, "adaptive_max_pool3d": 5, "upsample_nearest1d": 3,
            "upsample_nearest2d": 4, "upsample_bilinear2d": 4, "upsample_linear1d": 3,
            "_upsample_nearest_exact1d": 3, "_upsample_nearest_exact2d": 4}
# single-tensor ops over the trailing dims that take any leading batch dims: the physical tensor as it is
# (the minimum logical rank each needs; below it, the shell gives torch's error)
_TRAILING = {"tril": 2, "triu": 2, "det": 2, "linalg_det": 2, "slogdet": 2, "linalg_slogdet": 2, "linalg_inv_ex": 2,
             "linalg_cholesky_ex": 2, "cholesky": 2, "linalg_eigh": 2, "linalg_eigvalsh": 2, "linalg_svd": 2,
             "svd": 2, "linalg_svdvals": 2, "linalg_qr": 2, "linalg_eig": 2, "linalg_eigvals": 2,
             "linalg_lu_factor_ex": 2, "view_as_real": 0, "_linalg_check_errors": 0, "view_as_complex": 1,
             "tril_": 2, "triu_": 2}
_SHAPE_CHANGING_INPLACE = {"unsqueeze_", "squeeze_", "transpose_", "t_", "swapdims_", "swapaxes_", "resize_",
                           "resize_as_", "set_"}


@functools.lru_cache(None)
def _pointwise_names():
    names = {e["name"] for e in _C._op_table() if e["kind"] in ("unary", "binary")}
    names |= _POINTWISE_EXTRA
    names |= {n + "_" for n in names}
    return frozenset(names)


def _is_inplace(name):
    return (name.endswith("_") and not name.endswith("__")) or (name.startswith("__i") and name != "__index__"
                                                                 and name != "__invert__" and name != "__iter__")


# ---------------------------------------------------------------- dispatch

def dispatch(func, types, args, kwargs):
    level = _level_of(args, kwargs)
    name = _name(func)
    if name.startswith("property:"):
        return _property(func, name[9:], args[0], level)
    if name in _DATA_DEPENDENT:
        raise DataDependentError(_DATA_DEPENDENT[name])
    if name in _SHELL:
        return _on_shells(func, args, kwargs)
    base = name.strip("_") if name.startswith("__") else name
    if base in _DYNAMIC or (name == "where" and len(args) + len(kwargs) == 1):
        raise _dynamic(_DYNAMIC.get(base, "nonzero"))
    if _is_python_level(func):  # its ops come back here one by one
        try:
            return _C._skip_one_hop_torch_function(func, types, args, kwargs)
        except DataDependentError:  # a validation that reads values: this function as a whole, per sample
            return per_sample(func, args, kwargs, level, name)
    rule = _RULES.get(name)
    if rule is not None:
        return rule(func, types, args, kwargs, level, name)
    if name in _SHAPE_CHANGING_INPLACE:
        return _inplace_view(func, args, kwargs, level, name)
    if name in _RANDOM:
        return _random(func, args, kwargs, level, name)
    if kwargs.get("out") is not None:
        return per_sample(func, args, kwargs, level, name)
    if name in _PHYS_SELF:
        return _phys_self(func, args, kwargs, level, name)
    if name in _DUNDER_POINTWISE or name in _pointwise_names():
        return _pointwise(func, args, kwargs, level, name)
    if name in _SPATIAL:
        return _spatial(func, args, kwargs, level, name, _SPATIAL[name])
    if name in _TRAILING:
        return _trailing(func, args, kwargs, level, name, _TRAILING[name])
    r = _dims(func, args, kwargs, level, name)
    if r is not NotImplemented:
        return r
    return per_sample(func, args, kwargs, level, name)


def has_rule(name):
    """Whether calls of the table op `name` (with batched tensor inputs) have a batching rule."""
    if name in _RULES or name in _PHYS_SELF or name in _pointwise_names() or name in _SPATIAL or name in _RANDOM \
            or name in _TRAILING or name in _SHELL:
        return True
    bound = _table().get(name, ())
    return any(p[0] in _DIM_NAMES and p[1].startswith("int") for _, params in bound for p in params)


def _on_shells(func, args, kwargs):
    def shell(v):
        if type(v) is BatchedTensor:
            with _C.DisableTorchFunctionSubclass():
                return v.view_as(v)
        return v
    a = [shell(v) for v in args]
    k = {key: shell(v) for key, v in kwargs.items()}
    with _C.DisableTorchFunctionSubclass():
        return func(*a, **k)


_PHYS_PROPS = {"requires_grad", "grad_fn", "is_leaf", "_version", "output_nr", "retains_grad", "data", "grad",
               "_base", "real", "imag"}


def _property(func, prop, self, level):
    if prop in ("T", "mT", "H", "mH"):
        n = self.ndim
        if prop in ("T", "H"):
            out = self.permute(*range(n - 1, -1, -1)) if n >= 2 else self.view_as(self) if n else self
        else:
            out = self.transpose(-2, -1)
        return out.conj() if prop in ("H", "mH") and out.is_complex() else out
    if prop in _PHYS_PROPS:
        value = getattr(self._phys, prop)
        if isinstance(value, _C.Tensor) and prop in ("data", "grad", "real", "imag", "_base"):
            return wrap(value, self._level) if prop != "_base" and value.dim() == self._phys.dim() else value
        return value
    with _C.DisableTorchFunctionSubclass():
        return func(self)


def _phys_self(func, args, kwargs, level, name):
    if not _b(args[0], level):
        return per_sample(func, args, kwargs, level, name)

    def meta(v):
        if type(v) is BatchedTensor:  # read for its dtype/device: the shell
            with _C.DisableTorchFunctionSubclass():
                return v.view_as(v)
        return v
    if name == "native_layer_norm":
        if any(_b(v, level) for v in list(args[1:]) + list(kwargs.values())):
            return per_sample(func, args, kwargs, level, name)
        return _wrap_out(func(args[0]._phys, *args[1:], **kwargs), level)
    r = func(args[0]._phys, *[meta(v) for v in args[1:]], **{k: meta(v) for k, v in kwargs.items()})
    if r is args[0]._phys and name.endswith("_"):
        return args[0]
    return _wrap_out(r, level)


_MASKED = {"where", "masked_fill", "masked_fill_"}


def _inplace_error(name):
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
        "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not "
        f"being vmapped over in a vmap. Please try to use out-of-place operators instead of {name}. If said "
        "operator is being called inside the PyTorch framework, please file a bug report instead.")


def _pointwise(func, args, kwargs, level, name):
    tensors = [v for v in list(args) + list(kwargs.values()) if isinstance(v, _C.Tensor)]
    batched = [v for v in tensors if _b(v, level)]
    inplace = _is_inplace(name)
    if inplace and args and not _b(args[0], level):
        raise _inplace_error(name)
    rank = max(v.ndim for v in tensors)
    promoted = [v for v in tensors if not (name in _MASKED and v.dtype == _C.bool)]  # a condition takes no part
    if len({v.dtype for v in promoted}) > 1 and any(v.ndim == 0 for v in batched) and rank > 0:
        # a 0-d logical tensor promotes as a scalar; its physical tensor (1-d) would not
        return per_sample(func, args, kwargs, level, name)

    def conv(v):
        if _b(v, level):
            return _pad(v._phys, v.ndim, rank)
        return v
    r = func(*[conv(v) for v in args], **{k: conv(v) for k, v in kwargs.items()})
    if inplace:
        return args[0]
    return _wrap_out(r, level)


def _random(func, args, kwargs, level, name):
    mode = level_info(level).randomness
    if mode == "error":
        raise RuntimeError(_RANDOM_ERROR)
    self = args[0] if args else None
    if not _b(self, level) or any(_b(v, level) for v in list(args[1:]) + list(kwargs.values())) or \
            name not in ("rand_like", "randn_like", "randint_like") and not _is_inplace(name):
        return per_sample(func, args, kwargs, level, name)
    if mode == "different":  # every element its own draw: the physical tensor in one call
        r = func(self._phys, *args[1:], **kwargs)
        return self if _is_inplace(name) else wrap(r, level)
    # 'same': one draw of the logical shape, shared by the samples
    with _C.DisableTorchFunctionSubclass():
        shell = self.view_as(self)
    if _is_inplace(name):
        draw = func(shell.clone(), *args[1:], **kwargs)
        self._phys.copy_(draw)
        return self
    return func(shell, *args[1:], **kwargs)


def _spatial(func, args, kwargs, level, name, full_rank, first=0):
    x = args[first]
    others = [v for i, v in enumerate(args) if i != first] + list(kwargs.values())
    if not _b(x, level) or any(_b(v, level) for v in others if not isinstance(v, (list, tuple))):
        return per_sample(func, args, kwargs, level, name)
    phys, B = x._phys, level_info(level).size
    a = list(args)
    if x.ndim == full_rank:
        n = x.shape[0]
        a[first] = phys.flatten(0, 1)
        r = func(*a, **kwargs)
        unfold = (lambda t: t.unflatten(0, (B, n)))
    elif x.ndim == full_rank - 1:
        a[first] = phys
        r = func(*a, **kwargs)
        unfold = (lambda t: t)
    else:
        return per_sample(func, args, kwargs, level, name)
    if isinstance(r, (tuple, list)):
        return _wrap_out(_rebuild(r, [unfold(t) if isinstance(t, _C.Tensor) else t for t in r]), level)
    return wrap(unfold(r), level)


def _trailing(func, args, kwargs, level, name, min_rank):
    x = args[0] if args else None
    if not _b(x, level) or any(_b(v, level) for v in list(args[1:]) + list(kwargs.values())):
        return per_sample(func, args, kwargs, level, name)
    if x.ndim < min_rank:
        return _on_shells(func, args, kwargs)  # torch's error for the logical shape
    r = func(x._phys, *args[1:], **kwargs)
    return x if r is x._phys else _wrap_out(r, level)


def _pad_rule(func, types, args, kwargs, level, name):
    """constant_pad_nd / pad in constant mode pad the last dims: the physical tensor as it is."""
    x = args[0]
    pad = args[1] if len(args) > 1 else kwargs.get("pad")
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
    if not _b(x, level) or mode != "constant" or len(pad) > 2 * x.ndim or \
            any(_b(v, level) for v in list(args[1:]) + list(kwargs.values())):
        return per_sample(func, args, kwargs, level, name)
    return wrap(func(x._phys, *args[1:], **kwargs), level)


def _flip_lr_ud(func, types, args, kwargs, level, name):
    """fliplr / flipud / msort: flip or sort along a fixed logical dim."""
    x = args[0]
    need = 2 if name == "fliplr" else 1
    if kwargs or len(args) != 1 or x.ndim < need:
        return _on_shells(func, args, kwargs)  # torch's error for the logical shape
    if name == "msort":
        return x.sort(0).values
    return x.flip(1 if name == "fliplr" else 0)


def _trace(func, types, args, kwargs, level, name):
    x = args[0]
    if x.ndim != 2 or kwargs:
        return _on_shells(func, args, kwargs)
    return x.diagonal(0, 0, 1).sum(-1)


def _dims(func, args, kwargs, level, name):
    """Ops with dim arguments over one batched tensor input: the logical dims shifted past the batch dim."""
    bound = _bind(name, args, kwargs)
    if bound is None:
        return NotImplemented
    entry, params, where = bound

    def get(pname):
        kind, key = where[pname]
        return args[key] if kind == "pos" else kwargs[key]
    dim_params = [p for p in params if p[0] in _DIM_NAMES and p[1].startswith("int")]
    tensor_params = [p for p in params if p[1].startswith("Tensor") and p[0] in where and p[0] != "out"
                     and isinstance(get(p[0]), _C.Tensor)]
    if not tensor_params:
        return NotImplemented
    first = tensor_params[0]
    x = get(first[0])
    others = [get(p[0]) for p in tensor_params[1:]]
    same_rank = name in _SAME_RANK
    if any(isinstance(v, (list, tuple)) and any(_b(t, level) for t in v) for v in list(args) + list(kwargs.values())):
        return NotImplemented  # batched tensors in a list argument: not this rule's
    if _is_inplace(name) and not _b(x, level):
        raise _inplace_error(name)
    if not same_rank and (not _b(x, level) or (others and (name not in _AUX_OK or any(_b(o, level)
                                                                                       for o in others)))):
        return NotImplemented
    if not dim_params:
        return NotImplemented
    ndim = x.ndim
    a, k = list(args), dict(kwargs)

    def put(pname, value):
        if pname in where:
            kind, key = where[pname]
            if kind == "pos":
                a[key] = value
            else:
                k[key] = value
        else:
            k[pname] = value
    full = zero_d = False
    for p in dim_params:
        value = get(p[0]) if p[0] in where else p[3]
        if value is None:
            if name in _FULL_REDUCE and not any(isinstance(a_, str) for a_ in list(args) + list(kwargs.values())):
                full = True
                continue
            if name == "squeeze":
                put(p[0], tuple(i + 1 for i, s in enumerate(x.shape) if s == 1))
                continue
            return NotImplemented
        if ndim == 0 and name != "unsqueeze":
            if name not in _ZERO_D_OK:
                return NotImplemented
            zero_d = True  # a 0-d input's dim 0 / -1: a size-1 dim after the batch dim stands for it
            put(p[0], type(value)(1 for d in value) if isinstance(value, (list, tuple)) else 1)
            continue
        shift = (lambda d: d + 1 if d >= 0 else d)
        if isinstance(value, (list, tuple)):
            put(p[0], type(value)(shift(d) for d in value))
        else:
            put(p[0], shift(value))
    B = level_info(level).size
    if full:
        flat = x._phys.reshape(B, x.numel())
        keep = get("keepdim") if "keepdim" in where else False
        xi = where[first[0]]
        if xi[0] == "pos":
            a[xi[1]] = flat
        else:
            k[xi[1]] = flat
        for p in dim_params:
            put(p[0], 1)
        r = func(*a, **k)

        def shape(t):
            return t.reshape((B,) + (1,) * ndim) if keep and isinstance(t, _C.Tensor) else t
        if isinstance(r, (tuple, list)):
            r = _rebuild(r, [shape(t) for t in r])
        else:
            r = shape(r)
        return _wrap_out(r, level)
    for p in tensor_params:
        v = get(p[0])
        if _b(v, level):
            put(p[0], v._phys.unsqueeze(-1) if zero_d and v is x else v._phys)
        elif same_rank:
            put(p[0], v.unsqueeze(0).expand((B,) + tuple(v.shape)))
    r = func(*a, **k)
    if _is_inplace(name):
        return x
    if zero_d:
        def back(t):
            return t.squeeze(-1) if isinstance(t, _C.Tensor) and t.dim() == 2 else t
        r = _rebuild(r, [back(t) for t in r]) if isinstance(r, (tuple, list)) else back(r)
    return _wrap_out(r, level)


# ---------------------------------------------------------------- per-op rules

def _full_reduce_nodim(func, types, args, kwargs, level, name):
    """max(x) / min(x) / median(x) without dim (the value only); with a dim or another tensor, the categories."""
    if len(args) == 1 and not kwargs and _b(args[0], level):
        x = args[0]
        flat = x._phys.reshape(level_info(level).size, x.numel())
        r = getattr(_C, {"max": "amax", "min": "amin"}.get(name, name))(flat, 1)
        return wrap(r[0] if isinstance(r, tuple) else r, level)
    if len(args) >= 2 and isinstance(args[1], _C.Tensor) or isinstance(kwargs.get("other"), _C.Tensor):
        return _pointwise(func, args, kwargs, level, name)
    r = _dims(func, args, kwargs, level, name)
    return per_sample(func, args, kwargs, level, name) if r is NotImplemented else r


def _sizes(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0])
    return tuple(args)


def _infer(size, numel):
    size = list(size)
    if -1 in size:
        known = 1
        for s in size:
            if s != -1:
                known *= s
        size[size.index(-1)] = numel // known if known else 0
    return tuple(size)


def _view(func, types, args, kwargs, level, name):
    x = args[0]
    rest = list(args[1:]) + list(kwargs.values())
    if name in ("view_as", "reshape_as"):  # the other tensor is read for its (logical) shape only
        return getattr(x, name[:-3])(tuple(rest[0].shape))
    if not _b(x, level) or any(_b(v, level) for v in rest):
        return per_sample(func, args, kwargs, level, name)
    if len(rest) == 1 and not isinstance(rest[0], (int, list, tuple)):
        if name == "view":  # view(dtype)
            return wrap(x._phys.view(rest[0]), level)
        return per_sample(func, args, kwargs, level, name)
    else:
        target = _infer(_sizes(rest), x.numel())
    B = level_info(level).size
    return wrap(getattr(x._phys, name)((B,) + target), level)


def _expand(func, types, args, kwargs, level, name):
    x = args[0]
    rest = list(args[1:]) + list(kwargs.values())
    if name == "expand_as":  # the other tensor is read for its (logical) shape only
        return x.expand(tuple(rest[0].shape))
    if not _b(x, level) or any(_b(v, level) for v in rest):
        return per_sample(func, args, kwargs, level, name)
    size = _sizes([v for v in args[1:]] or [kwargs.get("size")])
    B = level_info(level).size
    return wrap(_pad(x._phys, x.ndim, len(size)).expand((B,) + tuple(size)), level)


def _permute(func, types, args, kwargs, level, name):
    x = args[0]
    dims = _sizes(list(args[1:]) or [kwargs.get("dims")])
    n = x.ndim
    if not _b(x, level) or len(dims) != n:
        return per_sample(func, args, kwargs, level, name)
    return wrap(x._phys.permute((0,) + tuple(d % n + 1 for d in dims)), level)


def _repeat(func, types, args, kwargs, level, name):
    x = args[0]
    reps = _sizes(list(args[1:]) or [kwargs.get("repeats", kwargs.get("dims"))])
    if not _b(x, level) or (name == "repeat" and len(reps) < x.ndim):
        return per_sample(func, args, kwargs, level, name)
    n = max(len(reps), x.ndim)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    return wrap(_pad(x._phys, x.ndim, n).repeat((1,) + reps), level)


def _t(func, types, args, kwargs, level, name):
    x = args[0]
    if x.ndim < 2:
        return x.view_as(x) if x.ndim else x.view(())
    return x.transpose(0, 1)


def _index_parts(idx):
    return idx if isinstance(idx, tuple) else (idx,)


def _basic_or_adjacent(parts, level):
    """Whether indexing the physical tensor with a full slice first gives the batch dim first: basic indexing, or
    advanced indices (unbatched) that are adjacent."""
    if any(isinstance(p, bool) or _b(p, level) for p in parts):
        return False
    adv = _advanced_positions(parts)
    return not adv or adv == list(range(adv[0], adv[0] + len(adv)))


def _advanced_positions(parts):
    """The positions of the advanced indices (tensors, lists) among the parts that are not ints: torch applies
    integer indices as selects first, so they neither count as advanced nor separate advanced indices."""
    kept = [p for p in parts if not (isinstance(p, int) and not isinstance(p, bool))]
    return [i for i, p in enumerate(kept) if isinstance(p, (_C.Tensor, list))]


_BOOL_MASK = ("vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over "
              "indexing with a boolean mask.")


def _getitem(func, types, args, kwargs, level, name):
    x, idx = args[0], args[1]
    parts = _index_parts(idx)
    if any(isinstance(p, _C.Tensor) and p.dtype == _C.bool for p in parts):
        raise DataDependentError(_BOOL_MASK)
    if any(_b(p, level) for p in parts):
        return _batched_index(x, parts, level, name, func, args, kwargs)
    if not _b(x, level) or not _basic_or_adjacent(parts, level):
        return per_sample(func, args, kwargs, level, name)
    return wrap(x._phys[(slice(None),) + parts], level)


def _batched_index(x, parts, level, name, func, args, kwargs):
    """Advanced indexing with batched index tensors: their physical tensors index (padded so that the batch dim
    leads the broadcast index shape), and a batched x gets arange(B) as its first index; the batch dim of the
    result is where indexing puts the index dims."""
    if any(p is Ellipsis or isinstance(p, bool) for p in parts):
        return per_sample(func, args, kwargs, level, name)
    tensors = [p for p in parts if isinstance(p, _C.Tensor)]
    rank = max(p.ndim for p in tensors)
    B = level_info(level).size
    new = [_pad(p._phys, p.ndim, rank) if _b(p, level) else p for p in parts]
    pos = _advanced_positions(parts)
    adjacent = pos == list(range(pos[0], pos[0] + len(pos)))
    first = pos[0] if adjacent else 0  # where the index dims go: the parts before are slices and Nones, a dim each
    if _b(x, level):  # arange(B) first: the index dims (batch first) lead the physical result
        ar = _C.arange(B, device=x.device).reshape((B,) + (1,) * rank)
        r = x._phys[tuple([ar] + new)]
        if first:
            r = r.movedim(tuple(range(1, 1 + rank)), tuple(range(1 + first, 1 + first + rank)))
        return wrap(r, level)
    r = x[tuple(new)]
    return wrap(r.movedim(first, 0) if first else r, level)


def _setitem(func, types, args, kwargs, level, name):
    x, idx, v = args
    parts = _index_parts(idx)
    if not _b(x, level):
        if _b(v, level):
            raise RuntimeError(
                "vmap: index_put_(self, *extra_args) is not possible because there exists a Tensor `other` in "
                "extra_args that has more elements than `self`. This happened due to `other` being vmapped over but "
                "`self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of "
                "index_put_. If said operator is being called inside the PyTorch framework, please file a bug report "
                "instead.")
        return per_sample(func, args, kwargs, level, name)
    if not _basic_or_adjacent(parts, level):
        return per_sample(func, args, kwargs, level, name)
    if _b(v, level):
        with _C.DisableTorchFunctionSubclass():
            region = x.view_as(x)[idx].dim()
        v = _pad(v._phys, v.ndim, region)
    x._phys[(slice(None),) + parts] = v
    return None


def _iter(func, types, args, kwargs, level, name):
    return iter(args[0].unbind(0))


def _matmul(func, types, args, kwargs, level, name):
    if kwargs.get("out") is not None:
        return per_sample(func, args, kwargs, level, name)
    a, b = args[0], args[1] if len(args) > 1 else kwargs.get("other", kwargs.get("mat2", kwargs.get("vec")))
    if name == "__rmatmul__":
        a, b = b, a
    expect = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "dot": (1, 1), "vdot": (1, 1)}.get(name)
    if expect and (a.ndim, b.ndim) != expect:
        with _C.DisableTorchFunctionSubclass():  # torch's error for the logical shapes
            return func(a.view_as(a) if _b(a, level) else a, b.view_as(b) if _b(b, level) else b)
    if name == "vdot":
        a = a.conj()
    return _mm(a, b, level)


def _mm(a, b, level):
    ba, bb = _b(a, level), _b(b, level)
    if ba and bb and a.ndim == 1 and b.ndim == 1:
        return (a * b).sum(-1)
    if ba and a.ndim == 1:
        return _mm(a.unsqueeze(0), b, level).squeeze(-2)
    if bb and b.ndim == 1:
        return _mm(a, b.unsqueeze(-1), level).squeeze(-1)
    if not ba and not bb:
        return _C.matmul(a, b)
    rank = max(a.ndim, b.ndim)
    pa = _pad(a._phys, a.ndim, rank) if ba else a
    pb = _pad(b._phys, b.ndim, rank) if bb else b
    return wrap(_C.matmul(pa, pb), level)


def _addmm(func, types, args, kwargs, level, name):
    inp, m1, m2 = args[:3]
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    if len(args) > 3 or kwargs.get("out") is not None or set(kwargs) - {"beta", "alpha"}:
        return per_sample(func, args, kwargs, level, name)
    prod = m1 @ m2
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # torch ignores the input then (its nan and inf too)
        return prod
    return prod + (inp if beta == 1 else inp * beta)


def _outer(func, types, args, kwargs, level, name):
    a, b = args[0], args[1] if len(args) > 1 else kwargs.get("vec2")
    return a.unsqueeze(-1) * b


def _einsum(func, types, args, kwargs, level, name):
    eq = args[0]
    ops = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    if not isinstance(eq, str) or kwargs:
        return per_sample(func, args, kwargs, level, name)
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ops):
        return per_sample(func, args, kwargs, level, name)
    if not arrow:
        letters = [c for c in lhs if c.isalpha()]
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in eq)
    new_terms = [free + t if _b(o, level) else t for t, o in zip(terms, ops)]
    phys = [o._phys if _b(o, level) else o for o in ops]
    r = func(",".join(new_terms) + "->" + free + rhs, phys)
    return wrap(r, level)


def _cat(func, types, args, kwargs, level, name):
    tensors = list(args[0]) if args else list(kwargs.get("tensors"))
    dim = args[1] if len(args) > 1 else kwargs.get("dim", kwargs.get("axis", 0))
    if len(args) > 2 or kwargs.get("out") is not None or not isinstance(dim, int):
        return per_sample(func, args, kwargs, level, name)
    B = level_info(level).size
    legacy = name in ("cat", "concat", "concatenate")

    def skipped(t):  # torch's cat skips legacy empty 1-d tensors
        return legacy and t.ndim == 1 and t.shape[0] == 0
    nd = next((t.ndim for t in tensors if not skipped(t)), 1)
    phys = []
    for t in tensors:
        if skipped(t) and nd != 1:
            continue
        if _b(t, level):
            phys.append(t._phys)
        else:
            phys.append(t.unsqueeze(0).expand((B,) + tuple(t.shape)))
    d = dim + 1 if dim >= 0 else dim
    return wrap(func(phys, d), level)


def _conv(func, types, args, kwargs, level, name):
    names = ("input", "weight", "bias", "stride", "padding", "dilation", "transposed", "output_padding", "groups")
    v = dict(zip(names, args))
    v.update(kwargs)
    x, w, bias = v.get("input"), v.get("weight"), v.get("bias")
    if set(v) != set(names):
        return per_sample(func, args, kwargs, level, name)
    if not _b(w, level) and not _b(bias, level):  # an unbatched filter: the batch folded into N
        return _spatial(func, args, kwargs, level, name, w.ndim)
    if v["transposed"] or x.ndim != w.ndim:
        return per_sample(func, args, kwargs, level, name)
    # a batched filter: the samples become groups, [N, B * C, *] convolved with [B * O, C / g, *]
    B, n, c, o = level_info(level).size, x.shape[0], x.shape[1], w.shape[0]
    px = x._phys if _b(x, level) else x.unsqueeze(0).expand((B,) + tuple(x.shape))
    px = px.movedim(0, 1).reshape((n, B * c) + tuple(x.shape[2:]))
    pw = w._phys if _b(w, level) else w.unsqueeze(0).expand((B,) + tuple(w.shape))
    pw = pw.reshape((B * o,) + tuple(w.shape[1:]))
    pb = None
    if bias is not None:
        pb = (bias._phys if _b(bias, level) else bias.unsqueeze(0).expand(B, o)).reshape(B * o)
    out = func(px, pw, pb, v["stride"], v["padding"], v["dilation"], False, v["output_padding"], v["groups"] * B)
    out = out.reshape((n, B, o) + tuple(out.shape[2:])).movedim(1, 0)
    return wrap(out, level)


def _embedding(func, types, args, kwargs, level, name):
    w, idx = args[0], args[1]
    if _b(w, level) or not _b(idx, level) or any(_b(v, level) for v in list(args[2:]) + list(kwargs.values())):
        return per_sample(func, args, kwargs, level, name)
    return wrap(func(w, idx._phys, *args[2:], **kwargs), level)


def _cross_entropy(func, types, args, kwargs, level, name):
    """_cross_entropy_loss over (rows, classes): the samples' rows folded into one call with reduction 'none', then
    each sample's sum, or its mean over the weights of its rows that are not ignored."""
    names = ("input", "target", "weight", "reduction", "ignore_index", "label_smoothing")
    defaults = (None, None, None, 1, -100, 0.0)
    v = dict(zip(names, defaults))
    v.update(zip(names, args))
    v.update(kwargs)
    x, t, w = v["input"], v["target"], v["weight"]
    if _b(w, level) or x.ndim != 2 or t.ndim != 1 or set(v) != set(names):
        return per_sample(func, args, kwargs, level, name)
    B, n = level_info(level).size, x.shape[0]
    px = x._phys if _b(x, level) else x.unsqueeze(0).expand((B,) + tuple(x.shape))
    pt = t._phys if _b(t, level) else t.unsqueeze(0).expand((B,) + tuple(t.shape))
    loss, extra = func(px.reshape(B * n, x.shape[1]), pt.reshape(B * n), w, 0, v["ignore_index"],
                       v["label_smoothing"])
    loss, extra = loss.reshape(B, n), extra.reshape(B, n)
    if v["reduction"] == 2:
        loss = loss.sum(1)
    elif v["reduction"] == 1:
        valid = pt != v["ignore_index"]
        weights = valid.to(loss.dtype) if w is None else w[_C.where(valid, pt, _C.zeros_like(pt))] * valid
        loss = loss.sum(1) / weights.sum(1)
    return wrap(loss, level), wrap(extra, level)


def _fill_value(func, types, args, kwargs, level, name):
    """masked_fill / fill with a batched 0-d value: where / copy_ (their value argument must be 0-d)."""
    value = args[-1] if len(args) > (2 if name.startswith("masked") else 1) else kwargs.get("value")
    if not _b(value, level) or value.ndim != 0 or (set(kwargs) - {"value"}):
        return _pointwise(func, args, kwargs, level, name)
    x = args[0]
    if name.endswith("_") and not _b(x, level):
        raise _inplace_error(name)
    if name.startswith("masked"):
        r = _C.where(args[1], value.to(x.dtype), x)
        if name.endswith("_"):
            x._phys.copy_(r._phys if _b(r, level) else r)
            return x
        return r
    if name.endswith("_"):
        x._phys.copy_(_pad(value._phys, 0, x.ndim))
        return x
    return value.to(x.dtype).expand(x.shape).clone()


def _refresh_shell(x):
    """After an in-place change of x's physical shape: x's own tensor becomes the new sample view."""
    with _C.DisableTorchFunctionSubclass():
        plain = x._phys.detach()
        new = plain.select(0, 0) if plain.shape[0] else plain.new_empty(tuple(plain.shape[1:]))
        x.set_(new)


def _inplace_view(func, args, kwargs, level, name):
    """unsqueeze_ / squeeze_ / transpose_ / t_ / swapdims_: the dims rule on the physical tensor, in place, then
    the shell follows."""
    x = args[0] if args else None
    if not _b(x, level) or name in ("resize_", "resize_as_", "set_"):
        raise RuntimeError(f"vmap: {name} of a batched tensor is not supported (its storage is the batch's); use "
                           "an out-of-place op")
    if name == "t_":
        if x.ndim >= 2:
            x._phys.transpose_(1, 2)
    elif _dims(func, args, kwargs, level, name) is NotImplemented:
        raise RuntimeError(f"vmap: {name} with these arguments has no batching rule")
    _refresh_shell(x)
    return x


def _as_strided(func, types, args, kwargs, level, name):
    """as_strided inside vmap: size, stride and storage_offset are each sample's, the offset counted from the
    sample's start (as torch's rule)."""
    names = ("input", "size", "stride", "storage_offset")
    v = dict(zip(names, args))
    v.update(kwargs)
    x = v["input"]
    if not _b(x, level) or set(v) - set(names):
        return per_sample(func, args, kwargs, level, name)
    phys = x._phys
    rel = v.get("storage_offset") or 0
    size, stride = (level_info(level).size,) + tuple(v["size"]), (phys.stride(0),) + tuple(v["stride"])
    r = getattr(phys, name)(size, stride, phys.storage_offset() + rel)
    if name == "as_strided_":
        _refresh_shell(x)
        return x
    return wrap(r, level)


def _masked_select(func, types, args, kwargs, level, name):
    raise DataDependentError(
        "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support this because for "
        "each batch this would return a differently shaped Tensor. Please file an issue at "
        "https://github.com/pytorch/pytorch/issues if you need this feature.")


_RULES = {
    "max": _full_reduce_nodim, "min": _full_reduce_nodim, "median": _full_reduce_nodim,
    "nanmedian": _full_reduce_nodim,
    "view": _view, "reshape": _view, "view_as": _view, "reshape_as": _view,
    "expand": _expand, "expand_as": _expand, "broadcast_to": _expand,
    "permute": _permute, "repeat": _repeat, "tile": _repeat, "t": _t,
    "__getitem__": _getitem, "__setitem__": _setitem, "__iter__": _iter,
    "matmul": _matmul, "__matmul__": _matmul, "__rmatmul__": _matmul, "mm": _matmul, "bmm": _matmul,
    "mv": _matmul, "dot": _matmul, "vdot": _matmul, "inner": None,
    "addmm": _addmm, "addmv": _addmm, "baddbmm": _addmm, "outer": _outer, "ger": _outer,
    "_einsum": _einsum, "einsum": _einsum,
    "cat": _cat, "concat": _cat, "concatenate": _cat, "stack": _cat,
    "convolution": _conv, "_cross_entropy_loss": _cross_entropy, "constant_pad_nd": _pad_rule, "pad": _pad_rule,
    "trace": _trace, "fliplr": _flip_lr_ud, "flipud": _flip_lr_ud, "msort": _flip_lr_ud,
    "as_strided": _as_strided, "as_strided_": _as_strided,
    "masked_fill": _fill_value, "masked_fill_": _fill_value, "fill_": _fill_value,
    "fill": _fill_value, "embedding": _embedding, "masked_select": _masked_select,
}
_RULES = {k: v for k, v in _RULES.items() if v is not None}
