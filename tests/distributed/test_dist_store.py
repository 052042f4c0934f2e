"""The stores (TCPStore, HashStore, FileStore, PrefixStore): the same operations on pyctorch's
and torch's stores give the same results and the same errors; blocking calls release the GIL;
timeouts and a master that goes away are errors within the timeout, never a hang. These need
no Gloo: the stores are plain C."""
import datetime
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyctorch.distributed as dist  # noqa: E402
from dist_helpers import ROOT, free_port  # noqa: E402

try:
    import torch.distributed as tdist
    HAVE_TORCH = tdist.is_available()
except ImportError:
    HAVE_TORCH = False

requires_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (oracle comparisons skip)")
MS = datetime.timedelta(milliseconds=1)


def make_store(d, kind, tmp_path, timeout=datetime.timedelta(seconds=2)):
    """A fresh store of `kind` from module d (pyctorch.distributed or torch.distributed), and what
    must stay alive with it."""
    if kind == "HashStore":
        s = d.HashStore()
        s.set_timeout(timeout)
        return s, []
    if kind == "FileStore":
        s = d.FileStore(str(tmp_path / f"fs_{d.__name__}"), 1)
        s.set_timeout(timeout)
        return s, []
    master = d.TCPStore("127.0.0.1", 0, 1, True, timeout=timeout)
    if kind == "TCPStore":
        return master, []
    return d.PrefixStore("pre", master), [master]


KINDS = ["HashStore", "FileStore", "TCPStore", "PrefixStore"]


def op_sequence(s):
    """A list of results of every store verb (values as bytes, counts, booleans)."""
    out = []
    s.set("a", "x")
    s.set("b", b"\x00\xffbin")
    out += [s.get("a"), s.get("b"), s.add("n", 3), s.add("n", -5), s.get("n"), s.add("fresh", 0)]
    out += [s.compare_set("a", "x", "y"), s.compare_set("a", "q", "z"), s.get("a")]
    out += [s.compare_set("new", "", "v"), s.compare_set("new2", "q", "v"), s.check(["new2"])]
    out += [s.check(["a", "b"]), s.check(["a", "zz"]), s.delete_key("a"), s.delete_key("a"), s.check(["a"])]
    s.multi_set(["k1", "k2"], ["v1", b"v2"])
    out += [s.multi_get(["k1", "k2", "b"])]
    s.set("k1", "")
    out += [s.get("k1"), s.num_keys()]
    s.wait(["k1", "k2"])
    s.wait(["k2"], datetime.timedelta(milliseconds=50))
    s.set_timeout(datetime.timedelta(seconds=3))
    out += [s.timeout]
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_store_verbs(kind, tmp_path):
    s, keep = make_store(dist, kind, tmp_path)
    got = op_sequence(s)
    assert got[:9] == [b"x", b"\x00\xffbin", 3, -2, b"-2", 0, b"y", b"y", b"y"]
    # torch's FileStore reports a second delete of the same key as done too
    assert got[9:17] == [b"v", b"q", False, True, False, True, kind == "FileStore", False]
    assert got[17] == [b"v1", b"v2", b"\x00\xffbin"] and got[18] == b"" and got[20] == datetime.timedelta(seconds=3)
    if HAVE_TORCH:
        t, tkeep = make_store(tdist, kind, tmp_path)
        assert got == op_sequence(t)  # num_keys included: torch's internal keys are mirrored


def timeout_error(s, fn):
    t0 = time.monotonic()
    with pytest.raises(Exception) as e:
        fn(s)
    return type(e.value).__name__, str(e.value), time.monotonic() - t0


@pytest.mark.parametrize("kind", KINDS)
def test_wait_timeout_errors(kind, tmp_path):
    s, keep = make_store(dist, kind, tmp_path, timeout=datetime.timedelta(milliseconds=300))
    cases = [lambda s: s.wait(["missing"], datetime.timedelta(milliseconds=200)), lambda s: s.get("missing"),
             lambda s: s.wait(["missing", "other"])]
    got = [timeout_error(s, f) for f in cases]
    for (name, msg, took), limit in zip(got, (0.2, 0.3, 0.3)):
        assert limit - 0.05 <= took < limit + 1.0, (kind, took)
        assert name == ("RuntimeError" if kind == "FileStore" else "DistStoreError")
    if kind == "FileStore":
        assert [g[1] for g in got] == ["Wait timeout", "Timeout waiting for key: missing after 300 ms", "Wait timeout"]
    if kind == "TCPStore":
        assert got[0][1] == "wait timeout after 200ms, keys: /missing"
        assert got[1][1] == "wait timeout after 300ms, keys: /missing"
    if kind != "FileStore":
        assert isinstance(pytest.raises(dist.DistError, cases[0], s).value, RuntimeError)
    if HAVE_TORCH:
        t, tkeep = make_store(tdist, kind, tmp_path, timeout=datetime.timedelta(milliseconds=300))
        want = [timeout_error(t, f) for f in cases]
        for g, w in zip(got, want):
            assert g[0] == w[0], (kind, g, w)
            if kind != "PrefixStore":  # torch's PrefixStore prints the prefixed key
                assert g[1] == w[1], (kind, g, w)


@pytest.mark.parametrize("kind", KINDS)
def test_blocking_get_releases_the_gil(kind, tmp_path):
    s, keep = make_store(dist, kind, tmp_path, timeout=datetime.timedelta(seconds=10))
    setter_store = s
    if kind in ("TCPStore", "PrefixStore"):
        # one TCPStore client serves one request at a time (torch's too): the setter is a second client
        master = keep[0] if keep else s
        setter_store = dist.TCPStore("127.0.0.1", master.port, 1, False, timeout=datetime.timedelta(seconds=10))
        if kind == "PrefixStore":
            setter_store = dist.PrefixStore("pre", setter_store)
    ticks = []

    def setter():
        for _ in range(5):
            ticks.append(time.monotonic())  # runs only if the waiting thread gave up the GIL
            time.sleep(0.02)
        setter_store.set("late", "here")

    th = threading.Thread(target=setter)
    th.start()
    assert s.get("late") == b"here"
    th.join()
    assert len(ticks) == 5


def test_tcp_clients_share_the_master():
    port = free_port()
    master = dist.TCPStore("127.0.0.1", port, 3, True, timeout=datetime.timedelta(seconds=5), wait_for_workers=False)
    clients = [dist.TCPStore("127.0.0.1", port, 3, False, timeout=datetime.timedelta(seconds=5)) for _ in range(2)]
    assert master.port == port and clients[0].port == port and clients[0].host == "127.0.0.1"
    clients[0].set("k", "from client 0")
    assert clients[1].get("k") == b"from client 0" and master.get("k") == b"from client 0"
    assert [c.add("ctr", 1) for c in (master, *clients)] == [1, 2, 3]
    done = []
    th = threading.Thread(target=lambda: done.append(clients[1].wait(["go"])))
    th.start()
    time.sleep(0.1)
    assert not done
    master.set("go", "1")
    th.join(5)
    assert done == [None]


def test_tcp_wait_for_workers_times_out():
    t0 = time.monotonic()
    with pytest.raises(dist.DistStoreError) as e:
        dist.TCPStore("127.0.0.1", 0, 2, True, timeout=datetime.timedelta(milliseconds=500))
    assert time.monotonic() - t0 < 3
    assert "1/2 clients joined" in str(e.value)


def test_tcp_connect_timeout_message():
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(dist.DistNetworkError) as e:
        dist.TCPStore("127.0.0.1", port, 2, False, timeout=datetime.timedelta(milliseconds=400))
    assert time.monotonic() - t0 < 3
    assert str(e.value) == (f"The client socket has timed out after 400ms while trying to connect to "
                            f"(127.0.0.1, {port}).")


def test_tcp_port_in_use():
    master = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=2))
    with pytest.raises(dist.DistNetworkError) as e:
        dist.TCPStore("127.0.0.1", master.port, 1, True, timeout=datetime.timedelta(seconds=2))
    assert "EADDRINUSE" in str(e.value) and f"port: {master.port}" in str(e.value)


MASTER_SCRIPT = """
import datetime, sys, time
import pyctorch.distributed as dist
s = dist.TCPStore("127.0.0.1", int(sys.argv[1]), 2, True, timeout=datetime.timedelta(seconds=10))
s.set("ready", "1")
s.wait(["quit"])
"""


def start_master(port):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.Popen([sys.executable, "-c", MASTER_SCRIPT, str(port)], env=env)


def test_master_gone_is_an_error_not_a_hang():
    port = free_port()
    proc = start_master(port)
    try:
        client = dist.TCPStore("127.0.0.1", port, 2, False, timeout=datetime.timedelta(seconds=10))
        assert client.get("ready") == b"1"
        client.set("quit", "1")
        proc.wait(10)
        t0 = time.monotonic()
        with pytest.raises(dist.DistNetworkError) as e:
            client.get("never")
        assert time.monotonic() - t0 < 2
        assert str(e.value) == ("Failed to recv, got 0 bytes. Connection was likely closed. "
                                "Did the remote server shutdown or crash?")
        client.set_timeout(datetime.timedelta(milliseconds=300))
        t0 = time.monotonic()
        with pytest.raises(dist.DistNetworkError):
            client.set("x", "1")  # reconnecting finds no master: an error, within the timeout
        assert time.monotonic() - t0 < 2
    finally:
        proc.kill()
        proc.wait()


def test_master_that_stops_answering_times_out():
    port = free_port()
    proc = start_master(port)
    try:
        client = dist.TCPStore("127.0.0.1", port, 2, False, timeout=datetime.timedelta(seconds=10))
        assert client.get("ready") == b"1"
        client.set_timeout(datetime.timedelta(milliseconds=500))
        os.kill(proc.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        with pytest.raises(dist.DistStoreError):
            client.get("never")
        with pytest.raises(dist.DistError):
            client.add("n", 1)
        assert time.monotonic() - t0 < 4
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.wait()


FILE_SCRIPT = """
import sys
import pyctorch.distributed as dist
s = dist.FileStore(sys.argv[1], 2)
s.set("from_child", "hello")
print(s.get("from_parent").decode(), s.add("ctr", 10), flush=True)
"""


def test_file_store_across_processes(tmp_path):
    path = str(tmp_path / "shared")
    s = dist.FileStore(path, 2)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-c", FILE_SCRIPT, path], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert s.get("from_child") == b"hello"
        s.add("ctr", 1)
        s.set("from_parent", "hi")
        out, _ = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert out.split() in (["hi", "11"], ["hi", "10"])
    assert s.add("ctr", 0) == 11
    assert s.num_keys() == 4  # from_child, from_parent, ctr and the cleanup counter
    assert os.path.exists(path)
    del s  # the second of world_size=2 stores to close removes the file
    assert not os.path.exists(path)


def test_prefix_store_keys_and_errors(tmp_path):
    base = dist.HashStore()
    p = dist.PrefixStore("job", base)
    p.set("k", "v")
    assert base.get("job/k") == b"v" and p.underlying_store is base
    nested = dist.PrefixStore("inner", p)
    nested.set("z", "1")
    assert base.get("job/inner/z") == b"1" and nested.num_keys() == base.num_keys() == 2
    keys = ["job/k", "job/inner/z"]
    assert base.check(k for k in keys) and base.multi_get(iter(keys)) == [b"v", b"1"]  # any iterable of keys
    base.wait(k for k in keys)
    with pytest.raises(TypeError):
        base.check(["job/k", 3])
    with pytest.raises(TypeError):
        dist.PrefixStore("x", object())
    with pytest.raises(TypeError):
        base.set(1, "v")
    with pytest.raises(TypeError):
        base.set("k", 1.5)
    with pytest.raises(TypeError):
        base.set_timeout(5)
    base.set("notint", "abc")
    with pytest.raises(ValueError):
        base.add("notint", 1)


def test_c_stores_under_sanitizers(tmp_path):
    """store.c and tcpstore.c have no Python in them: a C harness drives every store, built with
    AddressSanitizer and UndefinedBehaviorSanitizer (leaks included), so memory errors fail here."""
    import shutil
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    exe = str(tmp_path / "harness")
    src = [os.path.join(ROOT, "tests", "distributed", "store_harness.c"),
           os.path.join(ROOT, "csrc", "distributed", "store.c"), os.path.join(ROOT, "csrc", "distributed", "tcpstore.c")]
    flags = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-I" + os.path.join(ROOT, "csrc")]
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
    built = subprocess.run([cc, *flags, *san, *src, "-o", exe, "-lpthread"], capture_output=True, text=True)
    if built.returncode != 0:  # a compiler without the sanitizer runtimes: the checks still run
        built = subprocess.run([cc, *flags, *src, "-o", exe, "-lpthread"], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    run = subprocess.run([exe, str(tmp_path)], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-4000:]


def test_rendezvous_urls(monkeypatch, tmp_path):
    """init_method URLs to (store, rank, world_size); under mpirun (OpenMPI's variables, no RANK) env://
    takes rank and size from MPI."""
    for var in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    port = free_port()
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(port))
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "0")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "1")
    store, rank, size = next(dist.rendezvous("env://", timeout=datetime.timedelta(seconds=5)))
    assert (rank, size, store.port) == (0, 1, port) and isinstance(store, dist.TCPStore)
    del store
    store, rank, size = next(dist.rendezvous(f"file://{tmp_path}/rdzv?rank=0&world_size=1"))
    assert (rank, size) == (0, 1) and isinstance(store, dist.FileStore)
    with pytest.raises(ValueError) as e:
        next(dist.rendezvous(f"tcp://127.0.0.1:{port}"))
    want = "Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing"
    assert str(e.value) == want
    if HAVE_TORCH:
        with pytest.raises(ValueError) as te:
            next(tdist.rendezvous(f"tcp://127.0.0.1:{port}"))
        assert str(te.value) == want
    with pytest.raises(RuntimeError, match="No rendezvous handler for foo://"):
        dist.rendezvous("foo://x")


def test_stores_after_fork():
    """A forked child (a DataLoader worker) talks to the master on a connection of its own, and
    freeing its copy of the master's store leaves the parent's server thread running."""
    master = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=5))
    master.set("before", "1")
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 1
        try:
            master.set("from_child", str(os.getpid()))
            code = 0 if master.get("before") == b"1" else 2
            del master  # the child's copy: must not stop or join the parent's server thread
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert master.get("from_child") == str(pid).encode()
    master.set("after", "2")  # the parent's connection and the server still work
    client = dist.TCPStore("127.0.0.1", master.port, 1, False, timeout=datetime.timedelta(seconds=5))
    assert client.get("after") == b"2"
