"""`torch.ops`: this module makes itself the operator registry object of pyctorch._ops.

torch's `torch.ops` is not a plain module but an object whose attributes are operator
namespaces created on first use (`torch.ops.aten`, `torch.ops.<library>`). Importing
`pyctorch.ops` (directly, through `pyctorch.ops` attribute access, or as `torch.ops` under the
alias) replaces this module in sys.modules with that object, `pyctorch._ops.ops`; the import
system hands back what sys.modules holds once the module has run.
"""
import sys

from ._ops import ops as _registry

sys.modules[__name__] = _registry
