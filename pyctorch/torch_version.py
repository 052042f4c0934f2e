"""TorchVersion: a str that compares as a version (PEP 440) with strings, tuples and Version objects.

`TorchVersion("2.13.0") >= "2.0"`, `>= (2, 1)` and `== "2.13"` are all True, while it stays a
plain str for printing, slicing and `.split(".")`. Strings that are not versions fall back to
ordinary string comparison.
"""
import re
from collections.abc import Iterable

from .version import __version__ as _api_version

__all__ = ["TorchVersion", "InvalidVersion", "Version"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


_PATTERN = re.compile(r"""
    v?(?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?:-(?P<post_n1>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
""", re.VERBOSE | re.IGNORECASE)

_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}


class Version:
    """A parsed PEP 440 version; instances order like packaging.version.Version."""

    __slots__ = ("_text", "_key", "release")

    def __init__(self, text):
        m = _PATTERN.fullmatch(str(text).strip())
        if m is None:
            raise InvalidVersion(f"Invalid version: {text!r}")
        release = tuple(int(p) for p in m.group("release").split("."))
        trimmed = list(release)
        while len(trimmed) > 1 and trimmed[-1] == 0:
            trimmed.pop()
        has_pre = m.group("pre_l") is not None
        post = m.group("post_n1") or m.group("post_n2")
        has_post = post is not None or m.group("post_l") is not None
        dev = m.group("dev_n")
        has_dev = m.group("dev_l") is not None
        inf = float("inf")
        if has_pre:
            pre = (_PRE_RANK[m.group("pre_l").lower()], int(m.group("pre_n") or 0))
        elif has_dev and not has_post:
            pre = (-inf, 0)  # 1.0.dev0 sorts before 1.0a0
        else:
            pre = (inf, 0)
        post_key = int(post or 0) if has_post else -inf
        dev_key = int(dev or 0) if has_dev else inf
        local = m.group("local")
        local_key = () if local is None else tuple(
            (1, int(p), "") if p.isdigit() else (0, 0, p.lower()) for p in re.split(r"[-_.]", local))
        self.release = release
        self._text = str(text)
        self._key = (int(m.group("epoch") or 0), tuple(trimmed), pre, post_key, dev_key, local_key)

    def __repr__(self):
        return f"<Version('{self._text}')>"

    def __str__(self):
        return self._text

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, Version) and self._key == other._key

    def __lt__(self, other):
        return self._key < other._key

    def __le__(self, other):
        return self._key <= other._key

    def __gt__(self, other):
        return self._key > other._key

    def __ge__(self, other):
        return self._key >= other._key


def _as_version(value):
    if isinstance(value, Version):
        return value
    if isinstance(value, str):
        return Version(value)
    if hasattr(value, "release") and hasattr(value, "public"):  # packaging.version.Version
        return Version(str(value))
    if isinstance(value, Iterable):  # (2, 1) -> "2.1"
        return Version(".".join(str(item) for item in value))
    raise InvalidVersion(value)


class TorchVersion(str):
    """A version string that compares with str, tuple and Version operands as versions."""

    __slots__ = ()
    __hash__ = str.__hash__

    def _compare(self, other, op):
        try:
            return getattr(Version(self), op)(_as_version(other))
        except InvalidVersion:  # e.g. 'parrot': plain string order
            return getattr(str, op)(self, other)

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    def __ne__(self, other):
        result = self._compare(other, "__eq__")
        return result if result is NotImplemented else not result

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")


__version__ = TorchVersion(_api_version)
