"""aten operators that graphs need and pyctorch's op table lacks, written in Python over the table's ops.

torch.export records basic indexing as `aten.slice.Tensor` / `aten.select.int` and reads a dynamic size with
`aten.sym_size.int`; the table has `select` but slices through the indexing code and has no size op, so these
two are added to `torch.ops.aten` here (with torch's schemas). They run eagerly like any overload.
"""

__all__ = ["extra_specs"]


def _slice(self, dim=0, start=None, end=None, step=1):
    index = [slice(None)] * self.dim()
    index[dim] = slice(start, end, step)
    return self[tuple(index)]


def _sym_size(self, dim):
    return self.size(dim)


class _ExtraSpec:
    """One overload of an operator written here: the OverloadSpec fields _ops reads, and the function."""
    is_out = is_inplace = False
    entry_id = None

    def __init__(self, op_name, overload, schema, fn):
        self.op_name, self.overload, self.schema, self.custom_op = op_name, overload, schema, fn


def extra_specs():
    return {
        "slice": {"Tensor": _ExtraSpec("slice", "Tensor", "aten::slice.Tensor(Tensor(a) self, int dim=0, "
                                       "SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)", _slice)},
        "sym_size": {"int": _ExtraSpec("sym_size", "int", "aten::sym_size.int(Tensor self, int dim) -> SymInt",
                                       _sym_size)},
    }
