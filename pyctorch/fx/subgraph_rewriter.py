"""replace_pattern: find each occurrence of a pattern function's graph in a GraphModule and substitute the
graph of a replacement function taking the same inputs."""
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match:
    """One occurrence: anchor is the pattern's node the match was grown from (its output value, as torch
    reports it); nodes_map maps each pattern node to the graph node it matched."""

    def __init__(self, anchor, nodes_map):
        self.anchor = anchor
        self.nodes_map = nodes_map

    def __repr__(self):
        return f"Match(anchor={self.anchor}, nodes_map={self.nodes_map})"


def _graph_of(fn):
    if isinstance(fn, GraphModule):
        return fn.graph
    from ._symbolic_trace import symbolic_trace
    return symbolic_trace(fn).graph


class _Matcher:
    def __init__(self, pattern_graph):
        self.placeholders = [n for n in pattern_graph.nodes if n.op == "placeholder"]
        output = next(n for n in pattern_graph.nodes if n.op == "output")
        self.pattern_output = output.args[0]
        if not isinstance(self.pattern_output, Node):
            raise NotImplementedError("pyctorch.fx replace_pattern supports patterns returning one value")
        self.pattern_nodes = [n for n in pattern_graph.nodes if n.op not in ("placeholder", "output")]

    def match_at(self, anchor):
        nodes_map = {}
        if not self._match_node(self.pattern_output, anchor, nodes_map):
            return None
        # The matched nodes other than the anchor must not be used outside the match: they are erased.
        matched = {nodes_map[p] for p in self.pattern_nodes}
        for p in self.pattern_nodes:
            g = nodes_map[p]
            if g is not anchor and any(u not in matched for u in g.users):
                return None
        return Match(self.pattern_output, nodes_map)

    def _match_node(self, p, g, nodes_map):
        if p in nodes_map:
            return nodes_map[p] is g
        if p.op == "placeholder":
            if g in nodes_map.values():
                return False
            nodes_map[p] = g
            return True
        if p.op != g.op or p.target != g.target or g in nodes_map.values():
            return False
        nodes_map[p] = g
        if self._match_arg(p.args, g.args, nodes_map) and self._match_arg(p.kwargs, g.kwargs, nodes_map):
            return True
        del nodes_map[p]
        return False

    def _match_arg(self, p, g, nodes_map):
        if isinstance(p, Node):
            return isinstance(g, Node) and self._match_node(p, g, nodes_map)
        if isinstance(p, (tuple, list)):
            return type(p) is type(g) and len(p) == len(g) and \
                all(self._match_arg(a, b, nodes_map) for a, b in zip(p, g))
        if isinstance(p, dict):
            return isinstance(g, dict) and p.keys() == g.keys() and \
                all(self._match_arg(p[k], g[k], nodes_map) for k in p)
        return not isinstance(g, Node) and type(p) is type(g) and p == g


def replace_pattern(gm, pattern, replacement):
    """Replace every non-overlapping match of pattern's graph in gm.graph with replacement's graph; returns
    the matches (as torch.fx.subgraph_rewriter.replace_pattern)."""
    matcher = _Matcher(_graph_of(pattern))
    replacement_graph = _graph_of(replacement)
    graph = gm.graph
    matches, used = [], set()
    for node in list(graph.nodes):
        if node.op in ("placeholder", "output"):
            continue
        match = matcher.match_at(node)
        if match is None:
            continue
        covered = {match.nodes_map[p] for p in matcher.pattern_nodes}
        if covered & used:
            continue
        used |= covered
        matches.append(match)
    for match in matches:
        inputs = [match.nodes_map[p] for p in matcher.placeholders]
        val_map = {}
        rep_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(rep_placeholders) != len(inputs):
            raise RuntimeError("replace_pattern: pattern and replacement must take the same number of inputs")
        for rp, value in zip(rep_placeholders, inputs):
            val_map[rp] = value
        anchor = match.nodes_map[match.anchor]
        # Like torch: the replacement goes just before the first user of the matched value (or just after it
        # when unused), so the new nodes sit where the value is consumed.
        insert_point = next((n for n in graph.nodes if n in anchor.users), anchor.next)
        with graph.inserting_before(insert_point):
            result = graph.graph_copy(replacement_graph, val_map)
        if not isinstance(result, Node):
            raise NotImplementedError("pyctorch.fx replace_pattern supports replacements returning one value")
        anchor.replace_all_uses_with(result)
        for p in reversed(matcher.pattern_nodes):
            graph.erase_node(match.nodes_map[p])
    gm.recompile()
    return matches
