"""Data loading throughput: the same DataLoader loop in the candidate and in torch.

Cases (one call = one epoch, or one batch for get_batch; metric: batches/s):
  * images: a map-style dataset of 2048 (3x32x32 float32 tensor, int label) samples,
    shuffled batches of 64 -> (64x3x32x32 float32, 64 int64), with 0, 1 and 2 workers
    (persistent workers, so an epoch measures loading, not process start-up);
  * tokens: a memory-mapped uint16 token file (numpy.memmap, 8 MB, in a temporary
    directory) read the way language-model trainers do: random offsets i, samples
    torch.from_numpy(arr[i:i+T].astype(np.int64)) (input and shifted target), stacked
    into (B, T) = (32, 256) int64 batches: the nanoGPT get_batch function (no DataLoader),
    and a map-style dataset of windows under a DataLoader with 0 and 2 workers (offsets drawn
    with replacement: RandomSampler(replacement=True, num_samples=32 batches)).
Target: candidate time / torch time <= 1.0 (data loading at least as fast as torch's).
"""
import os
import sys
import tempfile

import numpy as np

from _harness import setup, thread_list

TARGET = 1.0
N_IMAGES, IMAGE_BATCH = 2048, 64
N_TOKENS, LM_B, LM_T, LM_BATCHES = 4 * 1024 * 1024, 32, 256, 32


class ImageDataset:
    """(3x32x32 float32 tensor, int label) samples kept in memory, as after decoding."""

    def __init__(self, m, n):
        g = m.Generator().manual_seed(0)
        self.images = [m.rand(3, 32, 32, generator=g) for _ in range(n)]
        self.labels = [i % 10 for i in range(n)]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


class TokenWindows:
    """Sample i: (tokens[i:i+T], tokens[i+1:i+1+T]) as int64 tensors, from a uint16 memmap."""

    def __init__(self, m, path, n_tokens, t):
        self.m, self.path, self.n_tokens, self.t = m, path, n_tokens, t
        self.tokens = None  # opened lazily, in each worker

    def __len__(self):
        return self.n_tokens - self.t - 1

    def __getitem__(self, i):
        if self.tokens is None:
            self.tokens = np.memmap(self.path, dtype=np.uint16, mode="r")
        a = self.tokens
        return (self.m.from_numpy(a[i:i + self.t].astype(np.int64)),
                self.m.from_numpy(a[i + 1:i + 1 + self.t].astype(np.int64)))

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "tokens"} | {"tokens": None}


def epoch_loop(m, dataset, **kw):
    data = m.utils.data
    loader = data.DataLoader(dataset, persistent_workers=kw.get("num_workers", 0) > 0, **kw)
    iter(loader)  # start persistent workers before timing

    def run():
        for _ in loader:
            pass
    run.loader = loader
    return run


def get_batch(m, path, b, t):
    """nanoGPT's get_batch: a fresh memmap per call, random offsets, from_numpy + stack."""
    def run():
        data = np.memmap(path, dtype=np.uint16, mode="r")
        ix = m.randint(len(data) - t, (b,))
        x = m.stack([m.from_numpy((data[i:i + t]).astype(np.int64)) for i in ix])
        y = m.stack([m.from_numpy((data[i + 1:i + 1 + t]).astype(np.int64)) for i in ix])
        return x, y
    return run


def per_second(batches):
    return lambda s: {"batches/s": batches / s}


def main():
    args, suite = setup("data", __doc__, threads="1")
    tmp = tempfile.mkdtemp(prefix="bench_data_")
    path = os.path.join(tmp, "tokens.bin")
    np.random.default_rng(0).integers(0, 50257, N_TOKENS, dtype=np.uint16).tofile(path)
    n_images = N_IMAGES // (4 if args.quick else 1)
    img_batches = n_images // IMAGE_BATCH
    try:
        for n in thread_list(args):
            suite.set_threads(n)
            for workers in (0, 1, 2):
                suite.bench("images 64x3x32x32", f"workers={workers} threads={n}",
                            lambda m, w=workers: epoch_loop(m, ImageDataset(m, n_images), batch_size=IMAGE_BATCH,
                                                            shuffle=True, num_workers=w),
                            target=TARGET, metrics=per_second(img_batches))
            suite.bench("tokens get_batch", f"B={LM_B} T={LM_T} threads={n}",
                        lambda m: get_batch(m, path, LM_B, LM_T), target=TARGET, metrics=per_second(1))
            for workers in (0, 2):
                suite.bench("tokens DataLoader", f"B={LM_B} T={LM_T} workers={workers} threads={n}",
                            lambda m, w=workers: epoch_loop(
                                m, TokenWindows(m, path, N_TOKENS, LM_T), batch_size=LM_B, num_workers=w,
                                sampler=m.utils.data.RandomSampler(range(N_TOKENS - LM_T - 1), replacement=True,
                                                                   num_samples=LM_B * LM_BATCHES)),
                            target=TARGET, metrics=per_second(LM_BATCHES))
    finally:
        os.remove(path)
        os.rmdir(tmp)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
