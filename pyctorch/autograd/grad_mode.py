"""Grad-mode switches: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each is a context manager and a decorator (also of generator functions), as in torch.
The mode itself is a thread-local flag in C read by the recorder before every op."""
import functools
import inspect

from .. import _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

is_grad_enabled = _C.is_grad_enabled
_inference_depth = [0]


def is_inference_mode_enabled():
    return _inference_depth[0] > 0


class _DecoratorContextManager:
    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("decorating classes is not supported")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen(*args, **kwargs):
                g = func(*args, **kwargs)
                with self.clone():
                    resp = g.send(None)
                while True:
                    try:
                        with self.clone():
                            req = yield resp
                        with self.clone():
                            resp = g.send(req)
                    except StopIteration as e:
                        return e.value
            return gen

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also a bare decorator, as in torch: `@no_grad` (no call) decorates the function itself."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disables gradient recording inside the block."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Enables gradient recording inside the block (e.g. within no_grad)."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on construction (so it also works as a plain call) and restores it on exit."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __call__(self, func):
        _C._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self):
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad (pyctorch records nothing in either); inference_mode(False) is a no-op."""

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        if self.mode:
            self.prev = _C.is_grad_enabled()
            _inference_depth[0] += 1
            _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        if self.mode:
            _inference_depth[0] -= 1
            _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)
