"""Drop-in runs: wall time of whole torch-style scripts run unchanged in a fresh process,
`python -m pyctorch.as_torch script.py` (candidate) against `python script.py` on the real
torch. Import, start-up and the script's own work all count, as they do for a user.

Cases: the runner starting and importing `torch` (-c "import torch"), and each script of
tests/dropin/scripts (polynomial fits with manual gradients, a custom autograd.Function,
nn.Sequential + Adam, a custom Module + SGD, a dynamic net, a tiny nanoGPT-style model
trained 25 steps and sampled). Median of fresh runs; the file cache is warm.
Target: ratio <= 0.5 (these scripts are dominated by torch's import and per-op overhead).
"""
import os
import subprocess
import sys

from _harness import REPO_ROOT, setup, time_calls

TARGET = 0.5
SCRIPTS = os.path.join(REPO_ROOT, "tests", "dropin", "scripts")


def main():
    args, suite = setup("dropin", __doc__)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), REPO_ROOT) if p)

    def run(module, target):
        """A callable running `target` (a script path, or ["-c", code]) in a fresh interpreter."""
        tail = target if isinstance(target, list) else [target]
        if module.__name__ == "torch":
            cmd = [sys.executable, *tail]
        else:
            cmd = [sys.executable, "-m", "pyctorch.as_torch", *tail]

        def call():
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        return call

    kw = dict(number=1, repeat=3 if args.quick else 5, warmup=0)
    (base,) = time_calls([lambda: subprocess.run([sys.executable, "-c", "pass"], check=True)], **kw)
    suite.bench("runner", "import torch", lambda m: run(m, ["-c", "import torch"]), TARGET,
                metrics=lambda t: {"python_startup_ms": base.per_call_s * 1e3}, **kw)
    for name in sorted(f for f in os.listdir(SCRIPTS) if f.endswith(".py")):
        suite.bench("script", name, lambda m, name=name: run(m, os.path.join(SCRIPTS, name)), TARGET, **kw)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
