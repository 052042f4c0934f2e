"""The restricted unpickler of weights_only=True loads, and the registry of user-allowed globals
(torch.serialization.add_safe_globals & co.). See Note [weights_only] in pyctorch/serialization.py:
globals resolve only through an allowlist, and calls (REDUCE, NEWOBJ), BUILD and container
mutations are only performed on allowed objects; everything else raises pickle.UnpicklingError.

Note [weights_only opcodes]
The unpickler runs its own loop over exactly the opcodes torch's restricted unpickler knows (the
protocol-2 subset torch.save writes: GLOBAL, REDUCE, NEWOBJ, BUILD, MARK, the tuple/list/dict/set
builders, BININT*, BINFLOAT, LONG1, BINUNICODE, SHORT_BINSTRING, BINPERSID, BINGET/BINPUT and
their LONG_ forms, PROTO, STOP); any other byte raises UnpicklingError("Unsupported operand N"),
as torch's does. Inheriting pickle's Python unpickler instead would keep opcodes such as
BYTEARRAY8, whose handler allocates the 8-byte length it reads before reading any data: a
275-byte file could ask for gigabytes. Every length read from the file is clamped to the bytes
left in it before anything is read (a short read then fails as torch's short reads do).
"""
import collections
import contextlib
import io
import os
import warnings
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING
from collections import OrderedDict
from pickle import UnpicklingError, decode_long
from struct import unpack
from sys import maxsize

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


_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

# opcode bytes (pickle's names)
_MARK, _STOP, _GLOBAL, _REDUCE, _BUILD, _NEWOBJ = b"(", b".", b"c", b"R", b"b", b"\x81"
_APPEND, _APPENDS, _SETITEM, _SETITEMS = b"a", b"e", b"s", b"u"
_TUPLE, _TUPLE1, _TUPLE2, _TUPLE3, _EMPTY_TUPLE = b"t", b"\x85", b"\x86", b"\x87", b")"
_NONE, _NEWTRUE, _NEWFALSE, _EMPTY_LIST, _EMPTY_DICT, _EMPTY_SET = b"N", b"\x88", b"\x89", b"]", b"}", b"\x8f"
_BININT, _BININT1, _BININT2, _BINFLOAT, _LONG1 = b"J", b"K", b"M", b"G", b"\x8a"
_BINUNICODE, _SHORT_BINSTRING, _BINPERSID = b"X", b"U", b"Q"
_BINGET, _LONG_BINGET, _BINPUT, _LONG_BINPUT, _PROTO = b"h", b"j", b"q", b"r", b"\x80"


def _remaining_bytes(file):
    """How many bytes `file` holds past its position (None when that cannot be known)."""
    if isinstance(file, io.BytesIO):
        return len(file.getbuffer()) - file.tell()
    try:
        if not file.seekable():
            return None
        pos = file.tell()
        end = file.seek(0, os.SEEK_END)
        file.seek(pos)
        return end - pos
    except (AttributeError, OSError, ValueError):
        return None


class Unpickler:
    """The restricted unpickler of weights_only=True loads (Note [weights_only], Note [weights_only opcodes]).

    `persistent_load` (may be None: persistent ids are then refused) receives the ids of BINPERSID;
    `allowed_globals` maps torch's global names to the pyctorch objects they load as."""

    def __init__(self, file, persistent_load=None, allowed_globals=None, *, encoding="bytes", **_ignored):
        self.encoding = encoding
        self._file = file
        self.memo = {}
        self.proto = -1
        self._persistent = persistent_load
        self._allowed = allowed_globals if allowed_globals is not None else {}
        self._user = _user_allowed_globals()
        self._allowed_ids = {id(v) for v in self._allowed.values()} | {id(v) for v in self._user.values()}
        self._left = _remaining_bytes(file)  # bytes not yet read (None: unknown, reads are then unclamped)

    # -- reading: every length taken from the file is clamped to what the file still holds --

    def _read(self, n):
        if self._left is not None:
            n = min(n, self._left)
        data = self._file.read(n)
        if self._left is not None:
            self._left -= len(data)
        return data

    def _readline(self):
        if self._left is not None:
            line = self._file.readline(self._left)
            self._left -= len(line)
            return line
        return self._file.readline()

    def _is_allowed(self, obj):
        return id(obj) in self._allowed_ids

    def _find_global(self):
        module = self._readline()[:-1].decode("utf-8")
        name = self._readline()[:-1].decode("utf-8")
        if (module, name) in NAME_MAPPING:  # as torch: protocol-2 names of Python 2 modules
            module, name = NAME_MAPPING[(module, name)]
        elif module in IMPORT_MAPPING:
            module = IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        obj = self._allowed.get(full)
        if obj is None:
            obj = self._user.get(full)
        if obj is None:
            if full.startswith("builtins"):
                rest = full[len("builtins"):]
                full = rest[1:] if rest.startswith(".") else full
            raise UnpicklingError(
                f"Unsupported global: GLOBAL {full} was not an allowed global by default. "
                f"Please use `torch.serialization.add_safe_globals([{full}])` or the "
                f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this global "
                "if you trust this class/function.")
        return obj

    def persistent_load(self, pid):
        if self._persistent is None:
            raise UnpicklingError("unsupported persistent id encountered")
        return self._persistent(pid)

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _set_target(self, opcode):
        if type(self.stack[-1]) not in (dict, OrderedDict, collections.Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(self.stack[-1])}")
        return self.stack[-1]

    def _build(self, state):
        from .nn.parameter import Parameter
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
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                                  f"via `add_safe_globals`, but got {t}")

    def load(self):
        from .nn.parameter import Parameter
        self.metastack = []
        self.stack = []
        read = self._read
        while True:
            key = read(1)
            if not key:
                raise EOFError
            if key == _GLOBAL:
                self.stack.append(self._find_global())
            elif key == _NEWOBJ:
                args = self.stack.pop()
                cls = self.stack.pop()
                if cls is Parameter:
                    self.stack.append(Parameter(*args))
                elif self._is_allowed(cls) and isinstance(cls, type):
                    self.stack.append(cls.__new__(cls, *args))
                else:
                    raise UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted "
                                          f"via `add_safe_globals` but got {cls}")
            elif key == _REDUCE:
                args = self.stack.pop()
                func = self.stack[-1]
                if not self._is_allowed(func):
                    raise UnpicklingError(f"Trying to call reduce for unrecognized function {func}")
                self.stack[-1] = func(*args)
            elif key == _BUILD:
                self._build(self.stack.pop())
            elif key == _APPEND:
                item = self.stack.pop()
                if type(self.stack[-1]) is not list:
                    raise UnpicklingError(f"Can only append to lists, but got {type(self.stack[-1])}")
                self.stack[-1].append(item)
            elif key == _APPENDS:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif key == _SETITEM:
                value = self.stack.pop()
                k = self.stack.pop()
                self._set_target("SETITEM")[k] = value
            elif key == _SETITEMS:
                items = self._pop_mark()
                d = self._set_target("SETITEMS")
                for i in range(0, len(items), 2):
                    d[items[i]] = items[i + 1]
            elif key == _MARK:
                self.metastack.append(self.stack)
                self.stack = []
            elif key == _TUPLE:
                items = self._pop_mark()
                self.stack.append(tuple(items))
            elif key == _TUPLE1:
                self.stack[-1] = (self.stack[-1],)
            elif key == _TUPLE2:
                self.stack[-2:] = [(self.stack[-2], self.stack[-1])]
            elif key == _TUPLE3:
                self.stack[-3:] = [(self.stack[-3], self.stack[-2], self.stack[-1])]
            elif key == _NONE:
                self.stack.append(None)
            elif key == _NEWFALSE:
                self.stack.append(False)
            elif key == _NEWTRUE:
                self.stack.append(True)
            elif key == _EMPTY_TUPLE:
                self.stack.append(())
            elif key == _EMPTY_LIST:
                self.stack.append([])
            elif key == _EMPTY_DICT:
                self.stack.append({})
            elif key == _EMPTY_SET:
                self.stack.append(set())
            elif key == _BININT:
                self.stack.append(unpack("<i", read(4))[0])
            elif key == _BININT1:
                self.stack.append(read(1)[0])
            elif key == _BININT2:
                self.stack.append(unpack("<H", read(2))[0])
            elif key == _BINFLOAT:
                self.stack.append(unpack(">d", read(8))[0])
            elif key == _BINUNICODE:
                n = unpack("<I", read(4))[0]
                if n > maxsize:
                    raise UnpicklingError("String is too long")
                self.stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif key == _SHORT_BINSTRING:
                data = read(read(1)[0])
                self.stack.append(data if self.encoding == "bytes" else data.decode(self.encoding, "strict"))
            elif key == _BINPERSID:
                pid = self.stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
                if type(pid) is tuple and len(pid) > 0:
                    kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
                    if kind != "storage":
                        raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
                self.stack.append(self.persistent_load(pid))
            elif key == _BINGET or key == _LONG_BINGET:
                idx = (read(1) if key == _BINGET else unpack("<I", read(4)))[0]
                self.stack.append(self.memo[idx])
            elif key == _BINPUT or key == _LONG_BINPUT:
                idx = (read(1) if key == _BINPUT else unpack("<I", read(4)))[0]
                self.memo[idx] = self.stack[-1]
            elif key == _LONG1:
                self.stack.append(decode_long(read(read(1)[0])))
            elif key == _PROTO:
                self.proto = read(1)[0]
                if self.proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {self.proto} in the checkpoint, which was not the default pickle "
                        "protocol used by `torch.load` (2). The weights_only Unpickler might not support all "
                        "instructions implemented by this protocol, please file an issue for adding support if you "
                        "encounter this.", stacklevel=2)
            elif key == _STOP:
                return self.stack.pop()
            else:
                raise UnpicklingError(f"Unsupported operand {key[0]}")


def load(file, *, encoding="ASCII"):
    """One restricted unpickle from `file`, without persistent ids (as torch's _weights_only_unpickler.load)."""
    return Unpickler(file, None, _default_allowed(), encoding=encoding).load()


def _default_allowed():
    from .serialization import _allowed_globals
    return _allowed_globals()
