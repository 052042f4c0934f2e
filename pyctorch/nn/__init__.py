"""pyctorch.nn: modules, parameters, functional, init (thin Python over the C ops and autograd)."""
from .parameter import Parameter, Buffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from . import parallel  # noqa: F401,E402
from .parallel import DataParallel  # noqa: F401,E402
# torch.nn.attention (sdpa_kernel, SDPBackend, flex_attention's names); imported by its full name because the
# star import above already bound `attention` to nn.modules.attention
import importlib as _importlib  # noqa: E402
attention = _importlib.import_module(".attention", __name__)
from .parameter import UninitializedParameter, UninitializedBuffer  # noqa: F401,E402
