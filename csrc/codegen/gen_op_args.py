"""Generates the typed argument structs of the operator table (build/generated/op_args.h).

Every op of csrc/aten/ops*.def has a schema in torch's syntax. For each op this writes a struct with one field
per parameter, typed as the parameter is (Note [Typed arguments] in csrc/aten/op.h), and an inline reader that fills
it from the parsed call, so a kernel reads `arg.dim` as an int64_t rather than `c->v[2].i`, and a change of
schema that a kernel does not follow fails to compile. setup.py runs this before compiling; the output is not
committed and is rewritten only when its text changes (so an unchanged table recompiles nothing).

Usage: python gen_op_args.py <csrc/aten directory> <output header>
"""
import os
import re
import subprocess
import sys
import tempfile

# How each kind of table line spells its id and schema; the preprocessor expands the schemas' macros
# (PCT_RNG_FACTORY_KW) and joins nothing, so adjacent string literals are joined here.
ENTRY_MACROS = """
#define PCT_OP(id, schema, variants, cpu) @@ENTRY id schema @@END
#define PCT_COMPOSITE(id, schema, variants, impl) @@ENTRY id schema @@END
#define PCT_COMPOSITE_PY(id, schema, variants, impl) @@ENTRY id schema @@END
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) @@ENTRY id schema @@END
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) @@ENTRY id #id "(Tensor input, *, Tensor? out=None)" @@END
#include "ops.def"
"""

SCALAR_TYPES = {"Tensor", "Scalar", "int", "float", "bool", "ScalarType", "Device", "str", "Generator", "PyObject",
                "Layout", "MemoryFormat"}


def table_entries(aten_dir):
    """(id, schema) of every op, in table order."""
    cc = os.environ.get("CC", "gcc").split()
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(ENTRY_MACROS)
        src = f.name
    try:
        out = subprocess.run(cc + ["-E", "-P", "-I", aten_dir, src], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(src)
    entries = []
    for body in re.findall(r"@@ENTRY(.*?)@@END", out, re.S):
        ident, rest = body.strip().split(None, 1)
        schema = "".join(s.encode().decode("unicode_escape") for s in re.findall(r'"((?:[^"\\]|\\.)*)"', rest))
        entries.append((ident, schema))
    return entries


def parameters(schema):
    """(type, optional, list_size or None, name) per parameter, as csrc/python/argparse.c reads the schema."""
    inner = schema[schema.index("(") + 1:schema.rindex(")")]
    params = []
    for tok in (t.strip() for t in inner.split(",")):
        if not tok or tok == "*":
            continue
        default = None
        if "=" in tok:  # defaults may hold commas (int[] dim=[-2, -1]): their pieces have no space-separated name
            tok, default = tok.split("=", 1)
        if " " not in tok:
            continue
        typ, name = tok.rsplit(None, 1)
        typ = typ.replace("|Scalar", "")
        optional = typ.endswith("?") or default == "None"  # `MemoryFormat memory_format=None` can be None too
        typ = typ.rstrip("?")
        list_size = None
        m = re.match(r"(\w+)\[(\d*)\]$", typ)
        if m:
            typ, list_size = m.group(1), int(m.group(2) or 0)
        if typ not in SCALAR_TYPES:
            raise SystemExit(f"gen_op_args: unknown type {typ!r} in schema {schema!r}")
        params.append((typ, optional, list_size, name))
    return params


def field(typ, optional, list_size, name, slot):
    """(C declaration, reader expression) of one parameter."""
    v = f"c->v[{slot}]"
    if list_size is not None:
        kind = {"int": ("pct_int_list", "list"), "float": ("pct_float_list", "flist"),
                "Tensor": ("pct_tensor_list", "items")}[typ]
        if typ == "Tensor":
            return f"pct_tensor_list {name}", f"(pct_tensor_list){{{v}.none ? NULL : {v}.items, {v}.n, {v}.none}}"
        return f"{kind[0]} {name}", f"({kind[0]}){{{v}.{kind[1]}, {v}.n, {v}.none}}"
    if typ == "Tensor":
        return f"pct_tensor *{name}", f"({v}.none ? NULL : {v}.t)"
    if typ == "Scalar":
        if optional:
            return f"const pct_scalar *{name}", f"({v}.none ? NULL : &{v}.s)"
        return f"pct_scalar {name}", f"{v}.s"
    plain = {"int": ("int64_t", "i", "pct_int_opt"), "float": ("double", "d", "pct_float_opt"),
             "bool": ("bool", "b", "pct_bool_opt")}
    if typ in plain:
        ctype, member, opt = plain[typ]
        if optional:
            return f"{opt} {name}", f"({opt}){{{v}.none, {v}.none ? 0 : {v}.{member}}}"
        return f"{ctype} {name}", f"{v}.{member}"
    if typ == "ScalarType":
        return f"int {name}", f"({v}.none ? PCT_NO_DTYPE : {v}.dtype)"
    if typ == "Device":
        return f"pct_device_arg {name}", f"(pct_device_arg){{{v}.none, {v}.dev.type, {v}.dev.index}}"
    if typ == "str":
        return f"const char *{name}", f"({v}.none ? NULL : {v}.str)"
    if typ == "MemoryFormat":
        return f"int {name}", f"({v}.none ? PCT_MF_NONE : {v}.code)"
    return f"pct_object *{name}", f"({v}.none ? NULL : {v}.obj)"  # Generator, PyObject, Layout


def header(entries):
    lines = ["/* op_args.h: generated by csrc/codegen/gen_op_args.py from the operator table; do not edit. */",
             "#ifndef PCT_OP_ARGS_H", "#define PCT_OP_ARGS_H", ""]
    for ident, schema in entries:
        params = parameters(schema)
        decls, reads = [], []
        for slot, (typ, optional, list_size, name) in enumerate(params):
            d, r = field(typ, optional, list_size, name, slot)
            decls.append(f"    {d};")
            reads.append(f"        {r},")
        lines.append(f"/* {schema} */")
        lines.append(f"typedef struct pct_args_{ident} {{")
        lines += decls or ["    char unused_;"]
        lines.append(f"}} pct_args_{ident};")
        lines.append(f"static inline pct_args_{ident} pct_args_read_{ident}(const pct_call *c)")
        lines.append("{")
        if params:
            lines.append(f"    return (pct_args_{ident}){{")
            lines += reads
            lines.append("    };")
        else:
            lines.append(f"    (void)c;\n    return (pct_args_{ident}){{0}};")
        lines.append("}")
        lines.append("")
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def main():
    aten_dir, output = sys.argv[1], sys.argv[2]
    text = header(table_entries(aten_dir))
    if os.path.exists(output):
        with open(output) as f:
            if f.read() == text:
                return
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with open(output + ".tmp", "w") as f:
        f.write(text)
    os.replace(output + ".tmp", output)


if __name__ == "__main__":
    main()
