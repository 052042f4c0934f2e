"""torch.distributed.elastic: the parts a training script touches (errors.record)."""
