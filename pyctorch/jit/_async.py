"""torch.jit.fork / wait: here the forked call runs at once, on the calling thread (Note [Eager TorchScript]).

torch's fork also runs the function synchronously outside TorchScript; the Future it returns is already
complete, and an exception raised by the function propagates from fork itself, as here.
"""
import warnings

from ..futures import Future


def fork(func, *args, **kwargs):
    """Call func(*args, **kwargs) now and return a completed Future holding its result."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    result = func(*args, **kwargs)
    future = Future()
    future.set_result(result)
    return future


def wait(future):
    """The value of a Future made by fork (or any torch.futures.Future)."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    if not isinstance(future, Future):
        raise TypeError("wait(): incompatible function arguments. The following argument types are supported:\n"
                        f"    1. (arg0: torch._C.Future) -> object\n\nInvoked with: {future!r}")
    return future.wait()
