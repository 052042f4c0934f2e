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
left in it before anything is read (a short read then fails as torch's short reads do; an
in-memory buffer, what zip checkpoints are unpickled from, never reads past its end anyway).
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
        if isinstance(file, io.BytesIO):
            # an in-memory buffer never reads (nor allocates) past its end: no clamping needed
            self._left = None
            self._read, self._readline = file.read, file.readline
        else:
            self._left = _remaining_bytes(file)  # bytes not yet read (None: unknown, reads are then unclamped)
            if self._left is None:
                self._read, self._readline = file.read, file.readline

    # -- reading: every length taken from the file is clamped to what the file still holds --

    def _read(self, n):
        n = min(n, self._left)
        data = self._file.read(n)
        self._left -= len(data)
        return data

    def _readline(self):
        line = self._file.readline(self._left)
        self._left -= len(line)
        return line

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
        self.metastack = []
        self.stack = []
        read = self._read
        dispatch = _DISPATCH
        try:
            while True:
                key = read(1)
                if not key:
                    raise EOFError
                op = dispatch.get(key[0])
                if op is None:
                    raise UnpicklingError(f"Unsupported operand {key[0]}")
                op(self)
        except _Stop as stop:
            return stop.value

    # -- one method per opcode torch's restricted unpickler knows (Note [weights_only opcodes]) --

    def _op_global(self):
        self.stack.append(self._find_global())

    def _op_newobj(self):
        from .nn.parameter import Parameter
        args = self.stack.pop()
        cls = self.stack.pop()
        if cls is Parameter:
            self.stack.append(Parameter(*args))
        elif self._is_allowed(cls) and isinstance(cls, type):
            self.stack.append(cls.__new__(cls, *args))
        else:
            raise UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted "
                                  f"via `add_safe_globals` but got {cls}")

    def _op_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if not self._is_allowed(func):
            raise UnpicklingError(f"Trying to call reduce for unrecognized function {func}")
        self.stack[-1] = func(*args)

    def _op_build(self):
        self._build(self.stack.pop())

    def _op_append(self):
        item = self.stack.pop()
        if type(self.stack[-1]) is not list:
            raise UnpicklingError(f"Can only append to lists, but got {type(self.stack[-1])}")
        self.stack[-1].append(item)

    def _op_appends(self):
        items = self._pop_mark()
        if type(self.stack[-1]) is not list:
            raise UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
        self.stack[-1].extend(items)

    def _op_setitem(self):
        value = self.stack.pop()
        k = self.stack.pop()
        self._set_target("SETITEM")[k] = value

    def _op_setitems(self):
        items = self._pop_mark()
        d = self._set_target("SETITEMS")
        for i in range(0, len(items), 2):
            d[items[i]] = items[i + 1]

    def _op_mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    def _op_tuple(self):
        items = self._pop_mark()
        self.stack.append(tuple(items))

    def _op_tuple1(self):
        self.stack[-1] = (self.stack[-1],)

    def _op_tuple2(self):
        self.stack[-2:] = [(self.stack[-2], self.stack[-1])]

    def _op_tuple3(self):
        self.stack[-3:] = [(self.stack[-3], self.stack[-2], self.stack[-1])]

    def _op_none(self):
        self.stack.append(None)

    def _op_newfalse(self):
        self.stack.append(False)

    def _op_newtrue(self):
        self.stack.append(True)

    def _op_empty_tuple(self):
        self.stack.append(())

    def _op_empty_list(self):
        self.stack.append([])

    def _op_empty_dict(self):
        self.stack.append({})

    def _op_empty_set(self):
        self.stack.append(set())

    def _op_binint(self):
        self.stack.append(unpack("<i", self._read(4))[0])

    def _op_binint1(self):
        self.stack.append(self._read(1)[0])

    def _op_binint2(self):
        self.stack.append(unpack("<H", self._read(2))[0])

    def _op_binfloat(self):
        self.stack.append(unpack(">d", self._read(8))[0])

    def _op_binunicode(self):
        n = unpack("<I", self._read(4))[0]
        if n > maxsize:
            raise UnpicklingError("String is too long")
        self.stack.append(str(self._read(n), "utf-8", "surrogatepass"))

    def _op_short_binstring(self):
        data = self._read(self._read(1)[0])
        self.stack.append(data if self.encoding == "bytes" else data.decode(self.encoding, "strict"))

    def _op_binpersid(self):
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0:
            kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
            if kind != "storage":
                raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        self.stack.append(self.persistent_load(pid))

    def _op_binget(self):
        self.stack.append(self.memo[self._read(1)[0]])

    def _op_long_binget(self):
        self.stack.append(self.memo[unpack("<I", self._read(4))[0]])

    def _op_binput(self):
        self.memo[self._read(1)[0]] = self.stack[-1]

    def _op_long_binput(self):
        self.memo[unpack("<I", self._read(4))[0]] = self.stack[-1]

    def _op_long1(self):
        self.stack.append(decode_long(self._read(self._read(1)[0])))

    def _op_proto(self):
        self.proto = self._read(1)[0]
        if self.proto != 2:
            warnings.warn(
                f"Detected pickle protocol {self.proto} in the checkpoint, which was not the default pickle "
                "protocol used by `torch.load` (2). The weights_only Unpickler might not support all "
                "instructions implemented by this protocol, please file an issue for adding support if you "
                "encounter this.", stacklevel=4)

    def _op_stop(self):
        raise _Stop(self.stack.pop())


class _Stop(Exception):
    def __init__(self, value):
        self.value = value


_DISPATCH = {op[0]: fn for op, fn in (
    (_GLOBAL, Unpickler._op_global), (_NEWOBJ, Unpickler._op_newobj), (_REDUCE, Unpickler._op_reduce),
    (_BUILD, Unpickler._op_build), (_APPEND, Unpickler._op_append), (_APPENDS, Unpickler._op_appends),
    (_SETITEM, Unpickler._op_setitem), (_SETITEMS, Unpickler._op_setitems), (_MARK, Unpickler._op_mark),
    (_TUPLE, Unpickler._op_tuple), (_TUPLE1, Unpickler._op_tuple1), (_TUPLE2, Unpickler._op_tuple2),
    (_TUPLE3, Unpickler._op_tuple3), (_NONE, Unpickler._op_none), (_NEWFALSE, Unpickler._op_newfalse),
    (_NEWTRUE, Unpickler._op_newtrue), (_EMPTY_TUPLE, Unpickler._op_empty_tuple),
    (_EMPTY_LIST, Unpickler._op_empty_list), (_EMPTY_DICT, Unpickler._op_empty_dict),
    (_EMPTY_SET, Unpickler._op_empty_set), (_BININT, Unpickler._op_binint), (_BININT1, Unpickler._op_binint1),
    (_BININT2, Unpickler._op_binint2), (_BINFLOAT, Unpickler._op_binfloat),
    (_BINUNICODE, Unpickler._op_binunicode), (_SHORT_BINSTRING, Unpickler._op_short_binstring),
    (_BINPERSID, Unpickler._op_binpersid), (_BINGET, Unpickler._op_binget),
    (_LONG_BINGET, Unpickler._op_long_binget), (_BINPUT, Unpickler._op_binput),
    (_LONG_BINPUT, Unpickler._op_long_binput), (_LONG1, Unpickler._op_long1), (_PROTO, Unpickler._op_proto),
    (_STOP, Unpickler._op_stop))}


def load(file, *, encoding="ASCII"):
    """One restricted unpickle from `file`, without persistent ids (as torch's _weights_only_unpickler.load)."""
    return Unpickler(file, None, _default_allowed(), encoding=encoding).load()


def _default_allowed():
    from .serialization import _allowed_globals
    return _allowed_globals()
