"""RemovableHandle: what register_hook and friends return."""
import itertools
import weakref

_ids = itertools.count()


class RemovableHandle:
    """Removes one hook from the dict it was registered in; usable as a context manager."""

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict = hooks_dict  # plain dicts cannot be weakly referenced
        self.id = next(_ids)
        extras = [] if extra_dict is None else extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(e) for e in extras)

    def remove(self):
        self.hooks_dict.pop(self.id, None)
        for ref in self.extra_dict_ref:
            e = ref()
            if e is not None:
                e.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
