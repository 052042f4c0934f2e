"""torch.backends.mkldnn: pyctorch does not use oneDNN (is_available() is False); `enabled` is stored."""
__all__ = ["is_available", "enabled"]

enabled = True


def is_available():
    return False
