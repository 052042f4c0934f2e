"""--rdzv-backend c10d: torchrun's dynamic rendezvous over a TCPStore at --rdzv-endpoint.

The launcher that can listen on the endpoint hosts the store (the others find the port taken, or
the address not theirs, and connect as clients). Every key lives under the run id, and every
round r of the job under "r/":

    round            the current round; bumped (compare_set r -> r+1) to ask every node to rejoin
    closed           set by a node that gave up: nobody may join again
    r/joined         add(1) on join: a node's join order, 1-based, is its node rank + 1
    r/nproc<i>       node i's worker count, so every node computes the same rank offsets
    r/last_call      wall-clock deadline written by the MIN-th joiner: until then more may join
    r/size           written once (compare_set from empty) when the round closes: MAX joined, or
                     the last call passed with at least MIN in; joiners past it are late
    r/waiting        late joiners; a running round with room (size < MAX) restarts to take them in
    r/master         node 0's "addr:port" for the workers' own store (init_process_group env://)
    r/done           the exit barrier: the store's host must outlive everybody's last read

Membership is decided by these atomic store operations alone, so no node coordinates the others.
Not implemented: heartbeats (a node that dies silently is noticed only through its workers'
collectives failing), and torch's keep-alive of the store host after its own workers finished
beyond the exit barrier.
"""
import datetime
import socket
import time

from pyctorch._C import _distributed_c10d as _c10d

from .api import RendezvousClosedError, RendezvousError, RendezvousInfo, RendezvousTimeoutError

__all__ = ["C10dRendezvous"]

DEFAULT_PORT = 29400
# torchrun's defaults, in seconds; --rdzv-conf key=value overrides each
JOIN_TIMEOUT, LAST_CALL_TIMEOUT, READ_TIMEOUT, EXIT_BARRIER_TIMEOUT = 600.0, 30.0, 60.0, 300.0
POLL_S = 0.05


def _parse_endpoint(text):
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = text, ""
    host = host.strip("[]")  # [::1]:29400
    if not host:
        raise ValueError(f"--rdzv-endpoint '{text}' has no host")
    return host, int(port) if port else DEFAULT_PORT


def _is_local_address(host):
    """True when this machine owns host's address: binding to it succeeds only then."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
        return True
    except OSError:
        return False


def _address_towards(host, port):
    """The address this node reaches host from, which is one the other nodes can reach it at
    (torch takes socket.getfqdn(), which need not resolve inside network namespaces)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((host, port))  # UDP: no packet is sent, only the route is chosen
            return s.getsockname()[0]
    except OSError:
        return socket.getfqdn()


def _free_port(addr):
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def _as_bool(text):
    return None if text is None else text.lower() in ("1", "true", "yes", "y")


class C10dRendezvous:
    def __init__(self, endpoint, run_id, min_nodes, max_nodes, nproc, conf=None, local_addr=None):
        conf = dict(conf or {})
        if not 1 <= min_nodes <= max_nodes:
            raise ValueError(f"--nnodes {min_nodes}:{max_nodes}: need 1 <= MIN <= MAX")
        self.host, self.port = _parse_endpoint(endpoint)
        self.min_nodes, self.max_nodes, self.nproc = min_nodes, max_nodes, nproc
        self.join_timeout = float(conf.pop("join_timeout", JOIN_TIMEOUT))
        self.last_call_timeout = float(conf.pop("last_call_timeout", LAST_CALL_TIMEOUT))
        self.exit_barrier_timeout = float(conf.pop("exit_barrier_timeout", EXIT_BARRIER_TIMEOUT))
        read_timeout = float(conf.pop("read_timeout", READ_TIMEOUT))
        is_host = _as_bool(conf.pop("is_host", None))
        self.local_addr = local_addr or _address_towards(self.host, self.port)
        store, self.is_host = self._connect(is_host, read_timeout)
        self.store = _c10d.PrefixStore(f"torch.rendezvous.{run_id}", store)
        self._tcp_store = store  # the PrefixStore keeps it alive too; named for clarity
        self.store.compare_set("round", "", "0")

    def _connect(self, is_host, read_timeout):
        timeout = datetime.timedelta(seconds=read_timeout)
        first_try_host = _is_local_address(self.host) if is_host is None else is_host
        for as_host in ([True, False] if first_try_host else [False]):
            try:
                return _c10d.TCPStore(self.host, self.port, None, as_host, timeout, wait_for_workers=False,
                                      multi_tenant=True), as_host
            except Exception as e:  # noqa: BLE001 -- the store's errors: DistNetworkError, DistStoreError, ...
                if not as_host or is_host:
                    raise RendezvousError(f"cannot reach the c10d rendezvous store at {self.host}:{self.port}: "
                                          f"{e}") from e
                # another launcher on this machine hosts it already: join as a client
        raise RendezvousError("unreachable")  # pragma: no cover

    # ------------------------------------------------------------------ joining

    def next_rendezvous(self):
        """Joins the current round and returns it once closed; rejoins if the round moves on
        meanwhile or this node came too late for it."""
        deadline = time.monotonic() + self.join_timeout
        while True:
            self._check_open()
            info = self._join_round(int(self.store.get("round")), deadline)
            if info is not None:
                return info

    def _join_round(self, r, deadline):
        s = self.store
        idx = s.add(f"{r}/joined", 1)
        s.set(f"{r}/nproc{idx}", str(self.nproc))
        if idx == self.min_nodes:
            s.compare_set(f"{r}/last_call", "", repr(time.time() + self.last_call_timeout))
        size = self._wait_until_closed(r, deadline)
        if size is None:
            return None  # the round moved on before closing: join the new one
        if idx > size:
            s.add(f"{r}/waiting", 1)  # a running round with room restarts for us
            self._wait_for_round_after(r, deadline)
            return None
        nprocs = [int(s.get(f"{r}/nproc{i}")) for i in range(1, size + 1)]
        node_rank = idx - 1
        if node_rank == 0:
            s.set(f"{r}/master", f"{self.local_addr}:{_free_port(self.local_addr)}")
        addr, _, port = s.get(f"{r}/master").decode().rpartition(":")
        return RendezvousInfo(r, node_rank, size, sum(nprocs[:node_rank]), sum(nprocs), addr, int(port))

    def _wait_until_closed(self, r, deadline):
        s = self.store
        while True:
            if s.check([f"{r}/size"]):
                return int(s.get(f"{r}/size"))
            if int(s.get("round")) != r:
                return None
            self._check_open()
            joined = s.add(f"{r}/joined", 0)
            if joined >= self.max_nodes:
                s.compare_set(f"{r}/size", "", str(self.max_nodes))
                continue
            if joined >= self.min_nodes and s.check([f"{r}/last_call"]) and \
                    time.time() >= float(s.get(f"{r}/last_call")):
                s.compare_set(f"{r}/size", "", str(joined))  # a joiner racing this is late, not lost
                continue
            self._check_deadline(deadline, joined)
            time.sleep(POLL_S)

    def _wait_for_round_after(self, r, deadline):
        while int(self.store.get("round")) == r:
            self._check_open()
            self._check_deadline(deadline, None)
            time.sleep(POLL_S)

    def _check_deadline(self, deadline, joined):
        if time.monotonic() > deadline:
            got = "" if joined is None else f" ({joined} joined)"
            raise RendezvousTimeoutError(
                f"the c10d rendezvous at {self.host}:{self.port} did not complete within the join timeout "
                f"({self.join_timeout:g}s): it needs {self.min_nodes} to {self.max_nodes} nodes{got}")

    def _check_open(self):
        if self.store.check(["closed"]):
            raise RendezvousClosedError("the rendezvous was closed: another node gave up the job")

    # ------------------------------------------------------------- while running

    def membership_changed(self, info):
        """True when the running round must end: another node asked for a new round (it restarts
        after a failure), or late joiners wait and there is room for them."""
        try:
            if int(self.store.get("round")) != info.round:
                return True
            return info.nnodes < self.max_nodes and self.store.add(f"{info.round}/waiting", 0) > 0
        except Exception:  # noqa: BLE001 -- the store's host went away: the workers decide the outcome
            return False

    def request_new_round(self, info):
        self.store.compare_set("round", str(info.round), str(info.round + 1))

    def exit_barrier(self, info):
        """Waits (bounded) until every node of the round finished, so the store's host stays up
        while others still read from it."""
        try:
            self.store.add(f"{info.round}/done", 1)
            end = time.monotonic() + self.exit_barrier_timeout
            while self.store.add(f"{info.round}/done", 0) < info.nnodes and time.monotonic() < end:
                if self.store.check(["closed"]):
                    return  # a node gave up: it will never arrive
                time.sleep(POLL_S)
        except Exception:  # noqa: BLE001 -- the host left first: nothing left to wait for
            pass

    def close(self):
        try:
            self.store.set("closed", "1")
        except Exception:  # noqa: BLE001
            pass
