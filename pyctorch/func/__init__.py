"""pyctorch.func (torch.func): composable function transforms (pyctorch/_functorch/)."""
from .._functorch.vmap import vmap
from .._functorch.eager_transforms import (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,  # noqa: F401
                                           linearize)
from .._functorch.functional_call import functional_call, stack_module_state
from .._functorch.extras import rearrange, functionalize, debug_unwrap, replace_all_batch_norm_modules_

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state", "linearize", "rearrange", "functionalize", "debug_unwrap",
           "replace_all_batch_norm_modules_"]
