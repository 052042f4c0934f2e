"""pyctorch.func (torch.func): so far functional_call; the transforms (vmap, grad, jacrev, ...) are
not implemented."""
from ..nn.utils.stateless import _functional_call as functional_call

__all__ = ["functional_call"]
