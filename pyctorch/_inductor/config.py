"""torch._inductor.config: the flags libraries set before compiling. pyctorch's compiler reads none of them yet;
they are stored so that code which sets and reads them runs as under torch."""
import contextlib

debug = False
max_autotune = False
max_autotune_gemm = False
coordinate_descent_tuning = False
freezing = False
fx_graph_cache = True
triton = type("triton", (), {"cudagraphs": False, "unique_kernel_names": False})()
cpp = type("cpp", (), {"threads": -1, "simdlen": None})()


@contextlib.contextmanager
def patch(*args, **kwargs):
    """Sets flags for the duration of a with block (a dict, a name and value, or keyword arguments)."""
    changes = dict(args[0]) if args and isinstance(args[0], dict) else ({args[0]: args[1]} if args else {})
    changes.update(kwargs)
    g = globals()
    saved = {k: g[k] for k in changes if k in g}
    g.update(changes)
    try:
        yield
    finally:
        for k in changes:
            if k in saved:
                g[k] = saved[k]
            else:
                del g[k]
