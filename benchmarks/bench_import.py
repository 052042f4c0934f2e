"""Import time: wall time of `python -c "import X"` in fresh subprocesses.

Median of several runs; the file cache is warm (both modules were just
imported in the parent process); candidate and torch runs are interleaved. Both are timed as
installed packages are: with their bytecode compiled (pip compiles torch's at install; the
candidate's sources are compiled here first, and PYTHONDONTWRITEBYTECODE is cleared, which would
otherwise make every run compile the candidate's Python files again).  The notes give the bare
interpreter start-up (`python -c pass`) for reference; the ratio is on the raw
wall times.  Target: ratio <= 0.1.
"""
import compileall
import os
import subprocess
import sys

from _harness import REPO_ROOT, setup, time_calls

TARGET = 0.1


def main():
    args, suite = setup("import", __doc__)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    candidate_dir = os.path.dirname(os.path.abspath(sys.modules[args.candidate].__file__))
    compileall.compile_dir(candidate_dir, quiet=1)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (env.get("PYTHONPATH"), REPO_ROOT) if p)

    def run(code):
        def call():
            subprocess.run([sys.executable, "-c", code], env=env, check=True,
                           stdout=subprocess.DEVNULL)
        return call

    # no warm-up runs: load_frameworks has just imported both in this process
    kw = dict(number=1, repeat=3 if args.quick else 9, warmup=0)
    (base,) = time_calls([run("pass")], **kw)
    suite.bench("import", "fresh interpreter",
                lambda m: run("import " + m.__name__), TARGET,
                metrics=lambda t: {"startup_ms": base.per_call_s * 1e3,
                                   "net_ms": (t - base.per_call_s) * 1e3}, **kw)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
