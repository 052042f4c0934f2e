"""nn.Parameter: a Tensor subclass that modules register as a parameter (requires grad by default)."""
from .. import _C


class Parameter(_C.Tensor):
    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        return _C.Tensor._make_subclass(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + _C.Tensor.__repr__(self)

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.data, self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(_C.Tensor):
    """A tensor that assigning to a module attribute registers as a buffer (torch.nn.Buffer)."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty(0)
        t = _C.Tensor._make_subclass(cls, data, data.requires_grad)
        t.persistent = persistent
        return t
