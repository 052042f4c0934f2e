"""torch.distributed.elastic.multiprocessing (errors only, for now)."""
