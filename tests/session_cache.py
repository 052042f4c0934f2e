"""A value computed once per test session and shared by the pytest-xdist workers: the first worker to ask
computes it under a file lock and leaves it as JSON in the temporary directory; the others read it. Used for the
real torch's outputs of script sets, whose runs (torch's import, a model's steps) would otherwise repeat in
every worker."""
import fcntl
import hashlib
import json
import os
import tempfile

__all__ = ["computed_once"]


def computed_once(name, files, compute):
    """compute() (a JSON value) once per session for this name and the current contents of files."""
    digest = hashlib.sha256(name.encode())
    for path in files:
        with open(path, "rb") as f:
            digest.update(path.encode() + f.read())
    session = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))  # a pytest-xdist run, or this process
    path = os.path.join(tempfile.gettempdir(), f"pyctorch_tests_{session}_{digest.hexdigest()[:20]}.json")
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        value = compute()
        with open(path + ".tmp", "w") as f:
            json.dump(value, f)
        os.replace(path + ".tmp", path)
        return value
