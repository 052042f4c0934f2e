"""Profiler cost per op on 1-element float32 tensors (a + b, a.sum()).

disabled: no profiler running. In pyctorch the op-call entry then pays one load and one branch on
the hooks word (Note [Dispatch hooks] in csrc/autograd/profiler.h); compare with
benchmarks/results/overhead.json for the same ops before the hooks existed.
enabled: inside a running profiler (pyctorch: one event appended to a C array per op; torch:
its Kineto/RecordFunction profiler), with and without record_shapes. Each library's profiler is
started before its case is timed and stopped after, so the recorded events (up to a few hundred
thousand) are converted once, outside the timed region. Target: <= 1.0x torch.
"""
import sys

from _harness import rand, setup, thread_list

TARGET = 1.0
OPS = {
    "a + b": lambda a, b: (lambda: a + b),
    "a.sum()": lambda a, b: (lambda: a.sum()),
}
# events per profiled block are bounded: fixed calls per block and blocks
PROFILED = dict(number=20000, repeat=5)


def main():
    args, suite = setup("profiler", __doc__, threads="1")
    for n in thread_list(args):
        suite.set_threads(n)
        for name, op in OPS.items():
            suite.bench(name, "disabled threads=%d" % n,
                        lambda m, op=op: op(rand(m, (1,), suite.device), rand(m, (1,), suite.device)),
                        target=TARGET)
        for shapes in (False, True):
            for name, op in OPS.items():
                running = []

                def make(m, op=op, shapes=shapes):
                    a, b = rand(m, (1,), suite.device), rand(m, (1,), suite.device)
                    prof = m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU], record_shapes=shapes)
                    prof.__enter__()
                    running.append(prof)
                    return op(a, b)
                try:
                    suite.bench(name, "profiling%s threads=%d" % (" +shapes" if shapes else "", n), make,
                                target=TARGET, **PROFILED)
                finally:
                    for prof in running:
                        prof.__exit__(None, None, None)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
