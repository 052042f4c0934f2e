"""Checkpoint save/load: pyctorch.save / pyctorch.load against torch.save / torch.load.

The state dict looks like a transformer's: 8 blocks of d=1024 (qkv 3072x1024, proj 1024x1024,
fc1 4096x1024, fc2 1024x4096, their biases and two layer norms), about 101M float32 parameters
(405 MB); --quick uses 2 blocks (25M). Cases:

  save to a path    pyctorch.save writes a temporary file, fsyncs it and renames it over the
                    target (an interrupted save never leaves a truncated checkpoint); torch.save
                    writes the file in place without fsync. Both compute CRC-32s.
  load from a path  each library loads the file it saved (weights_only=True, the default);
                    the file is in the page cache after the first call
  save / load BytesIO  the same through memory (no disk, no fsync)

Loads and the BytesIO cases run all of pyctorch's blocks, then all of torch's
(interleave=False): interleaved in one process, each framework allocates its ~400 MB from the
memory the other just freed, and glibc's heap trimming makes that lucky for one of them and
costly (100k page faults per call) for the other, whichever it happens to be. Saves to disk
stay interleaved, so both see the same disk and writeback state.

Target: ratio <= 1.0.
"""
import io
import os
import shutil
import sys
import tempfile

from _harness import setup, thread_list

TARGET = 1.0


def state_dict(m, blocks, d=1024):
    g = m.Generator().manual_seed(0)
    sd = {}
    for i in range(blocks):
        for name, shape in [("ln1.weight", (d,)), ("ln1.bias", (d,)), ("attn.qkv.weight", (3 * d, d)),
                            ("attn.qkv.bias", (3 * d,)), ("attn.proj.weight", (d, d)), ("attn.proj.bias", (d,)),
                            ("ln2.weight", (d,)), ("ln2.bias", (d,)), ("mlp.fc1.weight", (4 * d, d)),
                            ("mlp.fc1.bias", (4 * d,)), ("mlp.fc2.weight", (d, 4 * d)), ("mlp.fc2.bias", (d,))]:
            sd[f"blocks.{i}.{name}"] = m.randn(*shape, generator=g)
    return sd


def main():
    args, suite = setup("serialization", __doc__, threads="1")
    blocks = 2 if args.quick else 8
    tmp = tempfile.mkdtemp(prefix="bench_serialization_")
    try:
        sds = {id(m): state_dict(m, blocks) for m in suite.modules()}
        n_params = sum(t.numel() for t in next(iter(sds.values())).values())
        mb = n_params * 4 / 1e6
        params = "%dM params, %d MB" % (round(n_params / 1e6), round(mb))
        paths = {id(m): os.path.join(tmp, "%s.pt" % m.__name__) for m in suite.modules()}

        def gbps(s):
            return {"MB/s": mb / s}

        def save_path(m):
            return lambda: m.save(sds[id(m)], paths[id(m)])

        def durable_save(m):
            if m.__name__ != "torch":
                return save_path(m)

            def run():
                with open(paths[id(m)], "wb") as f:
                    m.save(sds[id(m)], f)
                    f.flush()
                    os.fsync(f.fileno())
            return run

        def load_path(m):
            m.save(sds[id(m)], paths[id(m)])
            return lambda: m.load(paths[id(m)])

        def save_bytesio(m):
            def run():
                buf = io.BytesIO()
                m.save(sds[id(m)], buf)
                buf.getvalue()
            return run

        def load_bytesio(m):
            buf = io.BytesIO()
            m.save(sds[id(m)], buf)
            data = buf.getvalue()
            return lambda: m.load(io.BytesIO(data))

        timing = dict(repeat=3 if args.quick else 7, min_block_s=0.0, number=1)
        in_memory = dict(timing, interleave=False)  # see the docstring
        for n in thread_list(args):
            suite.set_threads(n)
            suite.bench("save to path", params + " threads=%d" % n, save_path, target=TARGET, metrics=gbps, **timing)
            suite.bench("durable save", params + " threads=%d" % n, durable_save, target=TARGET, metrics=gbps,
                        **timing)
            suite.bench("load from path", params + " threads=%d" % n, load_path, target=TARGET, metrics=gbps,
                        **in_memory)
            suite.bench("save BytesIO", params + " threads=%d" % n, save_bytesio, target=TARGET, metrics=gbps,
                        **in_memory)
            suite.bench("load BytesIO", params + " threads=%d" % n, load_bytesio, target=TARGET, metrics=gbps,
                        **in_memory)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
