"""What the demos share: the framework chosen by --framework (pyctorch or the real torch), set up as
--threads and --device ask."""
import argparse
import importlib


def demo_parser(doc):
    """An argument parser with the options every demo has: --framework, --device, --threads."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--framework", choices=["pyctorch", "torch"], default="pyctorch",
                    help="module imported as torch")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda where the framework has it")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: leave as is)")
    return ap


def load_framework(ap, args):
    """The module named by args.framework, with args.threads applied; argparse errors for a CUDA device
    the framework cannot use."""
    torch = importlib.import_module(args.framework)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        ap.error(f"--device {args.device}: {args.framework}.cuda.is_available() is False")
    return torch
