"""Run unchanged torch code on pyctorch.

    python -m pyctorch.as_torch script.py [args]      # or: pyctorch-as-torch script.py [args]
    python -m pyctorch.as_torch -m package.module [args]
    python -m pyctorch.as_torch -c "import torch; print(torch.ones(2))"

or, inside a process (a notebook, a conftest.py), before anything imports torch:

    import pyctorch; pyctorch.install_as_torch()

Note [The torch alias]
An import hook (a finder at the front of sys.meta_path) answers every import of
`torch` or `torch.X.Y` with the module `pyctorch` or `pyctorch.X.Y` itself: the
module objects are shared, so `import torch; torch is pyctorch` holds, and
`torch.nn is pyctorch.nn`, `sys.modules["torch.nn"] is sys.modules["pyctorch.nn"]`.
Nothing is copied or wrapped, so isinstance checks, monkey-patching and
pickling by module path all see one set of objects.

What pyctorch lacks fails loudly with the torch name in the message:
  * `import torch._dynamo` raises ModuleNotFoundError "pyctorch does not implement torch._dynamo yet";
  * `torch.foo_bar` raises AttributeError "... pyctorch does not implement torch.foo_bar yet".
The second works by giving each aliased module a module-level __getattr__ that
first defers to the module's own __getattr__ (pyctorch's lazy helpers keep
working), then tries a not-yet-imported pyctorch submodule of that name, and
only then raises.

Versions: while the alias is installed, `torch.__version__` (hence also
`pyctorch.__version__`, the same attribute of the same module) is the torch API
version pyctorch follows, a TorchVersion ("2.13.0"), because scripts compare it
against torch releases. pyctorch's own package version stays available as
`pyctorch.version.pyctorch_version`; without the alias
`pyctorch.__version__` is that package version.

With `--torchvision` (or install_as_torch(torchvision=True), or PYCTORCH_TORCHVISION=1 in the
environment), `import torchvision` gives pyctorch's working subset of it when no torchvision is
installed: Note [The torchvision subset] in pyctorch/_vision_finder.py. It is not on by default
because libraries with optional torchvision support (transformers, torchmetrics) take a findable
torchvision as the whole of it.

Limits: processes started with the "spawn" or "forkserver" methods (e.g.
DataLoader workers under those start methods) start a fresh interpreter where
`import torch` finds whatever torch is installed; forked workers inherit the
alias.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

__all__ = ["install_as_torch", "uninstall_as_torch", "is_installed", "main"]

_ALIAS = "torch"
_TARGET = "pyctorch"


def _missing(name):
    return f"pyctorch does not implement {name} yet"


def _target_name(fullname):
    """'torch' -> 'pyctorch', 'torch.nn.functional' -> 'pyctorch.nn.functional', else None."""
    if fullname == _ALIAS:
        return _TARGET
    if fullname.startswith(_ALIAS + "."):
        return _TARGET + fullname[len(_ALIAS):]
    return None


def _torch_name(module_name):
    """'pyctorch.nn' -> 'torch.nn' (for messages)."""
    if module_name == _TARGET or module_name.startswith(_TARGET + "."):
        return _ALIAS + module_name[len(_TARGET):]
    return module_name


def _add_missing_getattr(module):
    """Give `module` a module __getattr__ whose failures name the torch API (Note [The torch alias])."""
    previous = module.__dict__.get("__getattr__")
    if getattr(previous, "_pyctorch_alias_getattr", False):
        return
    torch_name = _torch_name(module.__name__)
    is_package = hasattr(module, "__path__")
    module_name = module.__name__

    def __getattr__(name):
        if previous is not None:
            try:
                return _aliased(previous(name))
            except AttributeError:
                pass
        if name.startswith("__") and name.endswith("__"):  # protocol probes (__path__, __wrapped__...)
            raise AttributeError(f"module '{torch_name}' has no attribute '{name}'")
        if is_package:  # torch imports most submodules eagerly; we import ours on first use
            sub = module_name + "." + name
            try:
                found = importlib.util.find_spec(sub) is not None
            except (ImportError, ValueError):
                found = False
            if found:
                return _aliased(importlib.import_module(sub))
        raise AttributeError(f"module '{torch_name}' has no attribute '{name}': "
                             + _missing(f"{torch_name}.{name}"))

    __getattr__._pyctorch_alias_getattr = True
    __getattr__._pyctorch_previous = previous
    module.__getattr__ = __getattr__


def _aliased(value):
    """A pyctorch submodule handed out by a __getattr__ gets the torch name and the torch-style errors too."""
    name = getattr(value, "__name__", None) if isinstance(value, type(sys)) else None
    if name and (name == _TARGET or name.startswith(_TARGET + ".")) and is_installed():
        sys.modules.setdefault(_torch_name(name), value)
        _add_missing_getattr(value)
    return value


def _remove_missing_getattr(module):
    current = module.__dict__.get("__getattr__")
    if getattr(current, "_pyctorch_alias_getattr", False):
        previous = current._pyctorch_previous
        if previous is None:
            del module.__getattr__
        else:
            module.__getattr__ = previous


class _AliasLoader(importlib.abc.Loader):
    """Loads `torch.X` by importing `pyctorch.X` and handing back that very module object."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        # the import system stamps our spec onto the module before exec_module; remember the real one
        self._real_spec = module.__dict__.get("__spec__")
        return module

    def exec_module(self, module):
        module.__spec__ = self._real_spec  # keep pyctorch's own spec (importlib.reload etc.)
        _add_missing_getattr(module)


class _TorchAliasFinder(importlib.abc.MetaPathFinder):
    """sys.meta_path entry mapping the `torch` package tree onto `pyctorch` (Note [The torch alias])."""

    def find_spec(self, fullname, path=None, target=None):
        real = _target_name(fullname)
        if real is None:
            return None
        try:
            found = real in sys.modules or importlib.util.find_spec(real) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise ModuleNotFoundError(_missing(fullname), name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real),
                                              is_package=fullname == _ALIAS or None)

    def invalidate_caches(self):
        pass


_finder = None
_saved_version = None


def is_installed():
    return _finder is not None and _finder in sys.meta_path


def install_as_torch(torchvision=None):
    """Make `import torch` (and every `torch.*` submodule) resolve to pyctorch in this process.

    torchvision=True (default: the PYCTORCH_TORCHVISION environment variable) also serves
    `import torchvision` from pyctorch's subset of it (Note [The torchvision subset]).

    Idempotent. Raises RuntimeError when the real torch is already imported (the two
    cannot share the name `torch`); call it before anything imports torch. Returns pyctorch.
    """
    global _finder, _saved_version
    import pyctorch
    loaded = sys.modules.get(_ALIAS)
    if loaded is not None and loaded is not pyctorch:
        where = getattr(loaded, "__file__", None) or repr(loaded)
        raise RuntimeError(
            "install_as_torch(): the real torch is already imported in this process "
            f"({where}); call pyctorch.install_as_torch() (or use `python -m pyctorch.as_torch`) "
            "before anything imports torch")
    if is_installed():
        if torchvision:
            from . import _vision_finder
            _vision_finder.install()
        return pyctorch
    _finder = _TorchAliasFinder()
    sys.meta_path.insert(0, _finder)
    from .torch_version import __version__ as api_version
    _saved_version = pyctorch.__dict__.get("__version__")
    pyctorch.__version__ = api_version
    import torch  # noqa: F401  (goes through the finder: sys.modules['torch'] is pyctorch)
    if torchvision is None:
        torchvision = os.environ.get("PYCTORCH_TORCHVISION", "") not in ("", "0")
    if torchvision:
        from . import _vision_finder
        _vision_finder.install()  # `import torchvision` finds pyctorch's subset when none is installed
    for name, module in list(sys.modules.items()):  # already-imported pyctorch submodules
        if module is not None and (name == _TARGET or name.startswith(_TARGET + ".")):
            alias = _ALIAS + name[len(_TARGET):]
            sys.modules.setdefault(alias, module)
            _add_missing_getattr(module)
    return pyctorch


def uninstall_as_torch():
    """Undo install_as_torch(): drop the hook and the `torch*` entries of sys.modules pointing at pyctorch."""
    global _finder
    import pyctorch
    from . import _vision_finder
    if _finder is not None and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _vision_finder.uninstall()
    _finder = None
    for name, module in list(sys.modules.items()):
        if (name == _ALIAS or name.startswith(_ALIAS + ".")) and module is not None \
                and getattr(module, "__name__", "").startswith(_TARGET):
            del sys.modules[name]
    for name, module in list(sys.modules.items()):
        if module is not None and (name == _TARGET or name.startswith(_TARGET + ".")):
            _remove_missing_getattr(module)
    if _saved_version is not None:
        pyctorch.__version__ = _saved_version


# ------------------------------------------------------------------ runner

_USAGE = """usage: python -m pyctorch.as_torch [-h] [--torchvision] (script.py | -m module | -c command) [args ...]

Run unchanged PyTorch code on pyctorch: `import torch` and every `torch.*`
submodule resolve to pyctorch (see pyctorch.as_torch's docstring). The script
runs as __main__ with sys.argv set as `python script.py args` would set it.
--torchvision: `import torchvision` gives pyctorch's subset of torchvision
(transforms, datasets, models' ResNets and VGGs, ops, utils) when none is
installed; also PYCTORCH_TORCHVISION=1.
"""


def _trim_traceback(tb):
    """Drop the runner's own frames (this file and runpy) from the front of a traceback."""
    here = os.path.abspath(__file__)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if os.path.abspath(filename) == here or "runpy" in os.path.basename(filename):
            tb = tb.tb_next
        else:
            break
    return tb


def _exec_as_main(code, path):
    """Runs `code` in a fresh __main__ module (which stays sys.modules['__main__'], as under python)."""
    import builtins
    import types
    module = types.ModuleType("__main__")
    if path is not None:
        module.__file__ = path
        module.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    exec(code, module.__dict__)


def main(argv=None):
    import runpy
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE)
        return 0 if args else 2
    vision = None
    if args[0] == "--torchvision":
        vision, args = True, args[1:]
        if not args:
            sys.stdout.write(_USAGE)
            return 2
    install_as_torch(torchvision=vision)
    try:
        if args[0] == "-m":
            if len(args) < 2:
                sys.stderr.write("pyctorch.as_torch: -m needs a module name\n")
                return 2
            sys.argv = [args[1]] + args[2:]  # runpy replaces argv[0] with the module's path
            sys.path[0] = os.getcwd()  # as `python -m`
            # `-m torch.distributed.run` runs pyctorch's module of that name (runpy needs its code,
            # which the alias loader does not hand out)
            runpy.run_module(_target_name(args[1]) or args[1], run_name="__main__", alter_sys=True)
        elif args[0] == "-c":
            if len(args) < 2:
                sys.stderr.write("pyctorch.as_torch: -c needs a command\n")
                return 2
            sys.argv = ["-c"] + args[2:]
            sys.path[0] = ""  # as `python -c`
            _exec_as_main(compile(args[1], "<string>", "exec"), None)
        else:
            script = args[0]
            if not os.path.exists(script):
                sys.stderr.write(f"pyctorch.as_torch: can't open file {script!r}: "
                                 "[Errno 2] No such file or directory\n")
                return 2
            sys.argv = [script] + args[1:]
            # like `python script.py`: the script's directory first on sys.path, __file__ absolute
            path = os.path.abspath(script)
            sys.path[0] = os.path.dirname(path)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    source = f.read()
                _exec_as_main(compile(source, path, "exec"), path)
            else:  # a directory or zip file with a __main__.py
                runpy.run_path(path, run_name="__main__")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # print like the interpreter would, without the runner's frames
        import traceback
        traceback.print_exception(type(e), e, _trim_traceback(e.__traceback__))
        return 1
    return 0


if __name__ == "__main__":
    # `python -m pyctorch.as_torch` runs this file as __main__; hand over to the importable
    # pyctorch.as_torch so that the hook's state lives in one module object only
    from pyctorch.as_torch import main as _main
    sys.exit(_main())
