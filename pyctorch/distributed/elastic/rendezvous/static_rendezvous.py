"""The static rendezvous: --nnodes N with --node-rank (or --standalone). Nothing is negotiated; the
workers meet at MASTER_ADDR:MASTER_PORT themselves, so membership never changes."""
from .api import RendezvousInfo

__all__ = ["StaticRendezvous"]


class StaticRendezvous:
    def __init__(self, nnodes, node_rank, nproc, master_addr, master_port):
        if not 0 <= node_rank < nnodes:
            raise ValueError(f"--node-rank {node_rank} must be in [0, {nnodes})")
        self._info = RendezvousInfo(0, node_rank, nnodes, node_rank * nproc, nnodes * nproc, master_addr, master_port)

    def next_rendezvous(self):
        return self._info

    def membership_changed(self, info):
        return False

    def request_new_round(self, info):
        pass

    def exit_barrier(self, info):
        pass

    def close(self):
        pass
