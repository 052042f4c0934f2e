"""torch.testing: assert_close (torch's tolerances and messages) and make_tensor."""
from ._comparison import assert_allclose, assert_close  # noqa: F401
from ._creation import make_tensor  # noqa: F401

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
