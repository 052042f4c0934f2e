"""Distributed on the CPU: Gloo all_reduce and a DDP training step, 2 processes per framework, each
started by its own launcher (python -m pyctorch.distributed.run / torch.distributed.run --standalone
--nproc-per-node 2; the launch itself is not timed).

Cases: all_reduce (SUM) of float32 tensors of 1 KB, 1 MB and 100 MB (10 MB with --quick); a DDP
training step (forward, backward with the buckets' all-reduces, AdamW) of a small transformer
(embedding 256 -> 128, 2 nn.TransformerEncoderLayer of width 128, 4 heads, feed-forward 512,
batch 8 x 64 tokens per rank); the same step under no_sync() (computation alone) and one all_reduce
of all the gradients as one flat tensor (communication alone). overlap = compute + comm - step: the
part of the communication hidden behind backward.

Each rank times blocks of calls after a barrier (the three DDP cases take turns block by block);
rank 0's block times are the samples. The frameworks' jobs alternate (rounds), and the time per
call is the median over all blocks.
Target: ratio <= 1.0.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = 1.0
MARK = "BENCH_DISTRIBUTED "  # rank 0's result line in the job's stdout


# ---------------------------------------------------------------------- one rank of a job

def _transformer(m, vocab=256, width=128, layers=2, heads=4):
    nn = m.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Linear(width, vocab)

        def forward(self, idx, tgt):
            logits = self.head(self.encoder(self.embed(idx)))
            return nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), tgt.view(-1))
    return Net()


def _timed_blocks(dist, fns, number, repeat):
    """{name: per-call seconds of `repeat` blocks of `number` calls} for fns {name: callable}. Every
    block starts after a barrier, and the cases take turns block by block, so a burst of load on
    this shared machine hits each of them alike (the overlap is a difference of these times)."""
    samples = {name: [] for name in fns}
    for fn in fns.values():
        fn()  # warm-up: buffers, Gloo pairs, DDP's bucket rebuild
    for _ in range(repeat):
        for name, fn in fns.items():
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            samples[name].append((time.perf_counter() - t0) / number)
    return samples


def worker(module_name, quick):
    import numpy as np
    if module_name == "pyctorch":
        sys.path.insert(0, os.path.dirname(HERE))
    m = __import__(module_name)
    import importlib
    dist = importlib.import_module(module_name + ".distributed")
    DDP = importlib.import_module(module_name + ".nn.parallel").DistributedDataParallel
    m.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    repeat = 3 if quick else 7
    out = {}
    sizes = [("1KB", 1 << 10, 200), ("1MB", 1 << 20, 20), ("10MB" if quick else "100MB", (10 if quick else 100) << 20, 2)]
    for label, nbytes, number in sizes:
        t = m.ones(nbytes // 4)
        out.update(_timed_blocks(dist, {"all_reduce " + label: lambda: dist.all_reduce(t)}, number, repeat))
        del t

    m.manual_seed(0)
    model = DDP(_transformer(m))
    opt = m.optim.AdamW(model.parameters(), lr=1e-3)
    rs = np.random.RandomState(rank)
    idx, tgt = m.tensor(rs.randint(0, 256, (8, 64))), m.tensor(rs.randint(0, 256, (8, 64)))

    def step():
        opt.zero_grad()
        model(idx, tgt).backward()
        opt.step()

    def step_without_comm():
        with model.no_sync():
            step()

    flat = m.zeros(sum(p.numel() for p in model.parameters()))
    number = 2 if quick else 4
    out.update(_timed_blocks(dist, {"ddp step": step, "compute": step_without_comm,
                                    "grad all_reduce": lambda: dist.all_reduce(flat)}, number, repeat))
    if rank == 0:
        sys.stdout.write(MARK + json.dumps({"samples": out, "params": flat.numel()}) + "\n")
        sys.stdout.flush()
    dist.destroy_process_group()


# ---------------------------------------------------------------------- the parent

def run_job(module_name, quick):
    """One 2-rank job of `module_name` through its own launcher; rank 0's samples."""
    launcher = "pyctorch.distributed.run" if module_name == "pyctorch" else "torch.distributed.run"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), os.path.dirname(HERE)) if p)
    cmd = [sys.executable, "-m", launcher, "--standalone", "--nproc-per-node", "2", os.path.abspath(__file__),
           "--worker", module_name] + (["--quick"] if quick else [])
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    lines = [line[len(MARK):] for line in r.stdout.splitlines() if line.startswith(MARK)]
    if r.returncode != 0 or not lines:
        sys.exit(f"error: the {module_name} job failed (exit {r.returncode}):\n{r.stderr[-4000:]}")
    return json.loads(lines[0])


def _timing(xs):
    """The harness's timing record for one case's per-call samples."""
    med = statistics.median(xs)
    return {"per_call_s": med, "min_s": min(xs), "spread": (max(xs) - min(xs)) / med, "number": None,
            "repeat": len(xs)}


def main():
    if "--worker" in sys.argv:
        return worker(sys.argv[sys.argv.index("--worker") + 1], "--quick" in sys.argv)
    sys.path.insert(0, HERE)
    from _harness import Result, setup

    args, suite = setup("distributed", __doc__)
    if args.device != "cpu":
        suite.skip("the distributed benchmark runs Gloo on the CPU only")
    # role -> framework; with --candidate torch both roles run torch (the harness's self-test)
    roles = {"candidate": args.candidate, **({"torch": "torch"} if suite.ref is not None else {})}
    samples = {role: {} for role in roles}
    params = None
    for _ in range(1 if args.quick else 2):  # alternate the jobs: drifts of the machine hit both
        for role, framework in roles.items():
            job = run_job(framework, args.quick)
            params = job["params"]
            for case, xs in job["samples"].items():
                samples[role].setdefault(case, []).extend(xs)

    def per_role(fn):
        """{"candidate": fn(role samples), "torch": ... or None}: the harness's metric layout."""
        return {role: fn(samples[role]) if role in samples else None for role in ("candidate", "torch")}

    def overlap(cases):
        """The share of the communication hidden behind backward, per turn of the three cases (they
        ran back to back), then the median: steadier than a difference of medians."""
        turns = zip(cases["ddp step"], cases["compute"], cases["grad all_reduce"])
        return statistics.median(100 * (compute + comm - step) / comm for step, compute, comm in turns)

    labels = {"ddp step": "transformer 2x128, B=8 T=64 / rank", "compute": "the step under no_sync()",
              "grad all_reduce": f"{params} float32 (all gradients)"}
    for case in samples["candidate"]:
        med = per_role(lambda cases: statistics.median(cases[case]))
        r = Result(case, labels.get(case, "float32 SUM, 2 ranks"), med["candidate"], med["torch"], TARGET,
                   timings={role: _timing(cases[case]) for role, cases in samples.items()})
        if case.startswith("all_reduce"):
            nbytes = {"KB": 1 << 10, "MB": 1 << 20}[case[-2:]] * int(case.split()[1][:-2])
            r.metrics = {"GB/s": per_role(lambda cases: nbytes / statistics.median(cases[case]) / 1e9)}
        if case == "ddp step":
            r.metrics = {"overlap%": per_role(overlap)}
        suite.add(r)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
