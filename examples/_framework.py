"""What the demos share: the framework chosen by --framework (pyctorch or the real torch), set up as
--threads and --device ask."""
import importlib


def load_framework(ap, args):
    """The module named by args.framework, with args.threads applied; argparse errors for a CUDA device
    the framework cannot use."""
    torch = importlib.import_module(args.framework)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        ap.error(f"--device {args.device}: {args.framework}.cuda.is_available() is False")
    return torch
