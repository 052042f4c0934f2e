"""Module.get_extra_state / set_extra_state: the `_extra_state` entry of state_dict and its restore, with torch's
strict-mode bookkeeping (missing when the module keeps extra state, unexpected when it does not)."""
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T


def _modules(m):
    class Counter(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = m.nn.Linear(2, 2)
            self.seen = 0

        def get_extra_state(self):
            return {"seen": self.seen}

        def set_extra_state(self, state):
            self.seen = state["seen"]

    outer = m.nn.Sequential(Counter(), m.nn.ReLU())
    return Counter, outer


def _story(m):
    Counter, outer = _modules(m)
    outer[0].seen = 7
    sd = outer.state_dict()
    keys = list(sd)
    fresh = m.nn.Sequential(Counter(), m.nn.ReLU())
    fresh.load_state_dict(sd)
    missing = fresh.load_state_dict({k: v for k, v in sd.items() if not k.endswith("_extra_state")}, strict=False)
    plain = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.ReLU())
    unexpected = plain.load_state_dict(sd, strict=False)
    with pytest.raises(RuntimeError):
        plain.load_state_dict(sd)
    return (keys, sd["0._extra_state"], fresh[0].seen, list(missing.missing_keys), list(unexpected.unexpected_keys),
            m.nn.modules.module._EXTRA_STATE_KEY_SUFFIX)


def test_extra_state_round_trip():
    keys, extra, seen, missing, unexpected, suffix = _story(P)
    assert keys == ["0._extra_state", "0.lin.weight", "0.lin.bias"]  # its own entries, then its children's and extra == {"seen": 7} and seen == 7
    assert missing == ["0._extra_state"] and suffix == "_extra_state"
    assert unexpected == ["0._extra_state", "0.lin.weight", "0.lin.bias"]  # a plain Linear keeps no extra state
    with pytest.raises(RuntimeError):
        P.nn.Linear(1, 1).get_extra_state()


@requires_torch
def test_extra_state_like_torch():
    assert _story(P) == _story(T)
