"""torch.distributed.checkpoint (DCP): not implemented in pyctorch yet.

Only the names libraries import unconditionally exist (hf_storage's reader and writer, which
transformers imports whenever torch.distributed is available); making one raises
NotImplementedError.
"""
