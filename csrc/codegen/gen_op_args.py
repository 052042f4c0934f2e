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
#define PCT_COMPOSITE_PY(id, schema, variants, impl)
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) @@ENTRY id schema @@BINARY @@END
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) @@ENTRY id #id "(Tensor input, *, Tensor? out=None)" @@END
#include "ops.def"
"""

SCALAR_TYPES = {"Tensor", "Scalar", "int", "float", "bool", "ScalarType", "Device", "str", "Generator", "PyObject",
                "Layout", "MemoryFormat"}


def table_entries(aten_dir):
    """(id, schema) of every op, in table order."""
    return [(ident, schema) for ident, schema, _ in table_entries_kinds(aten_dir)]


def table_entries_kinds(aten_dir):
    """(id, schema, is_binary) of every op, in table order: is_binary for the PCT_BINARY entries."""
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
        entries.append((ident, schema, "@@BINARY" in rest))
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
    """(C declaration, reader expression) of one parameter: the readers are op.h's pct_value_* functions."""
    v = f"&c->v[{slot}]"
    if list_size is not None:
        kind = {"int": "int_list", "float": "float_list", "Tensor": "tensor_list"}[typ]
        return f"pct_{kind} {name}", f"pct_value_{kind}({v})"
    if typ == "Tensor":
        return f"pct_tensor *{name}", f"pct_value_tensor({v})"
    if typ == "Scalar":
        if optional:
            return f"const pct_scalar *{name}", f"pct_value_scalar_opt({v})"
        return f"pct_scalar {name}", f"c->v[{slot}].s"
    plain = {"int": ("int64_t", "i"), "float": ("double", "d"), "bool": ("bool", "b")}
    if typ in plain:
        ctype, member = plain[typ]
        if optional:
            return f"pct_{typ}_opt {name}", f"pct_value_{typ}_opt({v})"
        return f"{ctype} {name}", f"c->v[{slot}].{member}"
    if typ == "ScalarType":
        return f"int {name}", f"pct_value_dtype({v})"
    if typ == "Device":
        return f"pct_device_arg {name}", f"pct_value_device({v})"
    if typ == "str":
        return f"const char *{name}", f"pct_value_str({v})"
    if typ == "MemoryFormat":
        return f"int {name}", f"pct_value_memory_format({v})"
    if typ == "PyObject":  # any object, None included: the None object when None is given, NULL when not given
        return f"pct_object *{name}", f"c->v[{slot}].obj"
    return f"pct_object *{name}", f"pct_value_object({v})"  # Generator, Layout


def binary_reader(ident, params):
    """The reader of a PCT_BINARY op's operands and alpha as one pct_binary_args (op.h), whatever its schema names
    them, so that one implementation serves every binary op through a typed entry."""
    if len(params) < 2 or any(p[0] != "Tensor" or p[2] is not None for p in params[:2]):
        raise SystemExit(f"gen_op_args: binary op {ident} does not start with two tensor operands")
    alpha = next((p for p in params if p[3] == "alpha"), None)
    if alpha and (alpha[0] != "Scalar" or alpha[1]):
        raise SystemExit(f"gen_op_args: binary op {ident}: alpha is not a Scalar")
    tail = "true, arg.alpha" if alpha else "false, {0}"
    return [f"static inline pct_binary_args pct_binary_args_read_{ident}(const pct_call *c)", "{",
            f"    const pct_args_{ident} arg = pct_args_read_{ident}(c);",
            f"    return (pct_binary_args){{arg.{params[0][3]}, arg.{params[1][3]}, {tail}}};", "}", ""]


def header(entries):
    lines = ["/* op_args.h: generated by csrc/codegen/gen_op_args.py from the operator table; do not edit. */",
             "#ifndef PCT_OP_ARGS_H", "#define PCT_OP_ARGS_H", ""]
    for ident, schema, is_binary in entries:
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
        if is_binary:
            lines += binary_reader(ident, params)
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def main():
    aten_dir, output = sys.argv[1], sys.argv[2]
    text = header(table_entries_kinds(aten_dir))
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
