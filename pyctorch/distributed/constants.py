"""torch.distributed.constants: default timeouts."""
from datetime import timedelta

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_timeout = timedelta(minutes=30)
default_pg_nccl_timeout = timedelta(minutes=10)
