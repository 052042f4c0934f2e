"""pyctorch.random: seeds and state of the default CPU generator (torch.random).

The generator itself (``pyctorch.Generator``, ``pyctorch.default_generator``) is
written in C (csrc/python/generator.c) and reproduces torch's CPU generator bit for
bit, state layout included, so ``torch.set_rng_state(torch.tensor(
pyctorch.get_rng_state().numpy()))`` continues the same stream in torch.
"""
import contextlib
import warnings

from ._C import Generator, default_generator  # noqa: F401

__all__ = [
    "set_rng_state",
    "get_rng_state",
    "manual_seed",
    "seed",
    "initial_seed",
    "fork_rng",
    "thread_safe_generator",
]


def _device_module(device_type):
    """pyctorch.<device_type> (e.g. pyctorch.cuda) when it exists, else None."""
    import importlib

    try:
        return importlib.import_module(f"{__package__}.{device_type}")
    except ImportError:
        return None


def _seed_devices(seed):
    # Seeds the accelerator generators too, as torch.manual_seed does (when pyctorch.cuda
    # provides them; without a GPU backend there is nothing to seed).
    cuda = _device_module("cuda")
    if cuda is None:
        return
    seed_all = getattr(cuda, "manual_seed_all", None)
    if seed_all is not None:  # lazy, as torch's: it records the seed and loads nothing
        seed_all(seed)


def set_rng_state(new_state) -> None:
    r"""Sets the random number generator state (a ``torch.ByteTensor`` of torch's layout).

    .. note:: This function only works for CPU.
    """
    default_generator.set_state(new_state)


def get_rng_state():
    r"""Returns the random number generator state as a ``torch.ByteTensor``."""
    return default_generator.get_state()


def manual_seed(seed):
    r"""Sets the seed for generating random numbers on all devices; returns the default
    ``Generator``. Values in ``[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]`` are
    accepted; negative ones are taken modulo 2**64, as in torch."""
    seed = int(seed)
    _seed_devices(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    r"""Seeds the generators from a non-deterministic source; returns the 64-bit seed."""
    s = default_generator.seed()
    _seed_devices(s)
    return s


def initial_seed() -> int:
    r"""Returns the initial seed of the default CPU generator."""
    return default_generator.initial_seed()


_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Forks the RNG: on exit the CPU generator (and the given devices' generators, when
    the device backend exists) is restored to the state it had on entry.

    Args:
        devices (iterable of device ids): devices whose RNG to fork as well.
        enabled (bool): if ``False``, the RNG is not forked.
        device_type (str): device type of ``devices`` (default ``"cuda"``).
    """
    global _fork_rng_warned_already
    if device_type == "meta" or not enabled:
        yield
        return
    device_type = device_type or "cuda"
    device_mod = _device_module(device_type)
    if device_mod is not None and not (hasattr(device_mod, "get_rng_state") and hasattr(device_mod, "set_rng_state")):
        device_mod = None
    if device_mod is None:
        devices = []
    elif devices is None:
        count = getattr(device_mod, "device_count", lambda: 0)()
        if count > 1 and not _fork_rng_warned_already:
            warnings.warn(
                f"{device_type.upper()} reports that you have {count} available devices, and you have used "
                f"{_caller} without explicitly specifying which devices are being used. For safety, we initialize "
                f"*every* {device_type.upper()} device by default, which can be quite slow if you have a lot of "
                f"{device_type.upper()}s. Set the '{_devices_kw}' keyword argument of {_caller} to the devices "
                "you are actually using to suppress this warning.",
                stacklevel=2,
            )
            _fork_rng_warned_already = True
        devices = list(range(count))
    else:
        devices = list(devices)

    cpu_rng_state = get_rng_state()
    device_rng_states = [device_mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)
        for d, state in zip(devices, device_rng_states):
            device_mod.set_rng_state(state, d)


def thread_safe_generator():
    """The calling DataLoader thread worker's generator, or None (use the default generator)."""
    try:
        from .utils.data import get_worker_info
    except ImportError:
        return None
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and getattr(info, "rng", None) is not None:
        return info.rng.torch_generator
    return None
