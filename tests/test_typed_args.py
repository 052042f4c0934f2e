"""The typed argument structs of the operator table (Note [Typed arguments] in csrc/aten/op.h): generated at build
time from the schemas by csrc/codegen/gen_op_args.py, they must name every parameter the binding parses, in the
binding's slot order, compile as plain C (no Python), and be what the kernels read."""
import collections
import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

import pyctorch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATEN = os.path.join(REPO, "csrc", "aten")
sys.path.insert(0, os.path.join(REPO, "csrc", "codegen"))
import gen_op_args  # noqa: E402

needs_cc = pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler to expand the table")


@pytest.fixture(scope="module")
def header(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("gen") / "op_args.h")
    subprocess.run([sys.executable, os.path.join(REPO, "csrc", "codegen", "gen_op_args.py"), ATEN, out], check=True)
    return out


def struct_fields(text, ident):
    m = re.search(r"typedef struct pct_args_%s \{\n(.*?)\n\} pct_args_%s;" % (ident, ident), text, re.S)
    assert m, f"no struct for {ident}"
    return [re.sub(r"[^\w]", "", line.split()[-1]) for line in m.group(1).splitlines() if "unused_" not in line]


@needs_cc
def test_every_op_has_a_struct_with_the_bindings_parameters(header):
    text = open(header).read()
    table = pyctorch._C._op_table()
    assert len(table) == text.count("typedef struct pct_args_")
    for op in table:
        inner = op["schema"][op["schema"].index("(") + 1:op["schema"].rindex(")")]
        # the parameter names as the binding reads them: the last word before a default, in schema order
        names = [p.split("=")[0].split()[-1] for p in re.split(r",(?![^\[]*\])", inner) if p.strip() not in ("", "*")]
        assert struct_fields(text, op["id"]) == names, op["schema"]


@needs_cc
def test_field_types_follow_the_schema(header):
    text = open(header).read()
    want = {"Tensor": "pct_tensor *", "Tensor?": "pct_tensor *", "Scalar": "pct_scalar ", "Scalar?": "const pct_scalar *",
            "int": "int64_t ", "int?": "pct_int_opt ", "float?": "pct_float_opt ", "bool": "bool ", "int[]": "pct_int_list ",
            "Tensor[]": "pct_tensor_list ", "str?": "const char *", "ScalarType?": "int "}
    seen = collections.Counter()
    for ident, schema in gen_op_args.table_entries(ATEN):
        for typ, optional, list_size, name in gen_op_args.parameters(schema):
            key = typ + ("[]" if list_size is not None else "") + ("?" if optional and list_size is None else "")
            if key in want:
                assert f"    {want[key]}{name};" in text.split(f"pct_args_{ident} {{")[1].split("}")[0], (ident, key, name)
                seen[key] += 1
    assert len(seen) == len(want)  # every kind of parameter was met and checked


@needs_cc
def test_the_header_is_plain_c(header, tmp_path):
    """op.h with its generated structs compiles without Python (what a .cu file of the CUDA backend includes)."""
    src = tmp_path / "use.c"
    src.write_text('#include "op.h"\nint64_t dim_of(const pct_call *c) { PCT_ARGS(sum); return arg.dim.n; }\n')
    r = subprocess.run(["gcc", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                        "-I", ATEN, "-I", os.path.dirname(header), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]


def test_kernels_of_one_op_read_typed_arguments():
    """A kernel that serves exactly one op reads its arguments through PCT_ARGS, not by slot number. Kernels shared by
    several ops read the slots they share through pct_value_* / PCT_INT_LIST_AT; hardtanh rewrites its limits in
    the call for clamp's kernel, which it then runs."""
    allowed = {"pct_cpu_hardtanh"}
    kernel_ops = collections.defaultdict(list)
    for f in glob.glob(os.path.join(ATEN, "*.def")):
        for m in re.finditer(r"PCT_(?:OP|COMPOSITE)\((\w+),.*?,\s*(pct_\w+)\)\s*$", open(f).read(), re.M):
            kernel_ops[m.group(2)].append(m.group(1))
    offenders = []
    for path in glob.glob(os.path.join(ATEN, "**", "*.c"), recursive=True):
        src = open(path).read()
        for m in re.finditer(r"^pct_object \*(pct_\w+)\(pct_call \*c\)\n?\{", src, re.M):
            body = src[m.end():src.find("\n}\n", m.end())]
            if len(kernel_ops.get(m.group(1), [])) == 1 and re.search(r"c->v\[\d", body) and m.group(1) not in allowed:
                offenders.append(f"{os.path.relpath(path, REPO)}: {m.group(1)}")
    for path in glob.glob(os.path.join(ATEN, "cpu", "*.[ch]")):
        for m in re.finditer(r"^#\s*define\s+(\w+).*c->v\[", open(path).read(), re.M):
            offenders.append(f"{os.path.relpath(path, REPO)}: macro {m.group(1)} reads slots")
    assert not offenders, offenders
