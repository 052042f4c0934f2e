"""The test suite has one comparison of results, tests/comparison.py's assert_same (and assert_same_outcome): no
other test module may define a comparison helper of its own. A comparison helper here is a function (not a test)
whose name says it compares (assert_*, *close*, *compare*, *same*, *equal*, cmp) and whose body calls an allclose-like
check (numpy's or torch's allclose / isclose / assert_allclose / assert_array_equal / assert_close): a builder or
runner that calls assert_same is not one. A module may not define a function called assert_same,
assert_same_outcome or assert_close at all (two helpers of one name that mean different things)."""
import ast
import pathlib
import re

import pytest

TESTS = pathlib.Path(__file__).resolve().parent
COMPARISON_NAME = re.compile(r"^_*(assert_\w*|\w*close\w*|\w*compare\w*|\w*same\w*|\w*equal\w*|cmp\w*)$")
ALLCLOSE = {"allclose", "isclose", "assert_allclose", "assert_array_equal", "assert_close", "assert_array_almost_equal"}
RESERVED = {"assert_same", "assert_same_outcome", "assert_close"}


def comparison_helpers(source, filename="<test>"):
    """(line, name) of each function of source that is a comparison helper of its own."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("test"):
            continue
        if node.name in RESERVED:
            found.append((node.lineno, node.name))
            continue
        if not COMPARISON_NAME.match(node.name):
            continue
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                f = call.func
                if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)) in ALLCLOSE:
                    found.append((node.lineno, node.name))
                    break
    return found




def test_no_module_defines_its_own_comparison():
    found = {}
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if rel == "comparison.py":
            continue
        for line, name in comparison_helpers(path.read_text(), rel):
            found.setdefault(rel, []).append(name)
    assert not found, f"comparison helpers outside tests/comparison.py (use assert_same): {found}"


@pytest.mark.parametrize("source,expected", [
    ("def close(a, b):\n    np.testing.assert_allclose(a, b)\n", ["close"]),
    ("def _compare(p, t, tol):\n    assert np.allclose(p, t, rtol=tol)\n", ["_compare"]),
    ("def same(r, e):\n    np.testing.assert_array_equal(r, e)\n", ["same"]),
    ("def assert_same(a, b):\n    assert a == b\n", ["assert_same"]),                    # a second meaning
    ("def grads_close(a, b):\n    torch.testing.assert_close(a, b)\n", ["grads_close"]),
    ("def check_equal(a, b):\n    np.testing.assert_array_equal(a, b)\n", ["check_equal"]),
    ("def rand(shape):\n    return np.random.rand(*shape)\n", []),                        # a builder
    ("def close_file(f):\n    f.close()\n", []),                                           # no allclose
    ("def run_both(f):\n    assert_same(f(P), f(T))\n", []),                               # a runner
    ("def test_values():\n    np.testing.assert_allclose(1, 1)\n", []),                    # a test's own check
    ("def check_factorization(u, s, vh, a):\n    np.testing.assert_allclose(u @ s @ vh, a)\n", []),  # a property
])
def test_the_rule_tells_helpers_from_builders(source, expected):
    assert [name for _, name in comparison_helpers(source)] == expected
