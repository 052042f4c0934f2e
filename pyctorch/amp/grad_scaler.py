"""torch.amp.GradScaler: dynamic loss scaling for float16 training.

scale(loss) multiplies by the current scale; step(optimizer) unscales the gradients (once
per optimizer per iteration, through the fused _amp_foreach_non_finite_check_and_unscale_
op) and skips optimizer.step() when any of them is inf/NaN; update() backs the scale off
after a skipped step and grows it after `growth_interval` clean ones (_amp_update_scale_).
The scale and the growth tracker are 0-d tensors, as in torch."""
import enum
import inspect
import warnings
from collections import abc, defaultdict

from .. import _C

__all__ = ["OptState", "GradScaler"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _cuda_available():
    from .. import cuda
    return cuda.is_available()


class GradScaler:
    """Scales the loss so float16 gradients do not underflow, and undoes it before the step.

    Typical use:
        scaler = torch.amp.GradScaler("cpu")
        with torch.autocast("cpu", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not _cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # made on the first scale() call
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = _C.full((), self._init_scale, dtype=_C.float32, device=dev)
        self._growth_tracker = _C.full((), self._init_growth_tracker, dtype=_C.int32, device=dev)

    def scale(self, outputs):
        """outputs (a tensor or an iterable of tensors) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        def apply(val):
            if isinstance(val, _C.Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device, non_blocking=True)
            if isinstance(val, abc.Iterable):
                it = map(apply, val)
                return type(val)(it) if isinstance(val, (list, tuple)) else it
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        # gradients grouped by dtype: one fused call per group
        by_dtype = defaultdict(list)
        with _no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, _C.Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype == _C.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    by_dtype[param.grad.dtype].append(param.grad)
            for grads in by_dtype.values():
                _C._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        return {found_inf.device: found_inf}

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (in place), noting infs/NaNs. Optional:
        step() does it when it was not called; at most once per optimizer per update()."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, then rounded once (float32 division can be imprecise)
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _C.full((), 0.0, dtype=_C.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """unscale_(optimizer) if not done yet, then optimizer.step(*args, **kwargs) unless a gradient
        was inf/NaN. Returns what optimizer.step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            # the optimizer unscales and skips by itself (fused kernels read grad_scale / found_inf)
            kwargs_ = kwargs
            has_kwarg = "grad_scaler" in inspect.signature(optimizer.step).parameters
            if has_kwarg:
                warnings.warn("GradScaler is going to stop passing itself as a keyword argument to the passed "
                              "optimizer. In the near future GradScaler registers `grad_scale: Tensor` and "
                              "`found_inf: Tensor` to the passed optimizer and let the optimizer use them directly.",
                              FutureWarning, stacklevel=2)
                kwargs_.update({"grad_scaler": self})
            else:
                if state["stage"] is OptState.READY:
                    self._check_inf_per_device(optimizer)
                scaler = self._scale
                found_inf = sum(t.to(scaler.device, non_blocking=True)
                                for t in state["found_inf_per_device"].values())
                optimizer.grad_scale = (getattr(optimizer, "grad_scale", None) if state["stage"] == OptState.UNSCALED
                                        else scaler * getattr(optimizer, "grad_scale", 1))
                optimizer.found_inf = found_inf
            retval = optimizer.step(*args, **kwargs_)
            state["stage"] = OptState.STEPPED
            if not has_kwarg:
                del optimizer.grad_scale
                del optimizer.found_inf
            return retval
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Backs the scale off if any step was skipped, grows it after growth_interval clean steps;
        or sets it to new_scale (a float or a 1-element tensor)."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, _C.Tensor) or new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [f.to(device=_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for f in found_infs[1:]:
                combined += f
            _C._amp_update_scale_(_scale, _growth_tracker, combined, self._growth_factor, self._backoff_factor,
                                  self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
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

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}; {} when
        disabled."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                     "or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = _C.full((), 1.0, dtype=_C.float32, device=_scale.device)
        found_inf = _C.full((), 0.0, dtype=_C.float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()
