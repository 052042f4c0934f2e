"""torch.distributed.rendezvous: turns an init_method URL into an iterator of (store, rank, world_size).

env://            MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from the environment (under mpirun
                  without RANK: OpenMPI's, PMI's or PMIx's rank and size variables)
tcp://host:port   a TCPStore served by rank 0 (?rank=&world_size=, or the arguments)
file:///path      a FileStore on a shared file system

As in torch, rendezvous() returns an iterator and a handler is a generator `handler(url, **kwargs)`
(register_rendezvous_handler adds one); errors surface at next().
"""
import os
from urllib.parse import urlencode, urlparse, urlunparse

from pyctorch._C import _distributed_c10d as _c10d

from .constants import default_pg_timeout

__all__ = ["register_rendezvous_handler", "rendezvous"]

_rendezvous_handlers = {}


def register_rendezvous_handler(scheme, handler):
    if scheme in _rendezvous_handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _rendezvous_handlers[scheme] = handler


def _query_to_dict(query):
    return {pair[0]: pair[1] for pair in (p.split("=") for p in filter(None, query.split("&")))}


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    if not isinstance(url, str):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, int):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, int):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    result = urlparse(url)
    if rank != -1 or world_size != -1:
        query = _query_to_dict(result.query)
        if "rank" in query or "world_size" in query:
            raise AssertionError(f"The url: {url} has node-specific arguments(rank, world_size) already.")
        if rank != -1:
            query["rank"] = str(rank)
        if world_size != -1:
            query["world_size"] = str(world_size)
        result = result._replace(query=urlencode(query))
        url = urlunparse(result)
    if result.scheme not in _rendezvous_handlers:
        raise RuntimeError(f"No rendezvous handler for {result.scheme}://")
    return _rendezvous_handlers[result.scheme](url, **kwargs)


def _rendezvous_error(msg):
    return ValueError("Error initializing torch.distributed using " + msg)


def _tcp_store(host, port, rank, world_size, timeout):
    return _c10d.TCPStore(host, port, world_size, rank == 0, timeout)


def _file_rendezvous_handler(url, **kwargs):
    def _error(msg):
        return _rendezvous_error("file:// rendezvous: " + msg)

    result = urlparse(url)
    path = result.path if not result.netloc else result.netloc + result.path
    if not path:
        raise _error("path missing")
    query = _query_to_dict(result.query)
    if "rank" not in query:
        raise _error("rank parameter missing")
    if "world_size" not in query:
        raise _error("world size parameter missing")
    rank, world_size = int(query["rank"]), int(query["world_size"])
    store = _c10d.FileStore(path, world_size)
    store.set_timeout(kwargs.get("timeout", default_pg_timeout))
    yield store, rank, world_size
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


def _tcp_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def _error(msg):
        return _rendezvous_error("tcp:// rendezvous: " + msg)

    result = urlparse(url)
    if result.port is None:
        raise _error("port number missing")
    query = _query_to_dict(result.query)
    if "rank" not in query:
        raise _error("rank parameter missing")
    if "world_size" not in query:
        raise _error("world size parameter missing")
    rank, world_size = int(query["rank"]), int(query["world_size"])
    yield _tcp_store(result.hostname, result.port, rank, world_size, timeout), rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _mpi_rank_size():
    """Rank and size from an MPI launcher's environment (OpenMPI, PMI, PMIx), or None."""
    for rank_var, size_var in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"),
                               ("PMIX_RANK", "PMIX_SIZE")):
        if rank_var in os.environ and size_var in os.environ:
            return int(os.environ[rank_var]), int(os.environ[size_var])
    return None


def _env_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def _error(msg):
        return _rendezvous_error("env:// rendezvous: " + msg)

    def _get_env_or_raise(var):
        value = os.environ.get(var)
        if not value:
            raise _error(f"environment variable {var} expected, but not set")
        return value

    query = _query_to_dict(urlparse(url).query)
    mpi = None if "RANK" in os.environ or "WORLD_SIZE" in os.environ else _mpi_rank_size()
    if "rank" in query:
        rank = int(query["rank"])
    else:
        rank = mpi[0] if mpi else int(_get_env_or_raise("RANK"))
    if "world_size" in query:
        world_size = int(query["world_size"])
    else:
        world_size = mpi[1] if mpi else int(_get_env_or_raise("WORLD_SIZE"))
    master_addr = _get_env_or_raise("MASTER_ADDR")
    master_port = int(_get_env_or_raise("MASTER_PORT"))
    yield _tcp_store(master_addr, master_port, rank, world_size, timeout), rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


register_rendezvous_handler("tcp", _tcp_rendezvous_handler)
register_rendezvous_handler("env", _env_rendezvous_handler)
register_rendezvous_handler("file", _file_rendezvous_handler)
