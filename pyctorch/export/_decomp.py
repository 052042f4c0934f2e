"""ExportedProgram.run_decompositions: the graph traced again with some ops replaced by simpler ones.

torch's default table lowers to its "core ATen" set. pyctorch's captured graphs already hold the op table's
ops (nn.functional's compositions are traced through), so the default table here does the part of torch's
lowering that applies to them: the transposes become `permute`, `reshape`/`flatten`/`view_as` become `view`
(with a `clone` first where the input is not contiguous, as reshape copies then), `matmul` becomes `mm`/`bmm`
on views, `split`/`chunk` become `split_with_sizes`, `expand_as` becomes `expand`. A decomposition is a
Python function over `torch.ops.aten` calls; it runs on the real tensors of the retrace, so it may read
shapes and strides.
"""
import pyctorch
from pyctorch.fx import Interpreter

__all__ = ["default_decompositions", "retrace"]


def _aten():
    return pyctorch.ops.aten


def _permute_2d(x):
    return _aten().permute.default(x, [1, 0]) if x.dim() == 2 else x


def _transpose(x, dim0, dim1):
    n = max(x.dim(), 1)
    perm = list(range(x.dim()))
    if x.dim():
        perm[dim0 % n], perm[dim1 % n] = perm[dim1 % n], perm[dim0 % n]
    return _aten().permute.default(x, perm)


def _reshape(x, shape):
    if not x.is_contiguous():
        x = _aten().clone.default(x, memory_format=pyctorch.contiguous_format)
    return _aten().view.default(x, list(shape))


def _flatten(x, start_dim=0, end_dim=-1):
    if x.dim() == 0:
        return _reshape(x, [1])
    s, e = start_dim % x.dim(), end_dim % x.dim()
    n = 1
    for d in range(s, e + 1):
        n *= x.shape[d]
    return _reshape(x, list(x.shape[:s]) + [n] + list(x.shape[e + 1:]))


def _matmul(a, b):
    aten = _aten()
    if a.dim() == 2 and b.dim() == 2:
        return aten.mm.default(a, b)
    if a.dim() >= 3 and b.dim() == 2:
        rows = _reshape(a, [-1, a.shape[-1]])
        return aten.view.default(aten.mm.default(rows, b), list(a.shape[:-1]) + [b.shape[-1]])
    if a.dim() == 3 and b.dim() == 3 and a.shape[0] == b.shape[0]:
        return aten.bmm.default(a, b)
    return aten.matmul.default(a, b)


def _split(x, split_size, dim=0):
    if isinstance(split_size, (list, tuple)):
        return _aten().split_with_sizes.default(x, list(split_size), dim)
    size = x.shape[dim]
    sizes = [split_size] * (size // split_size) + ([size % split_size] if size % split_size else [])
    return _aten().split_with_sizes.default(x, sizes or [0], dim)


def _chunk(x, chunks, dim=0):
    size = x.shape[dim]
    step = -(-size // chunks)
    return _split(x, step, dim)


def default_decompositions():
    """{OpOverload: decomposition}: what run_decompositions() replaces by default (see the module docstring)."""
    aten = _aten()
    return {
        aten.t.default: _permute_2d,
        aten.transpose.int: _transpose,
        aten.swapaxes.default: _transpose,
        aten.swapdims.default: _transpose,
        aten.reshape.default: _reshape,
        aten.flatten.using_ints: _flatten,
        aten.view_as.default: lambda x, other: aten.view.default(x, list(other.shape)),
        aten.reshape_as.default: lambda x, other: _reshape(x, list(other.shape)),
        aten.expand_as.default: lambda x, other: aten.expand.default(x, list(other.shape)),
        aten.matmul.default: _matmul,
        aten.split.Tensor: _split,
        aten.chunk.default: _chunk,
    }


class _Decomposing(Interpreter):
    def __init__(self, module, table):
        super().__init__(module)
        self.table = table

    def call_function(self, target, args, kwargs):
        fn = self.table.get(target)
        if fn is not None:
            return fn(*args, **kwargs)
        return target(*args, **kwargs)


def retrace(ep, table):
    """ep captured again (same inputs, same dynamic dims) while its graph runs with table's decompositions."""
    from . import _export
    from .graph_signature import InputKind
    gm = ep.module()
    gm.forward = lambda *leaves: _Decomposing(gm, table).run(*leaves)
    args, kwargs = ep.example_inputs
    leaves, in_spec = pyctorch.utils._pytree.tree_flatten((tuple(args), dict(kwargs)))
    per_leaf = [dict() for _ in leaves]
    for sym in ep._symbols:
        for leaf, d in sym.sources:
            per_leaf[leaf][d] = sym.index
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
    new = _export(gm, tuple(args), dict(kwargs), leaves, in_spec, ep._symbols, per_leaf, names)
    # the unlifted module holds ep's lifted constants as buffers: they stay constants
    lifted = set(ep.graph_signature.lifted_tensor_constants)
    for spec in new.graph_signature.input_specs:
        if spec.kind == InputKind.BUFFER and spec.target in lifted:
            spec.kind, spec.persistent = InputKind.CONSTANT_TENSOR, None
    return new
