"""The function transforms behind pyctorch.func (torch.func): vmap, grad, vjp, jvp, jacrev, jacfwd, hessian."""
