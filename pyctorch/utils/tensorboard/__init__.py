"""pyctorch.utils.tensorboard (torch.utils.tensorboard): SummaryWriter writes TensorBoard event files
through the `tensorboard` package (pip install tensorboard), which is needed only here."""
try:
    import tensorboard  # noqa: F401
except ImportError as e:
    raise ImportError("pyctorch.utils.tensorboard needs the tensorboard package: pip install tensorboard") from e

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402 (re-exported as torch does)

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
