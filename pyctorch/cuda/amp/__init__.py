"""torch.cuda.amp without CUDA: what torch's CPU-only build gives.

GradScaler and autocast disable themselves when CUDA is absent (torch warns, then passes
everything through unchanged), so scripts written for mixed precision on a GPU still run
in full float32 precision here.
"""
import functools
import warnings

__all__ = ["GradScaler", "autocast", "custom_fwd", "custom_bwd"]


class GradScaler:
    """Loss scaling for float16 training; disabled without CUDA: scale() returns its input,
    step() is optimizer.step(), update() and unscale_() do nothing, get_scale() is 1.0."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
        self._enabled = False
        self._init_scale, self._growth_factor = init_scale, growth_factor
        self._backoff_factor, self._growth_interval = backoff_factor, growth_interval

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass


class autocast:
    """Context manager / decorator for CUDA autocasting; disabled without CUDA (no casting)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        if enabled:
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                          UserWarning, stacklevel=2)
        self.fast_dtype, self._enabled = dtype, False

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Decorator for a custom Function's forward: nothing to cast without CUDA autocast."""
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd=None):
    if bwd is None:
        return lambda f: f
    return bwd
