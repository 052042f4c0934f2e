"""What every rendezvous returns and raises (the names torch.distributed.elastic.rendezvous has)."""
from dataclasses import dataclass

__all__ = ["RendezvousError", "RendezvousClosedError", "RendezvousTimeoutError", "RendezvousInfo",
           "parse_rendezvous_conf"]


class RendezvousError(Exception):
    """The rendezvous failed."""


class RendezvousClosedError(RendezvousError):
    """The rendezvous was closed: a node gave up, so the job is over."""


class RendezvousTimeoutError(RendezvousError):
    """Not enough nodes joined in time."""


@dataclass(frozen=True)
class RendezvousInfo:
    """One completed round, seen from one node: where its workers sit in the job."""
    round: int
    node_rank: int
    nnodes: int
    rank_offset: int     # global rank of this node's local rank 0
    world_size: int      # workers on all nodes
    master_addr: str     # the workers' own store (init_process_group's env://), on node 0
    master_port: int


def parse_rendezvous_conf(text):
    """--rdzv-conf "join_timeout=60,last_call_timeout=2" -> {"join_timeout": "60", ...}."""
    conf = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ValueError(f"--rdzv-conf: '{part}' is not key=value")
        conf[key.strip()] = value.strip()
    return conf
