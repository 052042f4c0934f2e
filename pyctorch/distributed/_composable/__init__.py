"""torch.distributed._composable: the composable APIs' older home (fsdp's fully_shard lives in
torch.distributed.fsdp; this package re-exports it where torch still keeps the old path)."""
