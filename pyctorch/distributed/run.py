"""torch.distributed.run (torchrun): starts nproc_per_node worker processes of a training script on
this node and watches them.

    python -m pyctorch.distributed.run --standalone --nproc-per-node 2 train.py --lr 3e-4
    python -m pyctorch.distributed.run --nnodes 2 --node-rank 0 --nproc-per-node 2 \\
        --master-addr 10.0.0.1 --master-port 29500 train.py

Each worker gets torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
ROLE_RANK, ROLE_WORLD_SIZE, GROUP_WORLD_SIZE, ROLE_NAME, MASTER_ADDR, MASTER_PORT,
TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID, TORCHELASTIC_ERROR_FILE,
OMP_NUM_THREADS=1 unless set). When a worker fails the others get SIGTERM (then SIGKILL), torchrun's
failure summary is printed, and the whole group restarts while --max-restarts allows, else the
launcher exits 1. SIGINT/SIGTERM/SIGHUP to the launcher reach every worker and none is left behind.

Rendezvous (elastic/rendezvous/): static by default, ranks node_rank * nproc_per_node + local_rank
with the workers meeting at --master-addr:--master-port; with --rdzv-backend c10d --rdzv-endpoint
host:port the launchers join a store there and get node ranks in join order once MIN (then, after
the last call, up to MAX) of --nnodes MIN:MAX are in; a restart, or a late node while there is room,
starts a new round. Under the torch alias (python -m pyctorch.as_torch -m torch.distributed.run ...)
the workers run under it too.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from .elastic.rendezvous import parse_rendezvous_conf
from .elastic.rendezvous.c10d_rendezvous import C10dRendezvous
from .elastic.rendezvous.static_rendezvous import StaticRendezvous

__all__ = ["main", "get_args_parser", "parse_args", "run"]


def get_args_parser():
    p = argparse.ArgumentParser(description="Torch Distributed Elastic Training Launcher (pyctorch)")
    p.add_argument("--nnodes", type=str, default="1:1", help="N, or MIN:MAX with --rdzv-backend c10d")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=str, default="1",
                   help="workers per node: an integer, 'auto' or 'cpu' (the CPU count)")
    p.add_argument("--rdzv-backend", "--rdzv_backend", type=str, default="static")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", type=str, default="")
    p.add_argument("--rdzv-id", "--rdzv_id", type=str, default="none")
    p.add_argument("--rdzv-conf", "--rdzv_conf", type=str, default="")
    p.add_argument("--standalone", action="store_true", help="one node, a free local port")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    p.add_argument("--monitor-interval", "--monitor_interval", type=float, default=0.1)
    p.add_argument("--start-method", "--start_method", type=str, default="spawn", choices=["spawn", "fork", "forkserver"])
    p.add_argument("--role", type=str, default="default")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module, as python -m")
    p.add_argument("--no-python", "--no_python", action="store_true", help="run the script as an executable")
    p.add_argument("--run-path", "--run_path", action="store_true", help="run the script with runpy.run_path")
    p.add_argument("--log-dir", "--log_dir", type=str, default=None)
    p.add_argument("-r", "--redirects", type=str, default="0", help="0 none, 1 stdout, 2 stderr, 3 both (to --log-dir)")
    p.add_argument("-t", "--tee", type=str, default="0", help="as --redirects, also to the console, rank-prefixed")
    p.add_argument("--local-ranks-filter", "--local_ranks_filter", type=str, default="")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", type=str, default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--local-addr", "--local_addr", type=str, default=None)
    p.add_argument("training_script", type=str)
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    return get_args_parser().parse_args(args)


def _nnodes(text):
    lo, _, hi = text.partition(":")
    return int(lo), int(hi or lo)


def _nproc(text):
    if text in ("auto", "cpu"):
        return os.cpu_count() or 1
    if text == "gpu":
        raise ValueError("--nproc-per-node gpu: pyctorch has no CUDA devices here")
    return int(text)


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _std_mask(text, nproc):
    """--redirects/--tee: 0-3 for every rank, or "0:3,1:1" per local rank."""
    if ":" not in text:
        return {r: int(text) for r in range(nproc)}
    masks = {r: 0 for r in range(nproc)}
    for part in text.split(","):
        r, _, m = part.partition(":")
        masks[int(r)] = int(m)
    return masks


class _Worker:
    """One worker process. Ownership: proc (the Popen), the pump threads copying its pipes to the
    console and log files, and the log files, all closed by finish()."""

    def __init__(self, local_rank, global_rank, cmd, env, prefix, tee_mask, redirect_mask, log_dir, shown):
        self.local_rank, self.global_rank = local_rank, global_rank
        self.error_file = env["TORCHELASTIC_ERROR_FILE"]
        self.files, self.threads = [], []
        pipes = {}
        for i, name in ((1, "stdout"), (2, "stderr")):
            to_log = bool((redirect_mask | tee_mask) & i) and log_dir is not None
            to_console = shown and (not (redirect_mask & i) or bool(tee_mask & i))
            prefixed = bool(tee_mask & i)
            if to_log or prefixed or not to_console:
                pipes[name] = (to_log, to_console, prefixed)
        self.proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE if "stdout" in pipes else None,
            stderr=subprocess.PIPE if "stderr" in pipes else None)
        for name, (to_log, to_console, prefixed) in pipes.items():
            log = open(os.path.join(log_dir, f"{name}.log"), "ab") if to_log else None
            if log:
                self.files.append(log)
            console = (sys.stdout if name == "stdout" else sys.stderr) if to_console else None
            t = threading.Thread(target=self._pump, args=(getattr(self.proc, name), log, console,
                                                          prefix if prefixed else ""), daemon=True)
            t.start()
            self.threads.append(t)
        # Note [First failure]: a reaper thread notes when the process ended, so when several workers
        # die within one monitor interval (a rank killed mid-collective, then its peers raising) the
        # root cause is the one that died first, not the first in rank order
        self.ended_at = None
        threading.Thread(target=self._reap, daemon=True).start()

    def _reap(self):
        self.proc.wait()
        self.ended_at = time.monotonic()

    @staticmethod
    def _pump(pipe, log, console, prefix):
        for line in iter(pipe.readline, b""):
            if log:
                log.write(line)
                log.flush()
            if console:
                console.write(prefix + line.decode(errors="replace"))
                console.flush()
        pipe.close()

    def finish(self):
        for t in self.threads:
            t.join(5)
        for f in self.files:
            f.close()


def _rendezvous(args, nproc):
    """The rendezvous the options ask for, and the run id."""
    lo, hi = _nnodes(args.nnodes)
    if args.standalone:
        return StaticRendezvous(1, 0, nproc, "localhost", _free_port()), str(uuid.uuid4())
    if args.rdzv_backend == "c10d":
        if not args.rdzv_endpoint:
            raise ValueError("--rdzv-backend c10d needs --rdzv-endpoint host:port")
        conf = parse_rendezvous_conf(args.rdzv_conf)
        return C10dRendezvous(args.rdzv_endpoint, args.rdzv_id, lo, hi, nproc, conf, args.local_addr), args.rdzv_id
    if args.rdzv_backend != "static":
        raise ValueError(f"--rdzv-backend {args.rdzv_backend}: pyctorch has 'static' and 'c10d'")
    if lo != hi:
        raise ValueError(f"--nnodes {args.nnodes}: an elastic node range needs --rdzv-backend c10d "
                         "--rdzv-endpoint host:port")
    addr, port = args.master_addr, args.master_port
    if args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":")
        addr, port = (host or args.rdzv_endpoint), int(p or 29400)
    return StaticRendezvous(lo, args.node_rank, nproc, addr, port), args.rdzv_id


class _Launcher:
    def __init__(self, args):
        self.args = args
        self.nproc = _nproc(args.nproc_per_node)
        self.rdzv, self.run_id = _rendezvous(args, self.nproc)
        self.info = None  # the current round's RendezvousInfo
        self.workers = []
        self.stopping = None
        self.rendezvous_pending = False
        self.base_dir = tempfile.mkdtemp(prefix="torchelastic_")

    def _command(self):
        a = self.args
        if a.no_python:
            return [a.training_script, *a.training_script_args]
        python = [sys.executable, "-u"]
        if "torch" in sys.modules and getattr(sys.modules["torch"], "__name__", "") == "pyctorch":
            python += ["-m", "pyctorch.as_torch"]  # the launcher runs under the alias: so do the workers
        if a.module:
            return [*python, "-m", a.training_script, *a.training_script_args]
        if a.run_path:
            return [*python, "-c", "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], "
                    "run_name='__main__')", a.training_script, *a.training_script_args]
        return [*python, a.training_script, *a.training_script_args]

    def _start(self, restart_count):
        a, info = self.args, self.info
        attempt_dir = os.path.join(self.base_dir, f"{self.run_id}_attempt_{restart_count}")
        tee, redirects = _std_mask(a.tee, self.nproc), _std_mask(a.redirects, self.nproc)
        shown = set(range(self.nproc)) if not a.local_ranks_filter else {int(r) for r in a.local_ranks_filter.split(",")}
        self.workers = []
        for lr in range(self.nproc):
            rank = info.rank_offset + lr
            os.makedirs(os.path.join(attempt_dir, str(lr)), exist_ok=True)
            env = dict(os.environ)
            env.update({
                "LOCAL_RANK": str(lr), "RANK": str(rank), "GROUP_RANK": str(info.node_rank), "ROLE_RANK": str(rank),
                "ROLE_NAME": a.role, "LOCAL_WORLD_SIZE": str(self.nproc), "WORLD_SIZE": str(info.world_size),
                "GROUP_WORLD_SIZE": str(info.nnodes), "ROLE_WORLD_SIZE": str(info.world_size),
                "MASTER_ADDR": info.master_addr, "MASTER_PORT": str(info.master_port),
                "TORCHELASTIC_RESTART_COUNT": str(restart_count), "TORCHELASTIC_MAX_RESTARTS": str(a.max_restarts),
                "TORCHELASTIC_RUN_ID": self.run_id, "TORCHELASTIC_USE_AGENT_STORE": "False",
                "TORCHELASTIC_ERROR_FILE": os.path.join(attempt_dir, str(lr), "error.json"),
                "TORCH_NCCL_ASYNC_ERROR_HANDLING": os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
            })
            if "OMP_NUM_THREADS" not in os.environ and self.nproc > 1:
                env["OMP_NUM_THREADS"] = "1"
            log_dir = None
            if a.log_dir:
                log_dir = os.path.join(a.log_dir, f"{self.run_id}_attempt_{restart_count}", str(lr))
                os.makedirs(log_dir, exist_ok=True)
            self.workers.append(_Worker(lr, rank, self._command(), env, f"[{a.role}{lr}]:", tee[lr], redirects[lr],
                                        log_dir, lr in shown))

    def _stop_workers(self, sig=signal.SIGTERM, grace=30.0):
        for w in self.workers:
            if w.proc.poll() is None:
                print(f"W{time.strftime('%m%d %H:%M:%S')} pyctorch/distributed/run.py] Sending process "
                      f"{w.proc.pid} closing signal {signal.Signals(sig).name}", file=sys.stderr, flush=True)
                try:
                    w.proc.send_signal(sig)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + grace
        for w in self.workers:
            left = deadline - time.monotonic()
            try:
                w.proc.wait(max(left, 0.01))
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()
            w.finish()

    def _failure(self, w, when):
        code = w.proc.returncode
        text = f"{code} (pid: {w.proc.pid})"
        traceback = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
        error_file = "<N/A>"
        if code < 0:
            name = signal.Signals(-code).name
            text += f"  ({name})"
            traceback = f"Signal {-code} ({name}) received by PID {w.proc.pid}"
        else:
            text += " "
            if os.path.exists(w.error_file):  # written by @record (elastic.multiprocessing.errors)
                error_file = w.error_file
                try:
                    with open(w.error_file) as f:
                        msg = json.load(f).get("message", {})
                    tb = msg.get("extraInfo", {}).get("py_callstack", traceback) if isinstance(msg, dict) else msg
                    traceback = str(tb).replace("\n", "\n  ")  # continuation lines indented, as torchrun's
                except (OSError, ValueError):
                    pass
        return (f"  time      : {when}\n  host      : {socket.getfqdn()}\n"
                f"  rank      : {w.global_rank} (local_rank: {w.local_rank})\n  exitcode  : {text}\n"
                f"  error_file: {error_file}\n  traceback : {traceback}")

    def _summary(self, first, when):
        others = [w for w in self.workers if w is not first and w.proc.returncode not in (0, None)]
        bar = "=" * 60
        lines = [bar, f"{os.path.basename(self.args.training_script)} FAILED", "-" * 60, "Failures:"]
        if not others:
            lines.append("  <NO_OTHER_FAILURES>")
        for i, w in enumerate(others, 1):
            lines += [f"[{i}]:", self._failure(w, when)]
        lines += ["-" * 60, "Root Cause (first observed failure):", "[0]:", self._failure(first, when), bar]
        return "\n".join(lines)

    def _on_signal(self, signum, frame):
        self.stopping = signum
        if self.rendezvous_pending:  # no worker to stop yet: leave the (possibly long) rendezvous wait now
            raise SystemExit(128 + signum)

    def run(self):
        a = self.args
        if "OMP_NUM_THREADS" not in os.environ and self.nproc > 1:
            star = "*" * 41
            print(f"{star}\nSetting OMP_NUM_THREADS environment variable for each process to be 1 in default, to "
                  "avoid your system being overloaded, please further tune the variable for optimal performance "
                  f"in your application as needed. \n{star}", file=sys.stderr, flush=True)
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            restart = 0
            while True:
                self.rendezvous_pending = True
                self.info = self.rdzv.next_rendezvous()
                self.rendezvous_pending = False
                self._start(restart)
                failed = self._monitor()
                if self.stopping is not None:
                    name = signal.Signals(self.stopping).name
                    print(f"Received {name} death signal, shutting down workers", file=sys.stderr, flush=True)
                    self._stop_workers(signal.SIGTERM)
                    self.rdzv.close()
                    return 128 + self.stopping
                if failed is _MEMBERSHIP_CHANGED:  # not a failure: every node rejoins, no restart is spent
                    print(f"[{a.role}] Detected a change of the rendezvous membership; restarting the worker "
                          "group in a new round", file=sys.stderr, flush=True)
                    self._stop_workers(signal.SIGTERM)
                    self.rdzv.request_new_round(self.info)  # late joiners wait for it (a no-op if begun)
                    continue
                if failed is None:
                    for w in self.workers:
                        w.finish()
                    self.rdzv.exit_barrier(self.info)
                    return 0
                when = time.strftime("%Y-%m-%d_%H:%M:%S")
                print(f"E{time.strftime('%m%d %H:%M:%S')} pyctorch/distributed/run.py] failed (exitcode: "
                      f"{failed.proc.returncode}) local_rank: {failed.local_rank} (pid: {failed.proc.pid}) of binary: "
                      f"{sys.executable}", file=sys.stderr, flush=True)
                self._stop_workers(signal.SIGTERM)
                if restart < a.max_restarts:
                    restart += 1
                    self.rdzv.request_new_round(self.info)
                    print(f"[{a.role}] Worker group FAILED. {a.max_restarts - restart + 1}/{a.max_restarts} attempts "
                          "left; will restart worker group", file=sys.stderr, flush=True)
                    continue
                print(self._summary(failed, when), file=sys.stderr, flush=True)
                self.rdzv.close()
                return 1
        finally:
            for s, h in old.items():
                signal.signal(s, h)

    def _monitor(self):
        """Waits until every worker succeeded (None), one failed (that worker), the rendezvous
        membership changed (_MEMBERSHIP_CHANGED) or a signal came (None, with self.stopping set)."""
        while self.stopping is None:
            ended = [w for w in self.workers if w.ended_at is not None]
            failed = [w for w in ended if w.proc.returncode != 0]
            if failed:
                return min(failed, key=lambda w: w.ended_at)  # Note [First failure]
            if len(ended) == len(self.workers):
                return None
            if self.rdzv.membership_changed(self.info):
                return _MEMBERSHIP_CHANGED
            time.sleep(self.args.monitor_interval)
        return None


_MEMBERSHIP_CHANGED = object()


def run(args):
    try:
        launcher = _Launcher(args)
    except ValueError as e:  # a bad option: argparse's style of message, not a traceback
        get_args_parser().error(str(e))
    return launcher.run()


def main(args=None):
    sys.exit(run(parse_args(args)))


if __name__ == "__main__":
    main()
