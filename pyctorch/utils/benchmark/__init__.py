"""torch.utils.benchmark for pyctorch: Timer, Measurement and Compare (Python statements only;
the fuzzers and Callgrind collection are not implemented)."""
from .utils.common import *  # noqa: F401,F403
from .utils.timer import *  # noqa: F401,F403
from .utils.compare import *  # noqa: F401,F403
