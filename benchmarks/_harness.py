"""Shared machinery for the pyctorch benchmarks (standard library only).

Every bench_*.py script:
  * parses the common flags (make_parser),
  * loads the candidate framework (default ``pyctorch``) and the reference
    ``torch`` (load_frameworks); ``--candidate torch`` benchmarks torch against
    itself, which is the self-test of this harness (all ratios should be ~1.0),
  * builds a Suite and calls ``suite.bench(...)`` once per case,
  * ends with ``sys.exit(suite.finish())``.

Timing method (time_calls): each callable gets ``warmup`` untimed calls, then
its block size N (calls per block) is calibrated so that one block lasts at
least ``min_block_s``; then ``repeat`` blocks of N calls are timed with
time.perf_counter_ns (GC disabled, optional CUDA sync before the clock starts
and before it stops).  Blocks of the candidate and of torch are interleaved, so
slow drifts of the machine (frequency, other load) hit both alike.
The reported time per call is the MEDIAN over the blocks of (block time / N);
the minimum is recorded in the JSON too ("min_s"), as is the spread
((max - min) / median), a noise indicator.

ratio = candidate time / torch time: lower is better, < 1.0 means the
candidate is faster.
"""

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

QUICK = dict(repeat=3, min_block_s=0.01)
FULL = dict(repeat=7, min_block_s=0.1)
NOISY = 0.5  # flag a case whose block times spread more than this


# --------------------------------------------------------------------------- CLI

def make_parser(description, threads="1"):
    """Parser with the flags every benchmark understands.

    ``threads`` is the script's default for --threads (comma-separated list).
    """
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--candidate", default="pyctorch",
                   help="module to benchmark (default: pyctorch); "
                        "'torch' = self-test, ratios should be ~1.0")
    p.add_argument("--quick", action="store_true",
                   help="fewer/shorter repeats and smaller cases (smoke test)")
    p.add_argument("--json", metavar="PATH",
                   help="also write the JSON document to PATH")
    p.add_argument("--device", default="cpu",
                   help="cpu (default) or cuda[:N]; skipped if unavailable")
    p.add_argument("--threads", default=threads,
                   help="comma-separated intra-op thread counts "
                        "(default: %(default)s); 'all' = os.cpu_count()")
    p.add_argument("--no-interleave", dest="interleave", action="store_false",
                   help="time all candidate blocks, then all torch blocks")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 1 if any case misses its target")
    return p


def thread_list(args):
    out = []
    for tok in str(args.threads).split(","):
        tok = tok.strip()
        out.append((os.cpu_count() or 1) if tok == "all" else int(tok))
    return out


# ------------------------------------------------------------------ frameworks

def load_frameworks(args):
    """Return (candidate_module, torch_module_or_None).

    The repo root is appended to sys.path so an in-place build of pyctorch is
    found.  If torch is missing, a message is printed and only absolute
    candidate times are reported.  If the candidate itself is missing, exit(2).
    """
    if REPO_ROOT not in sys.path:
        sys.path.append(REPO_ROOT)
    try:
        cand = __import__(args.candidate)
    except Exception as e:  # ImportError, or a broken extension module
        sys.exit("error: cannot import candidate %r: %s: %s"
                 % (args.candidate, type(e).__name__, e))
    if getattr(cand, "__file__", None) is None:  # e.g. a source dir, unbuilt
        sys.exit("error: candidate %r is only an empty namespace package (%s); "
                 "is it built?" % (args.candidate,
                                   ", ".join(getattr(cand, "__path__", []))))
    if args.candidate == "torch":
        return cand, cand
    try:
        import torch
    except Exception as e:
        print("note: reference 'torch' not importable (%s: %s); printing "
              "absolute %s times only, no ratios." % (type(e).__name__, e,
                                                      args.candidate))
        return cand, None
    return cand, torch


def cuda_available(module):
    cuda = getattr(module, "cuda", None)
    try:
        return bool(cuda is not None and cuda.is_available())
    except Exception:
        return False


def sync(module, device):
    """Wait for queued device work; a no-op unless device is a cuda device."""
    if str(device).startswith("cuda"):
        module.cuda.synchronize()


def set_threads(module, n):
    fn = getattr(module, "set_num_threads", None)
    if fn is None:
        print("warning: %s has no set_num_threads(); thread count not set"
              % module.__name__)
    else:
        fn(int(n))


def version_of(module):
    return None if module is None else getattr(module, "__version__", "unknown")


def machine_info(cand=None, ref=None, candidate_name=None):
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import numpy
        np_version = numpy.__version__
    except ImportError:
        np_version = None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu_model": cpu or platform.processor() or platform.machine(),
        "nproc": usable,
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np_version,
        "torch": version_of(ref),
        "candidate": candidate_name,
        "candidate_version": version_of(cand),
        "loadavg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


# ---------------------------------------------------------------------- timing

@dataclass
class Timing:
    per_call_s: float          # median over blocks of block_time / number
    min_s: float
    spread: float              # (max - min) / median, over blocks
    number: int                # calls per block
    repeat: int                # blocks

    def as_dict(self):
        return dict(self.__dict__)


def _block(fn, n, sync_fn):
    if sync_fn:
        sync_fn()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        fn()
    if sync_fn:
        sync_fn()
    return time.perf_counter_ns() - t0


def time_calls(fns, syncs=None, quick=False, repeat=None, min_block_s=None,
               number=None, warmup=1, interleave=True):
    """Time each zero-argument callable in ``fns``; return a list of Timing.

    ``number`` fixes the calls per block (no calibration); otherwise it is
    calibrated per callable so that a block lasts >= min_block_s.
    ``syncs`` is an optional parallel list of zero-argument sync callables.
    Blocks of the different callables are interleaved unless ``interleave``
    is false (then all blocks of fns[0] run first, then those of fns[1], ...:
    use it when one framework's idle-spinning thread pool slows the other).
    """
    cfg = QUICK if quick else FULL
    repeat = repeat or cfg["repeat"]
    min_block_ns = (min_block_s if min_block_s is not None
                    else cfg["min_block_s"]) * 1e9
    syncs = syncs or [None] * len(fns)
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        numbers = []
        for fn, s in zip(fns, syncs):
            for _ in range(warmup):
                _block(fn, 1, s)
            n = number or 1
            while number is None:
                t = _block(fn, n, s)
                if t >= min_block_ns:
                    break
                n = min(n * 100, max(n * 2, int(n * min_block_ns * 1.2 / max(t, 1))))
            numbers.append(n)
        samples = [[] for _ in fns]
        order = [(r, i) for r in range(repeat) for i in range(len(fns))]
        if not interleave:
            order.sort(key=lambda ri: ri[1])
        for _, i in order:
            samples[i].append(_block(fns[i], numbers[i], syncs[i]) / numbers[i] / 1e9)
    finally:
        if gc_was_enabled:
            gc.enable()
    out = []
    for n, xs in zip(numbers, samples):
        med = statistics.median(xs)
        out.append(Timing(med, min(xs), (max(xs) - min(xs)) / med if med else 0.0,
                          n, repeat))
    return out


# --------------------------------------------------------------------- results

@dataclass
class Result:
    name: str
    params: str
    candidate_s: float
    torch_s: float = None
    target: float = None                         # max allowed ratio
    metrics: dict = field(default_factory=dict)  # name -> {"candidate": x, "torch": y}
    checks: dict = field(default_factory=dict)   # metric name -> min candidate value
    timings: dict = field(default_factory=dict)  # "candidate"/"torch" -> Timing dict

    @property
    def ratio(self):
        if self.torch_s is None or not self.torch_s:
            return None
        return self.candidate_s / self.torch_s

    @property
    def ok(self):
        verdicts = []
        if self.target is not None and self.ratio is not None:
            verdicts.append(self.ratio <= self.target)
        for m, lo in self.checks.items():
            verdicts.append(self.metrics[m]["candidate"] >= lo)
        return all(verdicts) if verdicts else None

    def target_str(self):
        parts = []
        if self.target is not None:
            parts.append("<=%.2f" % self.target)
        parts += ["%s>=%g" % (m, lo) for m, lo in self.checks.items()]
        return ",".join(parts) or "-"

    def as_dict(self):
        d = dict(self.__dict__)
        d["ratio"] = self.ratio
        d["ok"] = self.ok
        return d


def fmt_time(s):
    if s is None:
        return "-"
    for scale, unit in ((1e-6, "ns"), (1e-3, "us"), (1.0, "ms")):
        if s < scale:
            v = s / scale * 1e3
            return ("%.0f %s" if v >= 100 else "%.3g %s") % (v, unit)
    return "%.3g s" % s


def fmt_num(x):
    if x is None:
        return "-"
    return "%.0f" % x if abs(x) >= 100 else "%.3g" % x


COLS = [("benchmark", 16), ("params", 30), ("", 10), ("torch", 10),
        ("ratio", 6), ("target", 17), ("ok", 4)]


class Suite:
    """Runs cases, prints the fixed-width table as it goes, then the JSON."""

    def __init__(self, title, args, cand, ref):
        self.title, self.args, self.cand, self.ref = title, args, cand, ref
        self.device = args.device
        self.results = []
        self.extra = {}
        self.machine = machine_info(cand, ref, args.candidate)
        print("== %s | candidate=%s %s | torch=%s | device=%s | %s"
              % (title, args.candidate, version_of(cand), version_of(ref),
                 self.device, "quick" if args.quick else "full"))
        print("   cpu: %s, nproc=%s, python %s, load avg %.2f" % (
            self.machine["cpu_model"], self.machine["nproc"],
            self.machine["python"], self.machine["loadavg_1min"] or 0))
        if self.device.startswith("cuda"):
            if not cuda_available(cand):
                self.skip("CUDA device requested but %s.cuda is unavailable"
                          % args.candidate)
            if ref is not None and not cuda_available(ref):
                print("note: torch has no CUDA here; absolute times only")
                self.ref = None
        load = self.machine["loadavg_1min"]
        if load and load >= 0.5 * (self.machine["nproc"] or 1):
            print("   warning: load average %.2f on %s cpus: other processes may "
                  "disturb the timings" % (load, self.machine["nproc"]))
        if cand is ref:
            print("   (candidate is torch itself: self-test, ratios ~1.0)")

    @staticmethod
    def _row(cells):
        print(" ".join(str(c).ljust(w) for c, (_, w) in zip(cells, COLS))
              + " " + " ".join(cells[len(COLS):]), flush=True)

    def modules(self):
        return [m for m in (self.cand, self.ref) if m is not None]

    def set_threads(self, n):
        for m in {id(m): m for m in self.modules()}.values():
            set_threads(m, n)

    def bench(self, name, params, make, target=None, metrics=None, checks=None,
              **timing_kw):
        """Time ``make(module)`` (a zero-arg callable) for candidate and torch.

        ``metrics(seconds_per_call) -> {name: value}`` adds derived numbers
        (GB/s, GFLOP/s, ...); ``checks = {metric: min}`` are extra targets
        on the candidate's metrics.
        """
        mods = self.modules()
        fns = [make(m) for m in mods]
        syncs = [(lambda m=m: sync(m, self.device)) for m in mods]
        timing_kw.setdefault("interleave", self.args.interleave)
        ts = time_calls(fns, syncs, quick=self.args.quick, **timing_kw)
        del fns
        r = Result(name, params, ts[0].per_call_s,
                   ts[1].per_call_s if len(ts) > 1 else None, target,
                   checks=dict(checks or {}),
                   timings={k: t.as_dict() for k, t in zip(("candidate", "torch"), ts)})
        if metrics:
            per = [metrics(t.per_call_s) for t in ts]
            r.metrics = {k: {"candidate": per[0][k],
                             "torch": per[1][k] if len(per) > 1 else None}
                         for k in per[0]}
        return self.add(r)

    def bench_cases(self, cases, target=None):
        """For every thread count of --threads: bench each (name, params, make) of cases, the
        params suffixed with the thread count; returns finish()'s exit status."""
        for n in thread_list(self.args):
            self.set_threads(n)
            for name, params, make in cases:
                self.bench(name, "%s t=%d" % (params, n), make, target)
        return self.finish()

    def add(self, r):
        if not self.results:  # table header, printed lazily before row 1
            names = [c or self.args.candidate[:10] for c, _ in COLS]
            self._row(names + ["notes (candidate/torch)"])
            print("-" * 118)
        self.results.append(r)
        notes = " ".join("%s %s/%s" % (k, fmt_num(v["candidate"]), fmt_num(v["torch"]))
                         for k, v in r.metrics.items())
        spread = max([t["spread"] for t in r.timings.values()] or [0])
        if spread > NOISY:
            notes += " noisy(spread %.0f%%)" % (100 * spread)
        ok = {True: "ok", False: "MISS", None: "-"}[r.ok]
        self._row([r.name, r.params, fmt_time(r.candidate_s), fmt_time(r.torch_s),
                   "-" if r.ratio is None else "%.2f" % r.ratio, r.target_str(),
                   ok, notes])
        return r

    def document(self, skipped=None):
        doc = {"suite": self.title, "candidate": self.args.candidate,
               "quick": self.args.quick, "device": self.device,
               "machine": self.machine, "results": [r.as_dict() for r in self.results]}
        doc.update(self.extra)
        if skipped:
            doc["skipped"] = skipped
        return doc

    def _emit(self, doc):
        text = json.dumps(doc, indent=1, default=str)
        print("JSON:")
        print(text)
        if self.args.json:
            d = os.path.dirname(os.path.abspath(self.args.json))
            os.makedirs(d, exist_ok=True)
            with open(self.args.json, "w") as f:
                f.write(text + "\n")

    def skip(self, reason):
        print("skipped: " + reason)
        self._emit(self.document(skipped=reason))
        sys.exit(0)

    def finish(self):
        """Print the summary and the JSON document; return the exit status."""
        judged = [r for r in self.results if r.ok is not None]
        missed = [r for r in judged if not r.ok]
        print("-" * 118)
        print("%d cases, %d judged, %d met target, %d missed"
              % (len(self.results), len(judged), len(judged) - len(missed),
                 len(missed)))
        self._emit(self.document())
        return 1 if (self.args.strict and missed) else 0


def setup(title, description, threads="1", extra_args=None):
    """Common prologue: parse args, load frameworks, start the Suite."""
    p = make_parser(description, threads)
    if extra_args:
        extra_args(p)
    args = p.parse_args()
    cand, ref = load_frameworks(args)
    return args, Suite(title, args, cand, ref)


def rand(module, shape, device="cpu"):
    """A float32 tensor of uniform [0, 1) values on ``device``."""
    t = module.rand(*shape)
    return t if device == "cpu" else t.to(device)
