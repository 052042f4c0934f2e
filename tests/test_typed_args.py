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


# The generic machinery that works on any op by slot (the dispatcher, the meta backend's shape rules, out= checks,
# the calls composites build, the stand-ins of fallbacks and the CUDA fallback's device argument): the only files under
# csrc/aten and csrc/cuda that may read or write a call's slots by number.
CUDA_SRC = os.path.join(os.path.dirname(ATEN), "cuda")
GENERIC = {os.path.join(ATEN, p) for p in ("dispatch.c", os.path.join("meta", "meta_backend.c"), "out.c",
                                             os.path.join("composite", "op_calls.c"), "standins.c")} | \
    {os.path.join(CUDA_SRC, "cuda_fallback.c")}


def strip_comments(src):
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)


def slot_reads(src):
    """(line, text) of each place in C source `src` that reaches a pct_call's slots by number: `<call>->v[` or
    `<call>.v[` for any variable declared a pct_call (parameters included), PCT_INT_LIST_AT, or a pct_value_*
    reader applied to a slot."""
    code = strip_comments(src)
    calls = set(re.findall(r"\bpct_call\s*(?:\*\s*(?:const\s+)?)?(\w+)", code)) | {"c"}
    pattern = re.compile(r"\b(?:%s)\s*(?:->|\.)\s*v\s*\[|\bPCT_INT_LIST_AT\b|\bpct_value_\w+\(\s*&?\s*\w+\s*(?:->|\.)\s*v\s*\["
                         % "|".join(sorted(map(re.escape, calls))))
    return [(code.count("\n", 0, m.start()) + 1, src.splitlines()[code.count("\n", 0, m.start())].strip())
            for m in pattern.finditer(code)]


def test_slot_reads_are_found():
    """The check below can fail: each kind of slot read is seen, the int lists' own `->v[` and comments are not."""
    bad = ("pct_object *k(pct_call *c) { return c->v[0].t; }\n"
           "void m(void) { pct_call m; pct_call_init(&m, 0); m.v[1].none = 0; }\n"
           "int64_t n(const pct_call *call) { return PCT_INT_LIST_AT(call, 1)->n + pct_value_int_opt(&call->v[2]).v; }\n")
    assert [line for line, _ in slot_reads(bad)] == [1, 2, 3, 3]
    fine = "/* c->v[0] */ int64_t f(const pct_int_list *src, pct_call *c) { PCT_ARGS(sum); return src->v[0]; }\n"
    assert slot_reads(fine) == []


def test_kernels_read_typed_arguments():
    """Every kernel reads its arguments through PCT_ARGS (Note [Typed arguments] in csrc/aten/op.h); ops that share
    an implementation have typed entries that pass it typed values. Outside the generic machinery no file under
    csrc/aten and csrc/cuda reads or writes a call's slots by number."""
    offenders = []
    for path in sorted(glob.glob(os.path.join(ATEN, "**", "*.[ch]"), recursive=True) +
                       glob.glob(os.path.join(CUDA_SRC, "*.[ch]"))):
        if path in GENERIC:
            continue
        for line, text in slot_reads(open(path).read()):
            offenders.append(f"{os.path.relpath(path, REPO)}:{line}: {text}")
    assert not offenders, offenders
