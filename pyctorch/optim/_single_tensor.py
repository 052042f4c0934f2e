"""Checks shared by the single-tensor update functions of the optimizers added after the first
set (Adadelta, ASGD, Rprop, Adafactor): each mirrors a check torch's functional API makes."""
import pyctorch as torch

__all__ = []


def _capturable_devices(supports_xla=True):
    """The device types torch lets capturable=True run on (pyctorch has none of them: the CPU
    never qualifies, so capturable=True raises on every tensor as torch's CPU build does)."""
    devices = ["cuda", "xpu", "hpu", "privateuseone"]
    if supports_xla:
        devices.append("xla")
    return devices


def _require_capturable_devices(tensors, what, supports_xla=True):
    """Raise torch's AssertionError unless every tensor sits on one capturable device type."""
    devices = _capturable_devices(supports_xla)
    first = tensors[0].device.type
    if first not in devices or any(t.device.type != first for t in tensors):
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: {devices}.")


def _check_functional_call(state_steps, foreach, differentiable):
    """The two argument checks torch's functional optimizers start with."""
    if not all(isinstance(t, torch.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    if foreach and differentiable:
        # torch's foreach path asserts this; pyctorch runs the single-tensor loop for foreach too
        raise AssertionError("_foreach ops don't support autograd")


def _reject_sparse_grad(grad, name):
    if getattr(grad, "is_sparse", False):
        raise RuntimeError(f"{name} does not support sparse gradients")
