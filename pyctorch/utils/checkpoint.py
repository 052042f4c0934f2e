"""Activation checkpointing: run a block without keeping its intermediates, recompute in backward.

`checkpoint(fn, *args, use_reentrant=False)` runs fn under no_grad, keeping only its inputs; the
backward re-runs fn with grad enabled and back-propagates through the recomputed graph, so
peak memory holds one block's activations at a time. Parameters used inside fn receive their
gradients from that inner backward (accumulated into .grad); torch.autograd.grad through a
checkpoint is not supported, as with torch's reentrant variant."""
import contextlib

import pyctorch as torch
from pyctorch.autograd.function import Function

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, anchor, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = torch.get_rng_state()
        ctx.inputs = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
        ctx.requires = [isinstance(a, torch.Tensor) and a.requires_grad for a in args]
        with torch.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = [a.detach().requires_grad_(r) if isinstance(a, torch.Tensor) else a
                  for a, r in zip(ctx.inputs, ctx.requires)]
        rng = contextlib.nullcontext()
        if ctx.preserve_rng_state:
            rng = _fork_rng(ctx.rng_state)
        with rng, torch.enable_grad():
            outputs = ctx.run_function(*inputs)
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, torch.Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(a.grad if isinstance(a, torch.Tensor) and r else None
                                          for a, r in zip(inputs, ctx.requires))


@contextlib.contextmanager
def _fork_rng(state):
    saved = torch.get_rng_state()
    torch.set_rng_state(state)
    try:
        yield
    finally:
        torch.set_rng_state(saved)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Runs function(*args) without storing its activations; they are recomputed in backward."""
    if use_reentrant is None:
        import warnings
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.")
        use_reentrant = True
    if kwargs:
        fn = function

        def function(*a):
            return fn(*a, **kwargs)
    if not torch.is_grad_enabled():
        return function(*args)
    # an anchor that requires grad makes the node exist even when no input requires grad
    # (parameters inside `function` still need the recomputation)
    anchor = torch.zeros((), requires_grad=True)
    return _Checkpoint.apply(function, preserve_rng_state, anchor, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Splits a sequence of modules into `segments` checkpointed chunks (the last one runs normally)."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(len(functions) // segments, 1)

    def run(start, end):
        def forward(x):
            for f in functions[start:end]:
                x = f(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    for f in functions[end if end >= 0 else 0:]:
        input = f(input)
    return input
