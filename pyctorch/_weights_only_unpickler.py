"""The restricted unpickler of weights_only=True loads, and the registry of user-allowed globals
(torch.serialization.add_safe_globals & co.). See Note [weights_only] in pyctorch/serialization.py:
globals resolve only through an allowlist, and calls (REDUCE, NEWOBJ), BUILD and container
mutations are only performed on allowed objects; everything else raises pickle.UnpicklingError."""
import collections
import contextlib
import pickle
from collections import OrderedDict

from . import _C

_user_safe_globals = []  # objects, or (object, "module.name") pairs


def add_safe_globals(safe_globals):
    """Allow these globals (objects, or (object, "module.name") pairs) in weights_only loads."""
    if not isinstance(safe_globals, list):
        raise TypeError("safe_globals must be a list")
    _user_safe_globals.extend(safe_globals)


def get_safe_globals():
    return list(_user_safe_globals)


def clear_safe_globals():
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Context manager that adds `safe_globals` for the duration of the block."""
    before = list(_user_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe_globals[:] = before


def _user_allowed_globals():
    out = {}
    for entry in _user_safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2 or not isinstance(entry[1], str):
                raise ValueError("expected (object, 'module.name') in safe_globals")
            out[entry[1]] = entry[0]
            continue
        module = getattr(entry, "__module__", None)
        qual = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
        if module is None or qual is None:
            continue
        out[f"{module}.{qual}"] = entry
        if module == "pyctorch" or module.startswith("pyctorch."):
            out[f"torch{module[len('pyctorch'):]}.{qual}"] = entry  # the name our pickles carry
    return out


_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source.")


def weights_only_message(message):
    docs = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
            "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
                + message + docs)
    return (f"Weights only load failed. {_UNSAFE_MESSAGE}\nPlease file an issue with the following so that we can "
            "make `weights_only=True` compatible with your use case: WeightsUnpickler error: \n\n" + message + docs)


class Unpickler(pickle._Unpickler):
    """The restricted unpickler of weights_only=True loads (Note [weights_only])."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, persistent_load, allowed_globals, **kwargs):
        super().__init__(file, **kwargs)
        self._persistent = persistent_load
        self._allowed = allowed_globals  # torch's name -> pyctorch object
        self._user = _user_allowed_globals()
        self._allowed_ids = {id(v) for v in self._allowed.values()} | {id(v) for v in self._user.values()}

    def _is_allowed(self, obj):
        return id(obj) in self._allowed_ids

    def persistent_load(self, pid):
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        return self._persistent(pid)

    def find_class(self, module, name):
        if self.proto < 3 and self.fix_imports:
            import _compat_pickle
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        obj = self._allowed.get(full)
        if obj is None:
            obj = self._user.get(full)
        if obj is None:
            shown = full[len("builtins."):] if full.startswith("builtins.") else full
            raise pickle.UnpicklingError(
                f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
                f"Please use `torch.serialization.add_safe_globals([{shown}])` or the "
                f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this global "
                "if you trust this class/function.")
        return obj

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if not self._is_allowed(func):
            raise pickle.UnpicklingError(f"Trying to call reduce for unrecognized function {func!r}")
        if type(args) is not tuple:
            raise pickle.UnpicklingError(f"REDUCE arguments must be a tuple, got {type(args).__name__}")
        self.stack[-1] = func(*args)
    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        from .nn.parameter import Parameter
        if type(args) is not tuple:
            raise pickle.UnpicklingError(f"NEWOBJ arguments must be a tuple, got {type(args).__name__}")
        if cls is Parameter:
            self.append(Parameter(*args))
        elif self._is_allowed(cls) and isinstance(cls, type):
            self.append(cls.__new__(cls, *args))
        else:
            raise pickle.UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted "
                                         f"via `add_safe_globals` but got {cls}")
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_build(self):
        from .nn.parameter import Parameter
        state = self.stack.pop()
        inst = self.stack[-1]
        t = type(inst)
        if t is _C.Tensor:
            inst.set_(*state)
        elif t is Parameter or t is OrderedDict:
            if state:
                inst.__dict__.update(state)
        elif self._is_allowed(t):
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                                         f"via `add_safe_globals`, but got {t}")
    dispatch[pickle.BUILD[0]] = load_build

    def _target(self, opcode, kinds, what):
        target = self.stack[-1] if self.stack else None
        if type(target) not in kinds:
            raise pickle.UnpicklingError(f"Can only {opcode} for {what}, but got {type(target)}")
        return target

    def load_append(self):
        value = self.stack.pop()
        self._target("APPEND", (list,), "lists").append(value)
    dispatch[pickle.APPEND[0]] = load_append

    def load_appends(self):
        items = self.pop_mark()
        self._target("APPENDS", (list,), "lists").extend(items)
    dispatch[pickle.APPENDS[0]] = load_appends

    _DICTS = (dict, OrderedDict, collections.Counter)
    _DICT_NAMES = "dict, collections.OrderedDict, collections.Counter"

    def load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        self._target("SETITEM", self._DICTS, self._DICT_NAMES)[key] = value
    dispatch[pickle.SETITEM[0]] = load_setitem

    def load_setitems(self):
        items = self.pop_mark()
        d = self._target("SETITEMS", self._DICTS, self._DICT_NAMES)
        for i in range(0, len(items), 2):
            d[items[i]] = items[i + 1]
    dispatch[pickle.SETITEMS[0]] = load_setitems

    def load_additems(self):
        items = self.pop_mark()
        self._target("ADDITEMS", (set,), "sets").update(items)
    dispatch[pickle.ADDITEMS[0]] = load_additems

    def _refuse(self):
        raise pickle.UnpicklingError("Unsupported operand: this pickle instruction is not allowed with weights_only=True")
    for _op in (pickle.INST, pickle.OBJ, pickle.NEWOBJ_EX, pickle.EXT1, pickle.EXT2, pickle.EXT4):
        dispatch[_op[0]] = _refuse
    del _op
