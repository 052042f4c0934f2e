"""How a dead worker is reported (torch's messages): killed by a signal, or exited with a
status. The main process polls its workers while it waits (WORKER_POLL_INTERVAL) instead
of torch's SIGCHLD handler, so no signal handler is installed."""
import signal


def worker_failure_message(pid, exitcode):
    """The RuntimeError text for a worker that is gone; exitcode as multiprocessing reports
    it (negative: killed by that signal)."""
    if exitcode is not None and exitcode < 0:
        sig = -exitcode
        try:
            name = signal.strsignal(sig) or f"signal {sig}"
        except ValueError:
            name = f"Unknown signal {sig}"
        msg = f"DataLoader worker (pid {pid}) is killed by signal: {name}. "
        if sig == signal.SIGBUS:
            msg += ("It is possible that dataloader's workers are out of shared memory. "
                    "Please try to raise your shared memory limit.")
        return msg
    if exitcode:
        return (f"DataLoader worker (pid {pid}) exited unexpectedly with exit code {exitcode}. Details are lost due to "
                "multiprocessing. Rerunning with num_workers=0 may give better error trace.")
    return f"DataLoader worker (pid(s) {pid}) exited unexpectedly"
