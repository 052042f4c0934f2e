"""Autograd Functions the nn modules use (torch.nn.modules._functions): BackwardHookFunction, the identity whose
node carries a module's full backward hooks (see Module.register_full_backward_hook)."""
from ...autograd.function import Function

__all__ = ["BackwardHookFunction"]


class BackwardHookFunction(Function):
    """Identity on its tensor arguments; its node is where a module's backward hooks attach. The outputs of
    arguments that do not require grad are non-differentiable (their gradients arrive as zeros, as torch's)."""

    @staticmethod
    def forward(ctx, *args):
        outs = tuple(a.view_as(a) for a in args)
        ctx.mark_non_differentiable(*[o for a, o in zip(args, outs) if not a.requires_grad])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        return grads
