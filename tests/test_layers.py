"""The C layers of the README's architecture section, checked on the source: the core (csrc/aten, the dispatcher,
the loop plan, the backends and their kernels) includes no Python header, names no Python C API and includes no
header of the layers above it (autograd, distributed, the binding); autograd includes no header of the binding and
names nothing the binding defines (it reaches the binding's Python types through the table of
csrc/autograd/python_values.h, Note [Python values for autograd]); the binding is on top."""
import os
import re

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "csrc")
ABOVE = {"aten": {"python", "autograd", "distributed"}, "distributed": {"python", "autograd"}, "autograd": {"python"}}


def sources(layer):
    base = os.path.join(ROOT, layer)
    for dirpath, _, names in os.walk(base):
        for n in sorted(names):
            if n.endswith((".c", ".h", ".cc", ".cu", ".cuh")):
                yield os.path.join(dirpath, n)


def code_of(path):
    """The file without its comments and string literals (a message may say "Python")."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


@pytest.mark.parametrize("path", list(sources("aten")) + list(sources("distributed")), ids=lambda p: os.path.relpath(p, ROOT))
def test_the_core_is_python_free(path):
    """csrc/aten and csrc/distributed (stores, the Gloo shim): plain C; their Python types live in the binding."""
    raw = open(path, encoding="utf-8").read()
    assert not re.search(r'#\s*include\s*[<"](Python\.h|.*pyobjects\.h|numpy/)', raw), "includes a Python header"
    names = sorted(set(re.findall(r"\b(Py[A-Z][A-Za-z_]*|Py_[A-Za-z_]+|_Py[A-Za-z_]+)\b", code_of(path))))
    assert not names, f"names the Python C API: {names}"


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_no_layer_includes_one_above_it(layer):
    bad = []
    for path in sources(layer):
        for inc in re.findall(r'#\s*include\s*"([^"]+)"', open(path, encoding="utf-8").read()):
            target = os.path.normpath(os.path.join(os.path.dirname(path), inc))
            rel = os.path.relpath(target, ROOT).split(os.sep)[0]
            if rel in ABOVE[layer]:
                bad.append(f"{os.path.relpath(path, ROOT)} -> {inc}")
    assert not bad, bad


def names_defined_in(layer):
    """The pct_* functions and variables a layer defines at file scope (not static): what other layers could name."""
    function = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(pct_\w+)\s*\([^;{]*\)\s*\{", re.M)
    variable = re.compile(r"^(?!static\b|extern\b|typedef\b)[A-Za-z_][\w \t*]*?\b(pct_\w+)\s*(?:\[[^\]]*\])?\s*[=;]",
                          re.M)
    names = set()
    for path in sources(layer):
        if path.endswith((".c", ".cc")):
            code = code_of(path)
            names.update(function.findall(code))
            names.update(variable.findall(code))
    return names


def test_autograd_names_nothing_the_binding_defines():
    """Autograd -> binding must never happen, by name as well as by include (the binding registers what autograd
    needs of its types in pct_python_values at import)."""
    defined = names_defined_in("python")
    assert {"pct_TensorType", "pct_size_new", "pct_tensor_alias"} <= defined  # the scan finds the binding's names
    bad = []
    for path in sources("autograd"):
        for name in sorted(set(re.findall(r"\bpct_\w+", code_of(path))) & defined):
            bad.append(f"{os.path.relpath(path, ROOT)}: {name}")
    assert not bad, bad


def test_the_tensor_class_is_assembled_in_one_module():
    """Every Tensor method written in Python is attached by pyctorch/_tensor.py (its docstring lists where the others
    come from), so a reader finds them from one file."""
    package = os.path.join(os.path.dirname(ROOT), "pyctorch")
    attaching = []
    for dirpath, _, names in os.walk(package):
        for n in names:
            path = os.path.join(dirpath, n)
            if n.endswith(".py") and re.search(r"_add_tensor_methods\(|setattr\((_C\.)?Tensor\b|^\s*(_C\.)?Tensor\.\w+\s*=[^=]",
                                              open(path, encoding="utf-8").read(), re.M):
                attaching.append(os.path.relpath(path, package))
    assert attaching == ["_tensor.py"], attaching


# Macros whose body may stay longer than LONGEST_MACRO lines, with the reason.
LONG_MACROS = {"MAX_ROW": "instantiated through pool.c's MAX_TYPES list, which its dispatch switch shares"}
LONGEST_MACRO = 45


def test_long_kernels_are_template_headers_not_macros():
    """A kernel family longer than about 40 lines is a template header included once per instantiation (per dtype
    through dtype_foreach.h, per instruction set through simd_levels_foreach.h), not a #define body, so a debugger
    and the compiler's messages see real lines."""
    long_ones = []
    for layer in ("aten", "autograd", "python", "distributed"):
        for path in sources(layer):
            lines = open(path, encoding="utf-8").read().split("\n")
            i = 0
            while i < len(lines):
                m = re.match(r"\s*#\s*define\s+(\w+)", lines[i])
                j = i
                while m and lines[j].rstrip().endswith("\\") and j + 1 < len(lines):
                    j += 1
                if m and j - i + 1 > LONGEST_MACRO and m.group(1) not in LONG_MACROS:
                    long_ones.append(f"{os.path.relpath(path, ROOT)}:{i + 1} {m.group(1)} ({j - i + 1} lines)")
                i = j + 1
    assert not long_ones, long_ones
