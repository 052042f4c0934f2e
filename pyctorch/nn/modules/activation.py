"""Activation modules: each wraps its functional form."""
import pyctorch as torch
from .module import Module
from ..parameter import Parameter
from .. import functional as F

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "Softplus", "ELU", "Hardtanh", "PReLU"]


def _activation(name, fn, params=(), repr_fmt=None):
    """A module class wrapping a functional activation; `params` are (name, default) pairs."""
    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = dict(params)
        for (k, _), v in zip(params, args):
            values[k] = v
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        for k, v in values.items():
            setattr(self, k, v)

    def forward(self, input):
        return fn(input, *[getattr(self, k) for k, _ in params])

    def extra_repr(self):
        if repr_fmt is None:
            return ""
        return repr_fmt.format(**{k: getattr(self, k) for k, _ in params})
    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr})


ReLU = _activation("ReLU", F.relu, (("inplace", False),))
ReLU.extra_repr = lambda self: "inplace=True" if self.inplace else ""
ReLU6 = _activation("ReLU6", F.relu6, (("inplace", False),))
ReLU6.extra_repr = lambda self: "inplace=True" if self.inplace else ""
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, (("negative_slope", 0.01), ("inplace", False)),
                        "negative_slope={negative_slope}")
GELU = _activation("GELU", F.gelu, (("approximate", "none"),), "approximate='{approximate}'")
SiLU = _activation("SiLU", F.silu, (("inplace", False),))
Mish = _activation("Mish", F.mish, (("inplace", False),))
Sigmoid = _activation("Sigmoid", F.sigmoid)
Tanh = _activation("Tanh", F.tanh)
Softplus = _activation("Softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0)),
                       "beta={beta}, threshold={threshold}")
ELU = _activation("ELU", F.elu, (("alpha", 1.0), ("inplace", False)), "alpha={alpha}")
Hardtanh = _activation("Hardtanh", F.hardtanh, (("min_val", -1.0), ("max_val", 1.0), ("inplace", False)),
                       "min_val={min_val}, max_val={max_val}")
Softmax = _activation("Softmax", F.softmax, (("dim", None),), "dim={dim}")
LogSoftmax = _activation("LogSoftmax", F.log_softmax, (("dim", None),), "dim={dim}")


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(torch.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
