"""torch.distributed.rendezvous: turns an init_method URL into (store, rank, world_size).

env://            MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from the environment (arguments win;
                  under mpirun without RANK, OpenMPI's or PMI's rank and size variables)
tcp://host:port   a TCPStore served by rank 0 (?rank=&world_size= or the arguments)
file:///path      a FileStore on a shared file system
"""
import os
from urllib.parse import parse_qs, urlparse

from pyctorch._C import _distributed_c10d as _c10d

__all__ = ["rendezvous", "register_rendezvous_handler"]

_handlers = {}


def register_rendezvous_handler(scheme, handler):
    if scheme in _handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _handlers[scheme] = handler


def _error(scheme, msg):
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: {msg}")


def _query(url):
    return {k: v[-1] for k, v in parse_qs(url.query).items()}


def _rank_size(scheme, q, rank, world_size):
    if rank < 0:
        if "rank" not in q:
            raise _error(scheme, "rank parameter missing")
        rank = int(q["rank"])
    if world_size < 0:
        if "world_size" not in q:
            raise _error(scheme, "world size parameter missing")
        world_size = int(q["world_size"])
    return rank, world_size


def _tcp_store(host, port, rank, world_size, timeout):
    return _c10d.TCPStore(host, port, world_size, rank == 0, timeout)


def _tcp_handler(url, rank, world_size, timeout):
    rank, world_size = _rank_size("tcp", _query(url), rank, world_size)
    if url.port is None:
        raise _error("tcp", "port number missing")
    return _tcp_store(url.hostname, url.port, rank, world_size, timeout), rank, world_size


def _file_handler(url, rank, world_size, timeout):
    path = url.path if not url.netloc else url.netloc + url.path
    if not path:
        raise _error("file", "path missing")
    rank, world_size = _rank_size("file", _query(url), rank, world_size)
    store = _c10d.FileStore(path, world_size)
    store.set_timeout(timeout)
    return store, rank, world_size


def _env(scheme, name):
    value = os.environ.get(name)
    if value is None:
        raise _error(scheme, f"environment variable {name} expected, but not set")
    return value


def _env_rank_size():
    """RANK and WORLD_SIZE, or, under mpirun without them, the MPI launcher's variables."""
    if "RANK" in os.environ or "WORLD_SIZE" in os.environ:
        return None
    for rank_var, size_var in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"),
                               ("PMIX_RANK", "PMIX_SIZE")):
        if rank_var in os.environ and size_var in os.environ:
            return int(os.environ[rank_var]), int(os.environ[size_var])
    return None


def _env_handler(url, rank, world_size, timeout):
    q = _query(url)
    mpi = _env_rank_size()
    if rank < 0:
        rank = int(q["rank"]) if "rank" in q else mpi[0] if mpi else int(_env("env", "RANK"))
    if world_size < 0:
        world_size = int(q["world_size"]) if "world_size" in q else mpi[1] if mpi else int(_env("env", "WORLD_SIZE"))
    host = _env("env", "MASTER_ADDR")
    port = int(_env("env", "MASTER_PORT"))
    return _tcp_store(host, port, rank, world_size, timeout), rank, world_size


register_rendezvous_handler("tcp", _tcp_handler)
register_rendezvous_handler("file", _file_handler)
register_rendezvous_handler("env", _env_handler)


def rendezvous(url, rank=-1, world_size=-1, timeout=None):
    """(store, rank, world_size) for an init_method URL."""
    if not isinstance(url, str):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, int) or not isinstance(world_size, int):
        raise RuntimeError(f"`rank` and `world_size` must be int. {rank} {world_size}")
    parsed = urlparse(url)
    if parsed.scheme not in _handlers:
        raise RuntimeError(f"No rendezvous handler for {parsed.scheme}://")
    if timeout is None:
        from .constants import default_pg_timeout
        timeout = default_pg_timeout
    return _handlers[parsed.scheme](parsed, rank, world_size, timeout)
