"""repr of a sparse COO tensor, laid out as torch lays it out:
tensor(indices=tensor([[...]]),
       values=tensor([...]),
       size=(..), nnz=.., layout=torch.sparse_coo)"""
from . import _tensor_str


def _part(prefix, t, indent):
    body = _tensor_str.tensor_str(t.detach(), indent + len(prefix))
    if t.numel() == 0:
        body += ", size=" + str(tuple(t.shape))
    return prefix + body + ")"


def sparse_repr(t):
    import pyctorch
    indent = len("tensor(")
    values = t._sp_values
    suffixes = []
    if values.device.type != "cpu":
        suffixes.append("device='" + str(values.device) + "'")
    suffixes.append("size=" + str(tuple(t._sp_size)))
    suffixes.append("nnz=" + str(values.shape[0]))
    default = pyctorch.get_default_dtype()
    default_complex = pyctorch.complex128 if default == pyctorch.float64 else pyctorch.complex64
    if values.dtype not in (default, default_complex, pyctorch.int64, pyctorch.bool):
        suffixes.append("dtype=" + repr(values.dtype))
    suffixes.append("layout=torch.sparse_coo")
    grad_label = _tensor_str._grad_fn_label(values)
    if grad_label is not None:
        suffixes.append("grad_fn=<" + grad_label + ">")
    elif values.requires_grad:
        suffixes.append("requires_grad=True")
    body = _part("indices=tensor(", t._sp_indices, indent) + ",\n" + " " * indent + \
        _part("values=tensor(", values, indent)
    # torch starts the suffixes of a sparse tensor on their own line, then fills lines as usual
    head = "tensor(" + body + ",\n" + " " * indent + suffixes[0]
    return _tensor_str._join_suffixes(head, suffixes[1:], indent)
