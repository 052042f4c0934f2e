"""From an ExportedProgram's aten graph to ONNX nodes (onnx.helper), one converter per aten operator.

Note [ONNX lowering]
torch.onnx.export lowers the program after run_decompositions(), so the converters see few view ops
(permute, view, expand, slice, select, split_with_sizes). Sizes that depend on dynamic dims are computed in
the ONNX graph the way the exported graph computes them: `aten.sym_size.int` is `Shape(x, start=d, end=d+1)`
(a 1-d int64 tensor of one element), `operator.mul/add/sub` on sizes are Mul/Add/Sub on those, and a size
list mixing ints and sizes is their Concat, so a Reshape or Expand follows the batch at run time. Each value
of the graph is one ONNX value name (a list of names for ops with several results); tensors are kept in the
dtype the program gives them, so a converter reads dtypes and static sizes from node.meta['val'].
"""
import math
import operator

import numpy as np

import pyctorch

__all__ = ["lower", "UnsupportedOp"]


class UnsupportedOp(RuntimeError):
    """An aten operator without an ONNX converter (torch raises its own dispatch error for these)."""


def _onnx():
    import onnx
    return onnx


_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "int64": np.int64, "int32": np.int32,
       "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


def np_dtype(dtype):
    name = str(dtype).replace("torch.", "")
    if name not in _NP:
        raise UnsupportedOp(f"torch.onnx.export: dtype {dtype} has no ONNX lowering in pyctorch")
    return _NP[name]


def onnx_dtype(dtype):
    return _onnx().helper.np_dtype_to_tensor_dtype(np.dtype(np_dtype(dtype)))


class Builder:
    """The ONNX graph under construction: nodes, initializers, unique names."""

    def __init__(self):
        self.nodes, self.initializers, self._n = [], [], 0
        self._consts = {}

    def name(self, hint="v"):
        self._n += 1
        return f"{hint}_{self._n}"

    def op(self, op_type, inputs, n_out=1, hint=None, **attrs):
        outs = [self.name(hint or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(_onnx().helper.make_node(op_type, list(inputs), outs, name=self.name("n_" + op_type),
                                                   **attrs))
        return outs if n_out != 1 else outs[0]

    def const(self, array, hint="const"):
        array = np.asarray(array)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._consts:
            name = self.name(hint)
            self.initializers.append(_onnx().numpy_helper.from_array(array, name))
            self._consts[key] = name
        return self._consts[key]

    def initializer(self, name, array):
        self.initializers.append(_onnx().numpy_helper.from_array(np.asarray(array), name))
        return name


def _schema_bind(node):
    """node's arguments by the names of its overload's schema (defaults filled in)."""
    schema = node.target._schema
    names = [a.name for a in schema.arguments]
    bound = {}
    for a, v in zip(schema.arguments, node.args):
        bound[a.name] = v
    for k, v in node.kwargs.items():
        bound["self" if k == "input" and "self" in names else k] = v
    for a in schema.arguments:
        if a.name not in bound:
            bound[a.name] = a.default_value
    return bound


def _meta(node):
    return node.meta.get("val")


def _static(dim):
    return isinstance(dim, int)


class Lowering:
    def __init__(self, ep, builder):
        self.ep, self.b, self.env = ep, builder, {}

    # ---- values ----
    def v(self, arg):
        """The ONNX name of a graph value."""
        from pyctorch.fx import Node
        if isinstance(arg, Node):
            value = self.env[arg]
            if value is None:
                raise UnsupportedOp(f"torch.onnx.export: the value {arg.name} has no ONNX counterpart (an unused "
                                    "result of a training-only op)")
            return value
        raise TypeError(f"expected a graph value, got {arg!r}")

    def dtype_of(self, arg):
        from pyctorch.fx import Node
        if isinstance(arg, Node):
            return _meta(arg).dtype
        if isinstance(arg, bool):
            return pyctorch.bool
        return pyctorch.int64 if isinstance(arg, int) else pyctorch.float32

    def tensor(self, arg, like=None):
        """A graph value, or a Python number as a constant of like's dtype."""
        from pyctorch.fx import Node
        if isinstance(arg, Node):
            return self.v(arg)
        dtype = _meta(like).dtype if like is not None else self.dtype_of(arg)
        return self.b.const(np.array(arg, dtype=np_dtype(dtype)))

    def ints(self, values):
        """A 1-d int64 tensor from a list of ints and size values (Note [ONNX lowering])."""
        from pyctorch.fx import Node
        values = list(values)
        if all(isinstance(x, int) for x in values):
            return self.b.const(np.array(values, dtype=np.int64))
        parts = [self.v(x) if isinstance(x, Node) else self.b.const(np.array([x], dtype=np.int64)) for x in values]
        return self.b.op("Concat", parts, axis=0)

    def scalar_int(self, x):
        """A 0-d int64 tensor from an int or a size value."""
        from pyctorch.fx import Node
        if isinstance(x, Node):
            return self.b.op("Squeeze", [self.v(x), self.b.const(np.array([0], dtype=np.int64))])
        return self.b.const(np.array(x, dtype=np.int64))

    # ---- the graph ----
    def run(self):
        out = None
        for node in self.ep.graph.nodes:
            if node.op == "placeholder":
                continue  # bound by the caller
            if node.op == "output":
                out = node.args[0]
                continue
            if node.target is operator.getitem:
                self.env[node] = self.env[node.args[0]][node.args[1]]
                continue
            if node.target in _SYM_BINARY:
                self.env[node] = self.b.op(_SYM_BINARY[node.target], [self.ints([x]) for x in node.args])
                continue
            name = getattr(node.target, "_opname", None)
            conv = _CONVERTERS.get(name)
            if conv is None:
                raise UnsupportedOp(f"torch.onnx.export: pyctorch has no ONNX lowering for {node.target} yet "
                                    f"(node {node.name})")
            self.env[node] = conv(self, node, _schema_bind(node))
        return out


_SYM_BINARY = {operator.mul: "Mul", operator.add: "Add", operator.sub: "Sub"}
_CONVERTERS = {}


def converter(*names):
    def register(fn):
        for n in names:
            _CONVERTERS[n] = fn
        return fn
    return register


# ---- elementwise ----
_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "neg": "Neg", "abs": "Abs", "erf": "Erf", "sin": "Sin", "cos": "Cos", "floor": "Floor", "ceil": "Ceil",
          "reciprocal": "Reciprocal", "logical_not": "Not", "sign": "Sign", "clone": "Identity",
          "contiguous": "Identity", "alias": "Identity", "detach": "Identity"}
for _name, _op in _UNARY.items():
    converter(_name)(lambda L, node, a, _op=_op: L.b.op(_op, [L.v(a["self"])]))


@converter("rsqrt")
def _rsqrt(L, node, a):
    return L.b.op("Reciprocal", [L.b.op("Sqrt", [L.v(a["self"])])])


@converter("silu")
def _silu(L, node, a):
    x = L.v(a["self"])
    return L.b.op("Mul", [x, L.b.op("Sigmoid", [x])])


def _binary(op_type):
    def conv(L, node, a):
        x, y = a["self"], a["other"]
        like = x if not isinstance(x, (int, float)) else y
        ys = L.tensor(y, like)
        if a.get("alpha", 1) not in (1, None):
            ys = L.b.op("Mul", [ys, L.tensor(a["alpha"], like)])
        return L.b.op(op_type, [L.tensor(x, like), ys])
    return conv


for _name, _op in {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "maximum": "Max", "minimum": "Min",
                   "eq": "Equal", "lt": "Less", "gt": "Greater", "le": "LessOrEqual", "ge": "GreaterOrEqual",
                   "pow": "Pow"}.items():
    converter(_name)(_binary(_op))


@converter("rsub")
def _rsub(L, node, a):
    return L.b.op("Sub", [L.tensor(a["other"], a["self"]), L.v(a["self"])])


@converter("gelu")
def _gelu(L, node, a):
    x = L.v(a["self"])
    dt = np_dtype(_meta(node).dtype)
    half, one = L.b.const(np.array(0.5, dt)), L.b.const(np.array(1.0, dt))
    if a.get("approximate", "none") == "tanh":
        cube = L.b.op("Mul", [L.b.op("Mul", [x, x]), x])
        inner = L.b.op("Add", [x, L.b.op("Mul", [cube, L.b.const(np.array(0.044715, dt))])])
        t = L.b.op("Tanh", [L.b.op("Mul", [inner, L.b.const(np.array(math.sqrt(2 / math.pi), dt))])])
    else:
        t = L.b.op("Erf", [L.b.op("Mul", [x, L.b.const(np.array(1 / math.sqrt(2), dt))])])
    return L.b.op("Mul", [L.b.op("Mul", [x, half]), L.b.op("Add", [t, one])])


@converter("softmax", "log_softmax")
def _softmax(L, node, a):
    x = L.v(a["self"])
    if a.get("dtype") is not None:
        x = L.b.op("Cast", [x], to=onnx_dtype(a["dtype"]))
    return L.b.op("Softmax" if node.target._opname == "softmax" else "LogSoftmax", [x], axis=a["dim"])


@converter("where")
def _where(L, node, a):
    like = a["self"] if not isinstance(a["self"], (int, float)) else a["other"]
    return L.b.op("Where", [L.v(a["condition"]), L.tensor(a["self"], like), L.tensor(a["other"], like)])


@converter("masked_fill")
def _masked_fill(L, node, a):
    return L.b.op("Where", [L.v(a["mask"]), L.tensor(a["value"], a["self"]), L.v(a["self"])])


@converter("to", "_to_copy", "type_as")
def _cast(L, node, a):
    return L.b.op("Cast", [L.v(a["self"])], to=onnx_dtype(_meta(node).dtype))


# ---- linear algebra ----
@converter("addmm")
def _addmm(L, node, a):
    return L.b.op("Gemm", [L.v(a["mat1"]), L.v(a["mat2"]), L.v(a["self"])], alpha=float(a["alpha"]),
                  beta=float(a["beta"]))


@converter("mm", "bmm", "matmul")
def _mm(L, node, a):
    return L.b.op("MatMul", [L.v(a["self"]), L.v(a.get("mat2", a.get("other")))])


# ---- views and shapes ----
@converter("permute")
def _permute(L, node, a):
    n = len(_meta(node).shape)
    return L.b.op("Transpose", [L.v(a["self"])], perm=[d % n for d in a["dims"]])


@converter("view", "reshape", "_unsafe_view")
def _view(L, node, a):
    return L.b.op("Reshape", [L.v(a["self"]), L.ints(a.get("size", a.get("shape")))])


@converter("expand")
def _expand(L, node, a):
    sizes = [1 if isinstance(s, int) and s == -1 else s for s in a["size"]]  # Expand broadcasts: 1 keeps a dim
    return L.b.op("Expand", [L.v(a["self"]), L.ints(sizes)])


@converter("unsqueeze")
def _unsqueeze(L, node, a):
    return L.b.op("Unsqueeze", [L.v(a["self"]), L.ints([a["dim"]])])


@converter("squeeze")
def _squeeze(L, node, a):
    dims = a.get("dim")
    if dims is None:
        return L.b.op("Squeeze", [L.v(a["self"])])
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    shape = _meta(a["self"]).shape
    dims = [d % len(shape) for d in dims if shape[d % len(shape)] == 1]  # torch leaves other dims alone
    return L.b.op("Squeeze", [L.v(a["self"]), L.ints(dims)]) if dims else L.b.op("Identity", [L.v(a["self"])])


@converter("slice")
def _slice(L, node, a):
    start = 0 if a["start"] is None else a["start"]
    end = 2 ** 62 if a["end"] is None else a["end"]
    return L.b.op("Slice", [L.v(a["self"]), L.ints([start]), L.ints([end]), L.ints([a["dim"]]),
                            L.ints([a["step"]])])


@converter("select")
def _select(L, node, a):
    return L.b.op("Gather", [L.v(a["self"]), L.scalar_int(a["index"])], axis=a["dim"])


@converter("split_with_sizes")
def _split(L, node, a):
    sizes = a["split_sizes"]
    return L.b.op("Split", [L.v(a["self"]), L.ints(sizes)], n_out=len(sizes), axis=a["dim"])


@converter("cat", "concat", "concatenate")
def _cat(L, node, a):
    return L.b.op("Concat", [L.v(t) for t in a["tensors"]], axis=a["dim"])


@converter("stack")
def _stack(L, node, a):
    dim = a["dim"]
    rank = len(_meta(node).shape)
    axis = L.ints([dim % rank])
    return L.b.op("Concat", [L.b.op("Unsqueeze", [L.v(t), axis]) for t in a["tensors"]], axis=dim % rank)


@converter("sym_size")
def _sym_size(L, node, a):
    d = a["dim"] % len(_meta(a["self"]).shape)
    return L.b.op("Shape", [L.v(a["self"])], start=d, end=d + 1)


# ---- factories ----
def _filled(L, node, a, value):
    dtype = a.get("dtype") or _meta(node).dtype
    tensor = _onnx().numpy_helper.from_array(np.array([value], dtype=np_dtype(dtype)))
    return L.b.op("ConstantOfShape", [L.ints(a["size"])], value=tensor)


converter("zeros")(lambda L, node, a: _filled(L, node, a, 0))
converter("ones")(lambda L, node, a: _filled(L, node, a, 1))


@converter("full")
def _full(L, node, a):
    return _filled(L, node, a, a["fill_value"])


@converter("arange")
def _arange(L, node, a):
    dtype = _meta(node).dtype
    start = a.get("start", 0)
    end, step = a["end"], a.get("step", 1)
    dt = np_dtype(dtype)

    def scalar(x):
        from pyctorch.fx import Node
        if isinstance(x, Node):
            s = L.scalar_int(x)
            return s if dt == np.int64 else L.b.op("Cast", [s], to=onnx_dtype(dtype))
        return L.b.const(np.array(x, dtype=dt))
    return L.b.op("Range", [scalar(start), scalar(end), scalar(step)])


# ---- neural-network layers ----
@converter("embedding")
def _embedding(L, node, a):
    return L.b.op("Gather", [L.v(a["weight"]), L.v(a["indices"])], axis=0)


@converter("convolution")
def _convolution(L, node, a):
    if a["transposed"]:
        raise UnsupportedOp("torch.onnx.export: transposed convolution has no ONNX lowering in pyctorch yet")
    k = len(_meta(a["weight"]).shape) - 2

    def per_dim(v):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return v * k if len(v) == 1 else v
    if isinstance(a["padding"], str):
        raise UnsupportedOp("torch.onnx.export: string padding has no ONNX lowering in pyctorch yet")
    pads = per_dim(a["padding"])
    inputs = [L.v(a["input"]), L.v(a["weight"])] + ([L.v(a["bias"])] if a["bias"] is not None else [])
    return L.b.op("Conv", inputs, strides=per_dim(a["stride"]), pads=pads + pads, dilations=per_dim(a["dilation"]),
                  group=a["groups"], kernel_shape=list(_meta(a["weight"]).shape[2:]))


def _pool_args(a, k):
    def per_dim(v, default):
        if v is None or (isinstance(v, (list, tuple)) and not v):
            v = default
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return v * k if len(v) == 1 else v
    kernel = per_dim(a["kernel_size"], None)
    stride = per_dim(a.get("stride"), kernel)
    pads = per_dim(a.get("padding", 0), [0])
    return kernel, stride, pads


@converter("max_pool2d", "max_pool1d")
def _max_pool(L, node, a):
    k = len(_meta(node).shape) - 2
    kernel, stride, pads = _pool_args(a, k)
    dil = a.get("dilation", 1)
    dil = list(dil) if isinstance(dil, (list, tuple)) else [dil]
    return L.b.op("MaxPool", [L.v(a["self"])], kernel_shape=kernel, strides=stride, pads=pads + pads,
                  dilations=dil * k if len(dil) == 1 else dil, ceil_mode=int(bool(a.get("ceil_mode", False))))


@converter("avg_pool2d", "avg_pool1d")
def _avg_pool(L, node, a):
    k = len(_meta(node).shape) - 2
    kernel, stride, pads = _pool_args(a, k)
    if a.get("divisor_override") is not None:
        raise UnsupportedOp("torch.onnx.export: avg_pool with divisor_override has no ONNX lowering in pyctorch")
    return L.b.op("AveragePool", [L.v(a["self"])], kernel_shape=kernel, strides=stride, pads=pads + pads,
                  ceil_mode=int(bool(a.get("ceil_mode", False))),
                  count_include_pad=int(bool(a.get("count_include_pad", True))))


@converter("adaptive_avg_pool2d", "adaptive_avg_pool1d")
def _adaptive_avg_pool(L, node, a):
    in_shape = _meta(a["self"]).shape
    out = list(a["output_size"]) if isinstance(a["output_size"], (list, tuple)) else [a["output_size"]]
    spatial = in_shape[-len(out):]
    if all(o == 1 for o in out):
        return L.b.op("GlobalAveragePool", [L.v(a["self"])])
    if not all(_static(s) and s % o == 0 for s, o in zip(spatial, out)):
        raise UnsupportedOp("torch.onnx.export: adaptive_avg_pool with an output size that does not divide the "
                            "input size has no ONNX lowering in pyctorch")
    kernel = [s // o for s, o in zip(spatial, out)]
    return L.b.op("AveragePool", [L.v(a["self"])], kernel_shape=kernel, strides=kernel)


@converter("native_batch_norm", "batch_norm")
def _batch_norm(L, node, a):
    if a["training"]:
        raise UnsupportedOp("torch.onnx.export: BatchNorm in training mode; call model.eval() before exporting")
    c = _meta(a["input"]).shape[1]
    dt = np_dtype(_meta(a["input"]).dtype)
    w = L.v(a["weight"]) if a["weight"] is not None else L.b.const(np.ones(c, dt))
    bias = L.v(a["bias"]) if a["bias"] is not None else L.b.const(np.zeros(c, dt))
    y = L.b.op("BatchNormalization", [L.v(a["input"]), w, bias, L.v(a["running_mean"]), L.v(a["running_var"])],
               epsilon=float(a["eps"]))
    return [y, None, None] if node.target._opname == "native_batch_norm" else y


@converter("native_layer_norm")
def _layer_norm(L, node, a):
    shape = list(a["normalized_shape"])
    dt = np_dtype(_meta(a["input"]).dtype)
    w = L.v(a["weight"]) if a["weight"] is not None else L.b.const(np.ones(shape, dt))
    bias = L.v(a["bias"]) if a["bias"] is not None else L.b.const(np.zeros(shape, dt))
    y = L.b.op("LayerNormalization", [L.v(a["input"]), w, bias], axis=-len(shape), epsilon=float(a["eps"]))
    return [y, None, None]


@converter("_flash_attention_cpu", "scaled_dot_product_attention")
def _attention(L, node, a):
    q, k, v = L.v(a["query"]), L.v(a["key"]), L.v(a["value"])
    qmeta = _meta(a["query"])
    dt = np_dtype(qmeta.dtype)
    rank = len(qmeta.shape)
    scale = a.get("scale")
    if scale is None:
        e = qmeta.shape[-1]
        if not _static(e):
            raise UnsupportedOp("torch.onnx.export: attention with a dynamic head size needs an explicit scale")
        scale = 1.0 / math.sqrt(e)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    scores = L.b.op("Mul", [L.b.op("MatMul", [q, L.b.op("Transpose", [k], perm=perm)]), L.b.const(np.array(scale, dt))])
    neg_inf = L.b.const(np.array(-np.inf, dt))
    if a.get("is_causal"):
        square = L.b.op("Shape", [scores], start=-2)
        ones = L.b.op("ConstantOfShape", [square], value=_onnx().numpy_helper.from_array(np.array([1], np.int64)))
        lower = L.b.op("Trilu", [ones], upper=0)
        hidden = L.b.op("Equal", [lower, L.b.const(np.array(0, np.int64))])
        scores = L.b.op("Where", [hidden, neg_inf, scores])
    mask = a.get("attn_mask")
    if mask is not None:
        if _meta(mask).dtype == pyctorch.bool:
            scores = L.b.op("Where", [L.v(mask), scores, neg_inf])
        else:
            scores = L.b.op("Add", [scores, L.v(mask)])
    out = L.b.op("MatMul", [L.b.op("Softmax", [scores], axis=-1), v])
    return [out, None] if node.target._opname == "_flash_attention_cpu" else out


def lower(ep, builder):
    """Convert ep's graph into builder's nodes; the placeholders must be bound in the returned Lowering's env
    before run() (the caller names inputs and initializers)."""
    return Lowering(ep, builder)
