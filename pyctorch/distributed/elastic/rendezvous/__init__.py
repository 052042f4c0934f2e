"""torch.distributed.elastic.rendezvous: how the launchers of a job agree on node ranks and sizes.

static_rendezvous.py  a fixed node count, each launcher told its --node-rank
c10d_rendezvous.py    --rdzv-backend c10d: nodes join a TCPStore at --rdzv-endpoint and get ranks
                      in join order once MIN..MAX of them are in (torchrun's dynamic rendezvous)
"""
from .api import (RendezvousClosedError, RendezvousError, RendezvousInfo, RendezvousTimeoutError,
                  parse_rendezvous_conf)

__all__ = ["RendezvousError", "RendezvousClosedError", "RendezvousTimeoutError", "RendezvousInfo",
           "parse_rendezvous_conf"]
