from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .linear import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from . import attention, extras  # noqa: F401  (old import paths)
from . import lazy  # noqa: F401,E402
from ._lazy_norm import *  # noqa: F401,F403,E402
