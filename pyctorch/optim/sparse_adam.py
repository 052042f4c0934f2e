"""SparseAdam, as torch.optim.SparseAdam.

Note [SparseAdam without sparse tensors]: torch's SparseAdam updates only the entries a sparse
gradient holds and raises for dense gradients. pyctorch's sparse COO tensors (pyctorch/_sparse_coo.py)
cannot be Parameters and nn.Embedding(sparse=True) still gives dense gradients, so a parameter's
gradient is dense and step() raises torch's error for any parameter that has one; construction, the
checks, state_dict() and load_state_dict() (state: integer step, exp_avg, exp_avg_sq) behave as
torch's, so code that builds the optimizer, or loads a torch-saved one, runs unchanged.
"""
import pyctorch as torch

from .optimizer import Optimizer, _closure_loss

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam for sparse gradients: only the gradient's stored entries update moments and parameters."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params = [[gi, pi] for gi, group in enumerate(self.param_groups)
                         for pi, p in enumerate(group["params"]) if p.is_sparse]
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")

    def step(self, closure=None):
        """Perform a single optimization step (raises for dense gradients: Note [SparseAdam without
        sparse tensors])."""
        with torch.no_grad():
            loss = _closure_loss(closure)
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None and not p.grad.is_sparse:
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
