"""Memory-bound elementwise ops and reduction on 16M float32 elements.

Each op runs in two forms: "out=" (writes a preallocated tensor, no
allocation noise) and "alloc" (plain form, allocates its result).  GB/s counts
the bytes an op must move at least: add/mul read 2 arrays and write 1, exp
reads 1 and writes 1, sum reads 1.  "bw%" is that GB/s as a percentage of the
machine bandwidth measured with a STREAM-like numpy copy/add/triad (single
thread; the best of the three).
Targets: ratio <= 1.0 (candidate time / torch time) for every case, and
bw% >= 80 for the non-allocating cases (out= forms and sum; the alloc forms
pay page faults for a fresh 64 MB result on every call, so they are judged by
ratio only).  exp may be compute-bound on few cores.
"""
import sys

import numpy as np

from _harness import rand, setup, thread_list, time_calls

TARGET = 1.0
MIN_BW_PCT = 80
N = 16 * 2**20
F32 = 4

# (name, form, arrays moved, builder(module, a, b, out) -> callable)
CASES = [
    ("add", "out=",  3, lambda m, a, b, o: (lambda: m.add(a, b, out=o))),
    ("add", "alloc", 3, lambda m, a, b, o: (lambda: a + b)),
    ("mul", "out=",  3, lambda m, a, b, o: (lambda: m.mul(a, b, out=o))),
    ("mul", "alloc", 3, lambda m, a, b, o: (lambda: a * b)),
    ("exp", "out=",  2, lambda m, a, b, o: (lambda: m.exp(a, out=o))),
    ("exp", "alloc", 2, lambda m, a, b, o: (lambda: a.exp())),
    ("sum", "alloc", 1, lambda m, a, b, o: (lambda: a.sum())),
]


def stream_bandwidth(quick):
    """STREAM-like single-thread numpy kernels; returns {kernel: GB/s}.

    triad a = b + s*c takes two numpy passes (c*s -> a, a + b -> a), so its
    real traffic of 5 arrays is what is counted.
    """
    a, b, c = (np.full(N, v, dtype=np.float32) for v in (1.0, 2.0, 0.5))
    kernels = {
        "copy":  (2, lambda: np.copyto(a, b)),
        "add":   (3, lambda: np.add(b, c, out=a)),
        "triad": (5, lambda: (np.multiply(c, 3.0, out=a), np.add(a, b, out=a))),
    }
    ts = time_calls([fn for _, fn in kernels.values()], quick=quick)
    return {k: arrays * N * F32 / t.per_call_s / 1e9
            for (k, (arrays, _)), t in zip(kernels.items(), ts)}


def main():
    args, suite = setup("memory", __doc__, threads="1,2")
    bw = stream_bandwidth(args.quick)
    ref_bw = max(bw.values())
    suite.extra["stream_GBps"] = dict(bw, reference=ref_bw)
    data = {}
    print("   numpy STREAM (1 thread, GB/s): %s -> reference %.1f GB/s"
          % (", ".join("%s %.1f" % kv for kv in bw.items()), ref_bw))
    for threads in thread_list(args):
        suite.set_threads(threads)
        for name, form, arrays, op in CASES:
            nbytes = arrays * N * F32

            def make(m, op=op):
                if id(m) not in data:  # inputs built once per module
                    data[id(m)] = [rand(m, (N,), suite.device) for _ in range(3)]
                return op(m, *data[id(m)])

            def metrics(t, nbytes=nbytes):
                gbps = nbytes / t / 1e9
                return {"GB/s": gbps, "bw%": 100 * gbps / ref_bw}

            suite.bench("%s (%s)" % (name, form),
                        "n=16M f32 threads=%d" % threads, make, TARGET,
                        metrics=metrics,
                        checks={} if form == "alloc" and name != "sum"
                        else {"bw%": MIN_BW_PCT})
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
