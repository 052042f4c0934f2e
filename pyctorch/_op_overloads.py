"""From pyctorch's op table to torch's aten operator names, overload names and schema text.

Note [Overloads from the op table]
pyctorch declares an op once, in Python's spelling: one entry can take `Tensor|Scalar` where
aten has one overload per type, and carries `out=` as a keyword where aten has a separate
`.out` overload. So every entry is expanded here:
  * each `Tensor|Scalar` parameter becomes a Tensor choice and a Scalar choice (a choice with
    no Tensor at all is dropped: aten's all-Scalar forms are TorchScript number ops);
  * an entry with `out=` also gives an out overload, and an entry with an in-place variant a
    `<name>_` operator;
  * the overload is named by aten's usual rule (`default`, `Tensor`, `Scalar`, `Scalar_Tensor`,
    `out`, `Scalar_out`, and a second entry of the same name adds its id's suffix: `max_dim` ->
    `dim`, `div_mode` -> `Tensor_mode`);
  * aten's irregular names for the common ops are in _IRREGULAR (pow's `Tensor_Scalar`, sum's
    `dim_IntList`, transpose's `int`...). Where one pyctorch entry stands for two aten overloads
    (sum with and without `dim`) both names point at it.
Every overload of one operator calls the same pyctorch function, whose own argument parsing
picks the form, so a name that differs from torch's changes lookup, never results.

The schema text follows torch's spelling (`aten::name.overload(Tensor self, ...) -> Tensor`,
`Tensor(a!)` for what an in-place or out overload writes). The table has no return types,
alias annotations of views or SymInt markers, so those parts are derived: `Tensor` unless the
entry returns several tensors (_RETURNS), `Tensor(a)` for the view ops in _VIEW_OPS, SymInt for
the size-like argument names of _SYMINT_NAMES, and per-overload argument lists for the entries
that stand for several overloads (_SHAPES). About four in five overloads then print exactly
torch's schema; the rest differ where pyctorch's signature itself differs from aten's (its
backward helpers take other arguments, `int[1]? dim=None` where aten has `int[1] dim=[]`, ...),
and such a schema describes what pyctorch's function accepts, not torch's.
"""

# aten's name where pyctorch's table uses a private one for the same operator
_ATEN_NAME = {"_einsum": "einsum"}

# names of aten ops that alias their input (schema `Tensor(a) self -> Tensor(a)`)
_VIEW_OPS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "squeeze", "unsqueeze", "permute", "transpose",
    "swapaxes", "swapdims", "t", "movedim", "moveaxis", "expand", "expand_as", "broadcast_to",
    "narrow", "select", "diagonal", "as_strided", "unfold", "detach", "alias", "flatten",
    "unflatten", "split", "split_with_sizes", "tensor_split", "chunk", "unbind"})

# returns of entries that give more than one tensor (by op name)
_RETURNS = {
    "max.dim": "(Tensor values, Tensor indices)", "min.dim": "(Tensor values, Tensor indices)",
    "median.dim": "(Tensor values, Tensor indices)", "nanmedian.dim": "(Tensor values, Tensor indices)",
    "mode": "(Tensor values, Tensor indices)", "kthvalue": "(Tensor values, Tensor indices)",
    "topk": "(Tensor values, Tensor indices)", "sort": "(Tensor values, Tensor indices)",
    "cummax": "(Tensor values, Tensor indices)", "cummin": "(Tensor values, Tensor indices)",
    "aminmax": "(Tensor min, Tensor max)", "var_mean": "(Tensor, Tensor)", "std_mean": "(Tensor, Tensor)",
    "linalg_svd": "(Tensor U, Tensor S, Tensor Vh)", "svd": "(Tensor U, Tensor S, Tensor V)",
    "native_layer_norm": "(Tensor, Tensor, Tensor)", "native_group_norm": "(Tensor, Tensor, Tensor)",
    "native_batch_norm": "(Tensor, Tensor, Tensor)", "max_pool2d_with_indices": "(Tensor, Tensor)",
    "max_pool1d_with_indices": "(Tensor, Tensor)", "adaptive_max_pool2d": "(Tensor, Tensor)",
    "adaptive_max_pool1d": "(Tensor, Tensor)", "max_pool3d_with_indices": "(Tensor, Tensor)",
    "adaptive_max_pool3d": "(Tensor, Tensor)", "grid_sampler_2d_backward": "(Tensor, Tensor)",
    "grid_sampler_3d_backward": "(Tensor, Tensor)", "_embedding_bag": "(Tensor, Tensor, Tensor, Tensor)",
    "_ctc_loss": "(Tensor, Tensor)", "split": "Tensor[]", "split_with_sizes": "Tensor[]",
    "tensor_split": "Tensor[]", "chunk": "Tensor[]", "unbind": "Tensor[]", "where.cond": "Tensor[]",
}

# aten's overload names where its rule is not the usual one: {op: {derived name: torch name(s)}}
_IRREGULAR = {
    "sum": {"default": ("default", "dim_IntList"), "out": ("out", "IntList_out")},
    "mean": {"default": ("default", "dim")},
    "prod": {"default": ("default", "dim_int"), "out": ("int_out",)},
    "all": {"default": ("default", "dim", "dims"), "out": ("out", "dims_out", "all_out")},
    "any": {"default": ("default", "dim", "dims"), "out": ("out", "dims_out", "all_out")},
    "count_nonzero": {"default": ("default", "dim_IntList")},
    "var": {"default": ("dim", "correction"), "unbiased": ("default",), "out": ("out", "correction_out")},
    "std": {"default": ("dim", "correction"), "unbiased": ("default",), "out": ("out", "correction_out")},
    "var_mean": {"default": ("dim", "correction"), "unbiased": ("default",)},
    "std_mean": {"default": ("dim", "correction"), "unbiased": ("default",)},
    "max": {"dim": ("dim",), "dim_out": ("dim_max",), "other_out": ("out",), "other": ("other",)},
    "min": {"dim": ("dim",), "dim_out": ("dim_min",), "other_out": ("out",), "other": ("other",)},
    "median": {"dim_out": ("dim_values",)}, "nanmedian": {"dim_out": ("dim_values",)},
    "pow": {"Tensor": ("Tensor_Tensor",), "Scalar": ("Tensor_Scalar",), "Scalar_Tensor": ("Scalar",),
            "out": ("Tensor_Tensor_out",), "Scalar_out": ("Tensor_Scalar_out",),
            "Scalar_Tensor_out": ("Scalar_out",)},
    "float_power": {"Tensor": ("Tensor_Tensor",), "Scalar": ("Tensor_Scalar",),
                    "Scalar_Tensor": ("Scalar",), "out": ("Tensor_Tensor_out",),
                    "Scalar_out": ("Tensor_Scalar_out",), "Scalar_Tensor_out": ("Scalar_out",)},
    "div": {"mode": ("Tensor_mode",), "Scalar_mode": ("Scalar_mode",), "mode_out": ("out_mode",),
            "Tensor_mode_out": ("out_mode",), "Scalar_mode_out": ()},
    "remainder": {"out": ("Tensor_out",), "Scalar_Tensor_out": ("Scalar_Tensor_out",)},
    "fmod": {"out": ("Tensor_out",)},
    "bitwise_and": {"out": ("Tensor_out",)}, "bitwise_or": {"out": ("Tensor_out",)},
    "bitwise_xor": {"out": ("Tensor_out",)},
    "bitwise_left_shift": {"Scalar": ("Tensor_Scalar",), "out": ("Tensor_out",),
                           "Scalar_out": ("Tensor_Scalar_out",)},
    "bitwise_right_shift": {"Scalar": ("Tensor_Scalar",), "out": ("Tensor_out",),
                            "Scalar_out": ("Tensor_Scalar_out",)},
    "xlogy": {"Scalar": ("Scalar_Other",), "Scalar_Tensor": ("Scalar_Self",), "out": ("OutTensor",),
              "Scalar_out": ("OutScalar_Other",), "Scalar_Tensor_out": ("OutScalar_Self",)},
    "eq": {"out": ("Tensor_out",)}, "ne": {"out": ("Tensor_out",)}, "lt": {"out": ("Tensor_out",)},
    "le": {"out": ("Tensor_out",)}, "gt": {"out": ("Tensor_out",)}, "ge": {"out": ("Tensor_out",)},
    "floor_divide": {"Tensor": ("default",)},
    "lerp": {"out": ("Tensor_out",)}, "searchsorted": {"out": ("Tensor_out",)},
    "bucketize": {"out": ("Tensor_out",)},
    "where": {"Tensor": ("self",), "out": ("self_out",), "Scalar": ("ScalarOther",),
              "Scalar_Tensor": ("ScalarSelf",), "cond": ("default",), "Scalar_out": (),
              "Scalar_Tensor_out": ()},
    "multiply": {"Scalar_out": ()}, "subtract": {"Scalar_out": ()}, "true_divide": {"Scalar_out": ()},
    "isfinite": {"out": ()}, "linalg_svd": {"out": ("U",)}, "svd": {"out": ("U",)},
    "geqrf": {"out": ("a",)}, "linalg_inv_ex": {"out": ("inverse",)}, "linalg_cholesky_ex": {"out": ("L",)},
    "linalg_eigh": {"out": ("eigvals",)},
    "norm": {"default": ("Scalar", "ScalarOpt_dim", "ScalarOpt_dim_dtype", "ScalarOpt_dtype"),
             "out": ("out", "Scalar_out", "dtype_out", "ScalarOpt_dtype_out"), "str": (), "str_out": ()},
    "concatenate": {"axis": (), "axis_out": ()},
    "unique_consecutive": {"kw": (), "p1": (), "p2": (), "p3": ()},
    "randint_like": {"low": ("low_dtype",)},
    "masked_fill": {"out": ("Tensor_out",)},
    "index_fill": {"Tensor": ("int_Tensor",), "Scalar": ("int_Scalar",)},
    "clamp": {"default": ("default", "Tensor")}, "clip": {"default": ("default", "Tensor")},
    "transpose": {"default": ("int",)}, "select": {"default": ("int",)}, "unbind": {"default": ("int",)},
    "flatten": {"default": ("using_ints",)}, "unflatten": {"default": ("int",)},
    "softmax": {"default": ("int",)}, "log_softmax": {"default": ("int",)},
    "squeeze": {"default": ("default", "dim", "dims")},
    "movedim": {"default": ("int", "intlist")}, "moveaxis": {"default": ("int", "intlist")},
    "split": {"default": ("Tensor",), "list": ("sizes",)},
    "tensor_split": {"default": ("sections",), "indices": ("indices",)},
    "empty": {"default": ("memory_format",)},
    "arange": {"end": ("default",), "default": ("start", "start_step"), "end_out": ("out",),
               "out": ("start_out",)},
    "randint": {"low": ("low",), "low_out": ("low_out",)},
    "eye": {"default": ("default", "m"), "out": ("out", "m_out")},
    "to": {"dtype": ("dtype",), "device": ("device",), "Tensor_other": ("other",), "Scalar_other": ()},
    "fill_": {"default": ("Scalar",), "tensor": ("Tensor",)}, "fill": {"default": ("Scalar",), "tensor": ("Tensor",)},
    "copy_": {"Tensor": ("default", "Tensor"), "Scalar": ()}, "divide": {"Scalar_out": ()},
    "scatter": {"src": ("src",), "value": ("value",), "src_reduce": ("reduce",),
                "value_reduce": ("value_reduce",), "src_out": ("src_out",), "value_out": ("value_out",),
                "src_reduce_out": ("reduce_out",), "value_reduce_out": ("value_reduce_out",)},
    "scatter_reduce": {"default": ("two",), "out": ("two_out",)},
    "linalg_matrix_norm": {"str": ("str_ord",), "str_out": ("str_ord_out",)},
    "linalg_norm": {"str": ("ord_str",), "str_out": ("ord_str_out",)},
    "sort": {"stable": ("stable",), "out": ("values",), "stable_out": ("values_stable",)},
    "argsort": {"stable_out": ("stable_out",)},
    "topk": {"out": ("values",)}, "kthvalue": {"out": ("values",)}, "mode": {"out": ("values",)},
    "repeat_interleave": {"default": ("self_Tensor",), "int": ("self_int",), "idx": ("Tensor",)},
    "upsample_nearest1d": {"default": ("default", "vec")}, "upsample_nearest2d": {"default": ("default", "vec")},
    "upsample_linear1d": {"default": ("default", "vec")}, "upsample_bilinear2d": {"default": ("default", "vec")},
    "normal": {"tensor_float": ("Tensor_float",), "tensor_tensor": ("Tensor_Tensor",),
               "float_tensor": ("float_Tensor",), "float_float": ("float_float",),
               "tensor_float_out": ("Tensor_float_out",), "tensor_tensor_out": ("Tensor_Tensor_out",),
               "float_tensor_out": ("float_Tensor_out",), "float_float_out": ("float_float_out",)},
    "normal_": {"default": ("default",)},
    "bernoulli": {"p": ("p",), "out": ("out",)},
    "bernoulli_": {"float": ("float",), "tensor": ("Tensor",)},
    "random_": {"from": ("from",), "to": ("to",), "default": ("default",)},
}
# torch.special's binary ops (ops_special.def): a Python-number degree / other is the `n_scalar` / `other_scalar`
# overload; polygamma's method entry (x as self) has no aten overload of its own
_IRREGULAR.update({name: {"Tensor": ("default",), "Scalar": ("n_scalar",), "Scalar_out": ("n_scalar_out",)}
                   for name in ("special_" + kind + "_polynomial_" + degree for kind, degree in (
                       ("chebyshev", "t"), ("chebyshev", "u"), ("chebyshev", "v"), ("chebyshev", "w"),
                       ("shifted_chebyshev", "t"), ("shifted_chebyshev", "u"), ("shifted_chebyshev", "v"),
                       ("shifted_chebyshev", "w"), ("hermite", "h"), ("hermite", "he"), ("laguerre", "l"),
                       ("legendre", "p")))})
_IRREGULAR["special_zeta"] = {"Tensor": ("default",), "Scalar": ("other_scalar",), "Scalar_out": ("other_scalar_out",)}
_IRREGULAR["polygamma"] = {"method": ()}

# in-place operators whose overload names differ from the functional ones
_IRREGULAR_INPLACE = {
    "transpose_": {"int": ("default",)}, "floor_divide_": {"default": ("Tensor",)},
    "index_fill_": {"Tensor": ("int_Tensor",), "Scalar": ("int_Scalar",)},
    "pow_": {"Tensor_Tensor": ("Tensor",), "Tensor_Scalar": ("Scalar",)},
    "float_power_": {"Tensor_Tensor": ("Tensor",), "Tensor_Scalar": ("Scalar",)},
}

# aten ops that take a Scalar as `self` (the others leave `2 + t` to Tensor.__radd__)
_SCALAR_SELF = frozenset({"remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                          "bitwise_right_shift", "pow", "float_power", "xlogy", "where", "bucketize"})

_FACTORY_KWARGS = ("dtype", "layout", "device", "pin_memory")

# int arguments aten declares as SymInt (sizes and offsets that may be symbolic under tracing);
# pooling ops keep plain ints for their window arguments
_SYMINT_NAMES = frozenset({"size", "shape", "stride", "storage_offset", "pad", "split_size", "split_sizes",
                           "normalized_shape", "padding_idx", "num_weights", "start", "length", "index",
                           "output_size", "input_size", "sizes", "repeats", "bias_sizes", "padding",
                           "dilation", "output_padding", "groups", "minlength", "n", "m", "high", "low"})

# where one pyctorch entry stands for several aten overloads, what each overload's schema keeps:
# drop = arguments it lacks, required = arguments without a default, types = retyped arguments,
# positional = arguments before the `*` that pyctorch's entry makes keyword-only
_NO_DIM = {"drop": ("dim", "keepdim")}
_DIM_REQUIRED = {"required": ("dim",)}
_SHAPES = {
    ("sum", "default"): _NO_DIM, ("sum", "dim_IntList"): _DIM_REQUIRED, ("sum", "out"): _NO_DIM,
    ("sum", "IntList_out"): _DIM_REQUIRED, ("mean", "default"): _NO_DIM, ("mean", "dim"): _DIM_REQUIRED,
    ("mean", "out"): _DIM_REQUIRED, ("squeeze", "default"): {"drop": ("dim",)},
    ("squeeze_", "default"): {"drop": ("dim",)},
    ("squeeze", "dim"): {"required": ("dim",), "types": {"dim": "int"}},
    ("squeeze_", "dim"): {"required": ("dim",), "types": {"dim": "int"}},
    ("squeeze", "dims"): {"required": ("dim",), "types": {"dim": "int[]"}},
    ("squeeze_", "dims"): {"required": ("dim",), "types": {"dim": "int[]"}},
    ("add", "Scalar"): {"positional": ("alpha",)}, ("add", "Scalar_out"): {"positional": ("alpha",)},
    ("add_", "Scalar"): {"positional": ("alpha",)},
    ("sub", "Scalar"): {"positional": ("alpha",)}, ("sub", "Scalar_out"): {"positional": ("alpha",)},
    ("sub_", "Scalar"): {"positional": ("alpha",)},
}

# aten ops whose tensor argument is spelled `input` (the rest call it `self`)
_KEEPS_INPUT_NAME = frozenset({"convolution", "convolution_backward", "_fused_rms_norm",
                               "_fused_rms_norm_backward", "native_layer_norm", "native_layer_norm_backward",
                               "native_group_norm_backward", "native_batch_norm", "native_batch_norm_backward",
                               "embedding_renorm_"})


def split_params(signature):
    """'f(Tensor a, int[] d=[-2, -1], *, Tensor? out=None)' -> name, ['Tensor a', 'int[] d=[-2, -1]', '*', ...]."""
    name, _, rest = signature.partition("(")
    body = rest[:rest.rindex(")")]
    params, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            params.append(body[start:i].strip())
            start = i + 1
    if body[start:].strip():
        params.append(body[start:].strip())
    return name.strip(), params


def parse_param(text):
    """'Scalar alpha=1' -> (type, name, default or None); '*' -> ('*', '*', None)."""
    if text == "*":
        return "*", "*", None
    decl, eq, default = text.partition("=")
    type_, _, name = decl.strip().rpartition(" ")
    return type_, name, (default.strip() if eq else None)


def _suffix(entry):
    """The overload suffix a second entry of a name carries: 'max_dim' -> 'dim', 'fill_tensor_' -> 'tensor'."""
    ident, name = entry["id"], entry["name"]
    if ident.strip("_") == name.strip("_"):
        return ""
    for prefix in (name + "_", name.rstrip("_") + "_"):
        if ident.startswith(prefix):
            return ident[len(prefix):].strip("_")
    return ident.strip("_")


def _choices(params):
    """Every way of resolving the Tensor|Scalar parameters; each a tuple of (index, chosen type)."""
    union = [i for i, p in enumerate(params) if parse_param(p)[0].startswith("Tensor|Scalar")]
    combos = [()]
    for i in union:
        combos = [c + ((i, t),) for c in combos for t in ("Tensor", "Scalar")]
    # a choice with no tensor anywhere is a TorchScript number op, not a tensor overload
    return [c for c in combos if not c or any(t == "Tensor" for _, t in c)
            or any(parse_param(p)[0].startswith("Tensor") for i, p in enumerate(params) if i not in dict(c))]


def _base_name(combo, params):
    """aten's usual name for one Tensor/Scalar resolution (see the Note above)."""
    if not combo:
        return "default"
    types = [t for _, t in combo]
    if len(types) == 1:
        return types[0]
    first_is_self = combo[0][0] == 0 or parse_param(params[combo[0][0]])[1] == "input"
    if first_is_self and types[0] == "Scalar":
        return "Scalar_" + "_".join(types[1:]) if types[1:] != ["Scalar"] else "Scalar"
    return "Tensor" if all(t == "Tensor" for t in types) else "Scalar"


def _join(*parts):
    parts = [p for p in parts if p and p != "default"]
    return "_".join(parts) if parts else "default"


def _torch_default(type_, default):
    """Defaults as torch prints them: floats with a point ('1.'), strings in double quotes."""
    if default is None:
        return None
    if type_.startswith("float") and default.lstrip("-").isdigit():
        return default + "."
    if default.startswith("'") and default.endswith("'"):
        return '"' + default[1:-1] + '"'
    return default


def _torch_type(type_, name):
    if type_ == "PyObject" or type_ == "PyObject?":
        return "Tensor?[]" if name == "indices" else "Any"
    return type_


def schema_text(op_name, overload, params, combo, writes_self, out_param, returns, is_view):
    """torch's schema spelling for one overload (see the Note above)."""
    chosen = dict(combo)
    shape = _SHAPES.get((op_name, overload), {})
    is_factory = any(parse_param(p)[1] == "device" for p in params)
    args, seen_star = [], False
    for i, p in enumerate(params):
        type_, name, default = parse_param(p)
        if name == "*":
            seen_star = True
            args.append("*")
            continue
        if name in ("out", "requires_grad") or name in shape.get("drop", ()):
            continue
        if name in shape.get("required", ()):
            default = None
        type_ = shape.get("types", {}).get(name, type_)
        if name in _SYMINT_NAMES and "pool" not in op_name and type_.split("[")[0].rstrip("?") == "int":
            type_ = "SymInt" + type_[3:]
        if name in shape.get("positional", ()) and seen_star:
            star = args.index("*")
            args.insert(star, f"{type_} {name}" + (f"={default}" if default is not None else ""))
            continue
        if i in chosen:
            type_ = type_.replace("Tensor|Scalar", chosen[i])
        if name == "input" and op_name not in _KEEPS_INPUT_NAME:
            name = "self"
        if out_param and is_factory and name in _FACTORY_KWARGS:
            continue  # aten's out= factories take the dtype and device from `out`
        if name == "pin_memory" and default is not None:
            default = "None"
        default = _torch_default(type_, default)
        type_ = _torch_type(type_, name)
        if i == 0 and name == "self" and type_ == "Tensor":
            type_ = "Tensor(a!)" if writes_self else ("Tensor(a)" if is_view else type_)
        args.append(f"{type_} {name}" + (f"={default}" if default is not None else ""))
    if out_param:
        if not seen_star:
            args.append("*")
        if returns.startswith("("):
            names = [r.split()[-1] for r in returns.strip("()").split(", ")]
            if all(n != "Tensor" for n in names):
                letters = "abcdefgh"
                args += [f"Tensor({letters[k]}!) {n}" for k, n in enumerate(names)]
                returns = "(" + ", ".join(f"Tensor({letters[k]}!) {n}" for k, n in enumerate(names)) + ")"
            else:
                args.append("Tensor(a!) out")
        else:
            args.append("Tensor(a!) out")
            returns = "Tensor(a!)"
    while args and args[-1] == "*":
        args.pop()
    if writes_self:
        returns = "Tensor(a!)"
    elif is_view and returns == "Tensor":
        returns = "Tensor(a)"
    qual = f"aten::{op_name}" + ("" if overload == "default" else f".{overload}")
    return f"{qual}({', '.join(args)}) -> {returns}"


class OverloadSpec:
    """One aten overload pyctorch answers: its packet name, overload name and schema text."""
    __slots__ = ("op_name", "overload", "schema", "entry_id", "is_out", "is_inplace")

    def __init__(self, op_name, overload, schema, entry_id, is_out, is_inplace):
        self.op_name, self.overload, self.schema = op_name, overload, schema
        self.entry_id, self.is_out, self.is_inplace = entry_id, is_out, is_inplace


def _rename(table, op_name, derived):
    names = table.get(op_name, {}).get(derived)
    return names if names is not None else (derived,)


def _entry_specs(entry):
    name = _ATEN_NAME.get(entry["name"], entry["name"])
    _, params = split_params(entry["schema"])
    variants = entry["variants"]
    suffix = _suffix(entry)
    has_out = any(parse_param(p)[1] == "out" for p in params)
    is_view = name in _VIEW_OPS
    specs = []
    for combo in _choices(params):
        self_is_scalar = bool(combo) and combo[0] == (0, "Scalar")
        if self_is_scalar and name not in _SCALAR_SELF:
            continue
        derived = _join(_base_name(combo, params), suffix)
        ret = _RETURNS.get(f"{name}.{suffix}") or _RETURNS.get(name, "Tensor")
        if "F" in variants or "M" in variants:
            for ov in _rename(_IRREGULAR, name, derived):
                specs.append(OverloadSpec(name, ov, schema_text(name, ov, params, combo, name.endswith("_")
                                                                and "M" in variants, False, ret, is_view),
                                          entry["id"], False, name.endswith("_")))
            if has_out:
                out_derived = "out" if derived in ("default", "Tensor") else derived + "_out"
                for ov in _rename(_IRREGULAR, name, out_derived):
                    specs.append(OverloadSpec(name, ov, schema_text(name, ov, params, combo, False, True,
                                                                    ret, False), entry["id"], True, False))
        if "I" in variants and not name.endswith("_") and not self_is_scalar:
            inplace = name + "_"
            inplace_names = _rename(_IRREGULAR, inplace if inplace in _IRREGULAR else name, derived)
            for torch_ov in inplace_names:
                for ov in _rename(_IRREGULAR_INPLACE, inplace, torch_ov):
                    specs.append(OverloadSpec(inplace, ov, schema_text(inplace, ov, params, combo, True, False,
                                                                       "Tensor(a!)", False),
                                              entry["id"], False, True))
    return specs


def overload_specs(table):
    """{aten op name: {overload name: OverloadSpec}} for the whole op table (first entry wins a clash)."""
    ops = {}
    for entry in table:
        for spec in _entry_specs(entry):
            ops.setdefault(spec.op_name, {}).setdefault(spec.overload, spec)
    return ops
