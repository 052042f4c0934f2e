"""Counts torch's public names that pyctorch has, namespace by namespace (issue 20's measure).

Run `python tests/api_coverage.py` (needs torch, the reference) for a table and JSON; `--missing` lists what each
namespace lacks. tests/test_api_coverage.py holds the floors. The rule, the same for every namespace: a public name
is a non-underscore attribute of torch's module that is not a submodule and not a re-export of a typing or
standard-library helper (`Any`, `Callable`, `cast`, ...), nor of `torch.Tensor` itself into a sub-namespace. For
`Tensor`, the non-underscore attributes of the class. A name counts as present when pyctorch's module or class has it.
"""
import importlib
import json
import sys
import types

# The namespaces the issue counts (each must reach 95%), then others shown for information.
COUNTED = ("Tensor", "linalg", "special", "fft", "nn.init", "nn.utils", "nn.utils.parametrize",
           "nn.utils.parametrizations", "optim", "optim.swa_utils", "distributions", "func", "autograd.forward_ad",
           "autograd.functional", "jit", "utils._pytree", "overrides", "hub")
SHOWN = ("", "nn", "nn.functional", "autograd", "cuda", "distributed", "utils.data", "amp", "fx", "export", "onnx",
         "library", "profiler", "optim.lr_scheduler", "testing")

_FOREIGN_MODULES = ("typing", "typing_extensions", "collections", "collections.abc", "abc", "builtins", "functools",
                    "contextlib", "enum", "dataclasses", "warnings", "math", "inspect", "types", "itertools",
                    "__future__", "weakref", "numbers")


def _is_foreign(obj, torch):
    import logging
    import typing
    if obj is torch.Tensor or isinstance(obj, (typing.TypeVar, logging.Logger)):
        return True
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        module = type(obj).__module__
    return module in _FOREIGN_MODULES or module.split(".")[0] in ("typing", "typing_extensions", "collections")


def public_names(torch, namespace):
    """The public names of torch.<namespace> (or of torch.Tensor)."""
    if namespace == "Tensor":
        return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    module = importlib.import_module("torch" + ("." + namespace if namespace else ""))
    names = []
    for n in dir(module):
        if n.startswith("_"):
            continue
        obj = getattr(module, n, None)
        if isinstance(obj, types.ModuleType):
            continue
        if namespace and _is_foreign(obj, torch):
            continue
        names.append(n)
    return sorted(names)


def ours(namespace):
    import pyctorch
    if namespace == "Tensor":
        return pyctorch.Tensor
    try:
        return importlib.import_module("pyctorch" + ("." + namespace if namespace else ""))
    except ImportError:
        return None


def coverage(torch, namespace):
    """(present names, missing names) of one namespace."""
    names = public_names(torch, namespace)
    mine = ours(namespace)
    present = [n for n in names if mine is not None and hasattr(mine, n)]
    return present, sorted(set(names) - set(present))


def main(argv):
    import torch
    show_missing = "--missing" in argv
    rows = {}
    for ns in COUNTED + SHOWN:
        present, missing = coverage(torch, ns)
        total = len(present) + len(missing)
        rows[ns or "torch"] = {"present": len(present), "total": total,
                               "percent": round(100.0 * len(present) / max(total, 1), 1),
                               "counted": ns in COUNTED, "missing": missing}
    print(f"{'namespace':28s} {'have':>5s} {'of':>5s} {'%':>6s}")
    for ns, r in rows.items():
        mark = "" if not r["counted"] else ("  ok" if r["percent"] >= 95 else "  < 95%")
        print(f"{ns:28s} {r['present']:5d} {r['total']:5d} {r['percent']:6.1f}{mark}")
        if show_missing and r["missing"]:
            print("    missing: " + ", ".join(r["missing"]))
    print(json.dumps({ns: {k: v for k, v in r.items() if k != "missing"} for ns, r in rows.items()}))


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.abspath(__file__))))
    main(sys.argv[1:])
