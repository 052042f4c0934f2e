"""A captured graph as one Python function: each node one line, calling the recorded C function (or Tensor
method) directly, held tensors bound as constants of the function, values dropped after their last use."""
import linecache

__all__ = ["python_runner"]

_counter = [0]


def python_runner(gm):
    graph = gm.graph
    env = {}
    names = {}

    def const(value, hint):
        name = f"_{hint}{len(env)}"
        env[name] = value
        return name

    def rep(arg):
        from pyctorch.fx import Node
        if isinstance(arg, Node):
            return names[arg]
        if isinstance(arg, (list, tuple)) and not hasattr(arg, "_fields"):
            inner = ", ".join(rep(a) for a in arg)
            return f"[{inner}]" if isinstance(arg, list) else (f"({inner},)" if len(arg) == 1 else f"({inner})")
        if isinstance(arg, slice):
            return f"slice({rep(arg.start)}, {rep(arg.stop)}, {rep(arg.step)})"
        if arg is None or isinstance(arg, (bool, int, str)):
            return repr(arg)
        return const(arg, "k")  # floats (inf, nan), dtypes, devices, dicts: by value, as objects

    last_use = {}
    for node in graph.nodes:
        for inp in node.all_input_nodes:
            last_use[inp] = node
    params, body = [], []
    for k, node in enumerate(graph.nodes):
        name = f"v{k}"
        names[node] = name
        if node.op == "placeholder":
            params.append(name)
            continue
        if node.op == "output":
            body.append(f"return {rep(node.args[0])}")
            continue
        if node.op == "get_attr":
            body.append(f"{name} = {const(_fetch(gm, node.target), 'c')}")
            continue
        args = [rep(a) for a in node.args] + [f"{key}={rep(v)}" for key, v in node.kwargs.items()]
        if node.op == "call_method":
            line = f"{name} = {args[0]}.{node.target}({', '.join(args[1:])})"
        elif node.op == "call_function":
            line = f"{name} = {const(node.target, 'f')}({', '.join(args)})"
        else:
            raise NotImplementedError(f"pyctorch's inductor cannot run a {node.op} node")
        body.append(line)
        dead = [names[v] for v in node.all_input_nodes if last_use[v] is node]
        if not node.users:
            dead.append(name)
        if dead:
            body.append(f"del {', '.join(dict.fromkeys(dead))}")
    _counter[0] += 1
    filename = f"<pyctorch_inductor>.{_counter[0]}"
    src = f"def run({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body)
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), env)
    run = env["run"]
    run.source = src
    return run


def _fetch(gm, target):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj
