"""torch.distributed.checkpoint.hf_storage: the reader and writer names; DCP is not implemented yet."""
__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


class _NotImplementedStorage:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"pyctorch does not implement torch.distributed.checkpoint.hf_storage."
                                  f"{type(self).__name__} yet")


class HuggingFaceStorageReader(_NotImplementedStorage):
    """Reads a DCP checkpoint from safetensors files (not implemented yet)."""


class HuggingFaceStorageWriter(_NotImplementedStorage):
    """Writes a DCP checkpoint as safetensors files (not implemented yet)."""
