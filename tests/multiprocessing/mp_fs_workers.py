"""Children and drivers of test_mp_file_system.py (importable by name from a spawned child)."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def receive_write_report(q, r):
    import pyctorch.multiprocessing as mp
    mp.set_sharing_strategy("file_system")
    t = q.get()
    t[1] = -1.0
    name = t.untyped_storage()._shared_name()
    r.put((name, t.sum().item()))
    back = q.get()  # a tensor this side created, sent back by name
    r.put(back.untyped_storage()._shared_name() is not None)


def send_back(q, r):
    import pyctorch as torch
    import pyctorch.multiprocessing as mp
    mp.set_sharing_strategy("file_system")
    t = torch.full((5,), 3.0)
    r.put(t)
    q.get()  # keep t alive until the parent has it


def receive_then_die(q, r):
    t = q.get()
    r.put(t.untyped_storage()._shared_name())
    r.close()
    r.join_thread()  # flushed before dying
    os.kill(os.getpid(), signal.SIGKILL)


def driver(outfile, kill_self):
    """A parent whose names must all be gone after it exits: a receiver killed while holding the
    storage, a message never received, and (kill_self) the parent SIGKILLed with storages alive."""
    import multiprocessing
    import pyctorch as torch
    import pyctorch.multiprocessing as mp
    mp.set_sharing_strategy("file_system")
    ctx = multiprocessing.get_context("spawn")
    q, r = ctx.Queue(), ctx.Queue()
    t = torch.arange(6.0)
    p = ctx.Process(target=receive_then_die, args=(q, r))
    p.start()
    q.put(t)
    name = r.get(timeout=30)
    p.join(30)
    lost = ctx.Queue()
    lost.put(torch.ones(3))  # in flight for ever: nobody reads it
    with open(outfile, "w") as f:
        f.write(f"{os.getpid()} {name} {p.exitcode}\n")
    import time
    time.sleep(0.5)  # the queue's feeder thread has pickled the lost message
    if kill_self:
        os.kill(os.getpid(), signal.SIGKILL)
    del t
    import gc
    gc.collect()
    with open(outfile, "a") as f:  # the killed receiver still holds a use: the name stays, for the watchdog
        f.write(str(os.path.exists("/dev/shm" + name)))


if __name__ == "__main__":
    driver(sys.argv[1], sys.argv[2] == "1")
