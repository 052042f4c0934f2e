from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .linear import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
