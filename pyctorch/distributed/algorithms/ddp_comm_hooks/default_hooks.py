"""torch's default DDP communication hooks. A hook takes (state, bucket) -- state is a process
group or None for the default group, bucket a GradBucket -- and returns a Future whose value is
the bucket's averaged flat gradient (a tensor or a list of one tensor)."""
import pyctorch as torch
import pyctorch.distributed as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook", "fp16_compress_wrapper",
           "bf16_compress_wrapper"]


def _group(process_group):
    return dist.group.WORLD if process_group is None else process_group


def _allreduce_fut(process_group, tensor):
    """Averages tensor in place across the group (divide first, then sum); a Future of it."""
    group = _group(process_group)
    tensor.div_(group.size())
    work = dist.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """DDP's own reduction as a hook: the bucket's buffer summed over ranks and divided by their
    number (the division happens before the sum)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compressed_allreduce(dtype, process_group, bucket):
    group = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())
    work = dist.all_reduce(compressed, group=group, async_op=True)

    def decompress(fut):
        buffer.copy_(fut.value()[0])  # back to the bucket's dtype, in its own buffer
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Casts the bucket to float16, divides by the world size, all-reduces, and writes the result
    back into the bucket's buffer in its dtype."""
    return _compressed_allreduce(torch.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """fp16_compress_hook with bfloat16."""
    return _compressed_allreduce(torch.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapper(hook_state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(f):
            value = f.value()
            buffer.copy_(value[0] if isinstance(value, (list, tuple)) else value)
            return buffer

        return fut.then(decompress)

    return wrapper


def fp16_compress_wrapper(hook):
    """Wraps a hook so that it runs on a float16 copy of the bucket, the result cast back."""
    return _compress_wrapper(torch.float16, hook)


def bf16_compress_wrapper(hook):
    """fp16_compress_wrapper with bfloat16."""
    return _compress_wrapper(torch.bfloat16, hook)
