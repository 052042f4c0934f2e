"""Run every benchmarks/bench_*.py in its own process; merge their JSON.

    python benchmarks/run_all.py [--quick] [--candidate torch] [--device cpu]
                                 [--only overhead,gemm] [--json PATH]

Each suite's table streams to the terminal; the merged document
{"machine": ..., "suites": [...]} goes to --json (default
benchmarks/results/run_all.json).  Exit status 1 if a suite failed to run.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--candidate", default="pyctorch")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--device", default="cpu")
    p.add_argument("--only", help="comma-separated suite names, e.g. overhead,gemm")
    p.add_argument("--json", default=os.path.join(HERE, "results", "run_all.json"))
    args = p.parse_args()

    scripts = sorted(glob.glob(os.path.join(HERE, "bench_*.py")))
    if args.only:
        wanted = set(args.only.split(","))
        scripts = [s for s in scripts
                   if os.path.basename(s)[6:-3] in wanted]
    suites, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for script in scripts:
            name = os.path.basename(script)[6:-3]
            out = os.path.join(tmp, name + ".json")
            cmd = [sys.executable, script, "--candidate", args.candidate,
                   "--device", args.device, "--json", out]
            if args.quick:
                cmd.append("--quick")
            print("\n### %s" % " ".join(cmd[1:]), flush=True)
            # the table is shown; the per-suite JSON echo is dropped (it is merged below)
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            for line in proc.stdout:
                if line.rstrip() == "JSON:":
                    break
                sys.stdout.write(line)
            proc.stdout.read()
            if proc.wait() != 0 or not os.path.exists(out):
                failed.append(name)
                print("### %s FAILED (exit %s)" % (name, proc.returncode))
                continue
            with open(out) as f:
                suites.append(json.load(f))
    doc = {"candidate": args.candidate, "quick": args.quick,
           "machine": suites[0]["machine"] if suites else None,
           "failed": failed, "suites": suites}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1, default=str)
    n = sum(len(s["results"]) for s in suites)
    miss = sum(1 for s in suites for r in s["results"] if r["ok"] is False)
    print("\n%d suites, %d cases, %d missed target, %d suites failed -> %s"
          % (len(suites), n, miss, len(failed), args.json))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
