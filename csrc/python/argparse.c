/* argparse.c: schema parsing (at import) and Python argument parsing (per call).
 *
 * Note [Argument parsing]: a schema is parsed once into pct_param records with
 * interned names. A call binds positional arguments in order, then keywords by
 * interned-pointer (falling back to string) comparison, then defaults. An `int[]`
 * parameter first in the list (after self) also accepts its values as varargs,
 * so x.view(2, 3) and torch.zeros(2, 3) work as in torch. Python numbers given
 * for a Tensor parameter become 0-d "wrapped number" tensors owned by the call,
 * which weigh less in type promotion, as in torch. */
#include "pyobjects.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; int type; } type_names[] = {
    {"Tensor", PCT_ARG_TENSOR}, {"Scalar", PCT_ARG_SCALAR}, {"int", PCT_ARG_INT},
    {"float", PCT_ARG_FLOAT}, {"bool", PCT_ARG_BOOL}, {"ScalarType", PCT_ARG_DTYPE},
    {"Device", PCT_ARG_DEVICE}, {"str", PCT_ARG_STR}, {"Generator", PCT_ARG_GENERATOR},
    {"PyObject", PCT_ARG_OBJECT}, {"Layout", PCT_ARG_LAYOUT}, {"MemoryFormat", PCT_ARG_MEMFORMAT},
};

static int parse_default(pct_param *p, const char *text)
{
    pct_value *v = &p->def;
    memset(v, 0, sizeof *v);
    if (strcmp(text, "None") == 0) { v->none = 1; return 0; }
    switch (p->type) {
    case PCT_ARG_INT: v->i = strtoll(text, NULL, 10); return 0;
    case PCT_ARG_FLOAT: v->d = strtod(text, NULL); return 0;
    case PCT_ARG_BOOL: v->b = strcmp(text, "True") == 0; return 0;
    case PCT_ARG_SCALAR:
        if (strchr(text, '.') || strchr(text, 'e')) { v->s.kind = PCT_SCALAR_FLOAT; v->s.d = strtod(text, NULL); }
        else { v->s.kind = PCT_SCALAR_INT; v->s.i = strtoll(text, NULL, 10); v->s.d = (double)v->s.i; }
        return 0;
    case PCT_ARG_INTLIST: {
        /* "[]" or "[1, 2]" or a single int */
        const char *s = text;
        v->n = 0;
        if (*s == '[') s++;
        while (*s && *s != ']') {
            char *end;
            long long x = strtoll(s, &end, 10);
            if (end == s) break;
            v->list[v->n++] = x;
            s = end;
            while (*s == ',' || *s == ' ') s++;
        }
        return 0;
    }
    case PCT_ARG_STR: {
        /* 'text': an interned str owned by the signature (signatures live as long as the module) */
        size_t n = strlen(text);
        if (n < 2 || (text[0] != '\'' && text[0] != '"') || text[n - 1] != text[0]) {
            PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: bad str default %s for %s", text, p->name);
            return -1;
        }
        v->obj = PyUnicode_FromStringAndSize(text + 1, (Py_ssize_t)n - 2);
        if (!v->obj) return -1;
        PyUnicode_InternInPlace(&v->obj);
        v->str = PyUnicode_AsUTF8(v->obj);
        return v->str ? 0 : -1;
    }
    default:
        PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: unsupported default '%s' for %s", text, p->name);
        return -1;
    }
}

int pct_signature_parse(const char *schema, pct_signature *sig)
{
    memset(sig, 0, sizeof *sig);
    sig->out_index = -1;
    const char *lp = strchr(schema, '(');
    const char *rp = strrchr(schema, ')');
    if (!lp || !rp || (size_t)(lp - schema) >= sizeof sig->name) goto bad;
    memcpy(sig->name, schema, (size_t)(lp - schema));
    size_t tl = (size_t)(rp - lp + 1);
    if (tl >= sizeof sig->text) tl = sizeof sig->text - 1;
    memcpy(sig->text, lp, tl);
    bool kwonly = false;
    const char *s = lp + 1;
    while (s < rp) {
        while (*s == ' ' || *s == ',') s++;
        if (s >= rp) break;
        const char *e = s;
        int depth = 0;
        while (e < rp && (depth > 0 || *e != ',')) { if (*e == '[') depth++; if (*e == ']') depth--; e++; }
        char tok[128];
        size_t n = (size_t)(e - s);
        if (n >= sizeof tok) goto bad;
        memcpy(tok, s, n);
        tok[n] = 0;
        s = e;
        if (strcmp(tok, "*") == 0) { kwonly = true; continue; }
        if (sig->nparams >= PCT_MAX_PARAMS) goto bad;
        pct_param *p = &sig->params[sig->nparams];
        char *sp = strchr(tok, ' ');
        if (!sp) goto bad;
        *sp = 0;
        char *type = tok, *name = sp + 1, *eq = strchr(name, '=');
        if (eq) *eq = 0;
        char *bar = strstr(type, "|Scalar");
        if (bar) { p->allow_number = 1; *bar = 0; }
        size_t tlen = strlen(type);
        if (tlen && type[tlen - 1] == '?') { p->optional = 1; type[--tlen] = 0; }
        char *br = strchr(type, '[');
        bool is_list = false;
        if (br) { is_list = true; p->list_size = (int8_t)atoi(br + 1); *br = 0; }
        p->type = 255;
        for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
            if (strcmp(type, type_names[i].name) == 0) p->type = (uint8_t)type_names[i].type;
        if (p->type == 255) goto bad;
        if (is_list) {
            if (p->type == PCT_ARG_INT) p->type = PCT_ARG_INTLIST;
            else if (p->type == PCT_ARG_TENSOR) p->type = PCT_ARG_TENSORLIST;
            else if (p->type == PCT_ARG_FLOAT) p->type = PCT_ARG_FLOATLIST;
            else goto bad;
        }
        p->kwonly = kwonly;
        p->slot = (int8_t)sig->nparams;
        p->name = strdup(name); /* lives as long as the module: never freed */
        if (!p->name) { PyErr_NoMemory(); return -1; }
        p->pyname = PyUnicode_InternFromString(name);
        if (!p->pyname) return -1;
        if (eq) {
            p->has_default = 1;
            if (parse_default(p, eq + 1) < 0) return -1;
        } else if (p->optional && kwonly) {
            p->has_default = 1; /* an optional keyword without default defaults to None */
            p->def.none = 1;
        }
        if (strcmp(name, "out") == 0) sig->out_index = sig->nparams;
        if (!kwonly) sig->npositional++;
        sig->nparams++;
    }
    return 0;
bad:
    PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: cannot parse schema '%s'", schema);
    return -1;
}

/* Note [Overload signatures]: torch declares some ops as several overloads (eye(n) and eye(n, m); var(dim,
 * unbiased, keepdim) and var(dim, *, correction, keepdim)) where pyctorch's table has one entry whose schema
 * takes the union. Such an entry's Python callable parses against its overloads instead (ops_overloads.def), so
 * it refuses what torch's overloads refuse (eye(3, None), var(unbiased=False, keepdim=True)); the values land in
 * the entry's own slots, so the kernel, autograd and C callers see the union schema. An overload's `Scalar x` for the
 * entry's `Tensor|Scalar x` stands for torch's Number overloads: it takes a number or a 0-d tensor only. */
int pct_overload_parse(const char *schema, const pct_signature *canon, pct_signature *sig)
{
    if (pct_signature_parse(schema, sig) < 0) return -1;
    sig->canon = canon;
    uint32_t seen = 0;
    for (int i = 0; i < sig->nparams; i++) {
        pct_param *p = &sig->params[i];
        /* torch's Number overloads name their first value `self` (where(condition, self, other)): that keyword
         * fills the entry's `input` */
        const char *want = strcmp(p->name, "self") == 0 ? "input" : p->name;
        int k = 0;
        while (k < canon->nparams && strcmp(canon->params[k].name, want) != 0) k++;
        if (k == canon->nparams) goto bad;
        const pct_param *q = &canon->params[k];
        if (p->type == PCT_ARG_INT && q->type == PCT_ARG_INTLIST && q->list_size > 0) {
            p->type = PCT_ARG_INTLIST; /* `int x` where the op has `int[N] x`: one int, stored as its list */
            p->list_size = q->list_size;
            p->int_only = 1;
            if (p->has_default && !p->def.none) goto bad; /* only None: an int default would be no list */
        } else if (p->type == PCT_ARG_SCALAR && q->type == PCT_ARG_TENSOR && q->allow_number && !p->has_default) {
            p->type = PCT_ARG_TENSOR; /* torch's Number overload (rsub(input, other, alpha)): a number or 0-d tensor */
            p->allow_number = 1;
            p->scalar_only = 1;
        } else if (p->type != q->type) {
            goto bad;
        }
        p->slot = (int8_t)k;
        seen |= 1u << k;
    }
    for (int k = 0; k < canon->nparams; k++) {
        if (seen & (1u << k)) continue;
        if (!canon->params[k].has_default) goto bad;
        sig->missing |= (uint16_t)(1u << k);
    }
    if (sig->out_index >= 0 && sig->params[sig->out_index].slot != canon->out_index) goto bad;
    return 0;
bad:
    PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: overload '%s' does not fit the schema '%s%s'", schema,
                 canon->name, canon->text);
    return -1;
}

/* ---- values ---- */

static const char *type_label(int t)
{
    switch (t) {
    case PCT_ARG_TENSOR: return "Tensor";
    case PCT_ARG_SCALAR: return "Number";
    case PCT_ARG_INT: return "int";
    case PCT_ARG_INTLIST: return "tuple of ints";
    case PCT_ARG_FLOAT: return "float";
    case PCT_ARG_BOOL: return "bool";
    case PCT_ARG_DTYPE: return "torch.dtype";
    case PCT_ARG_DEVICE: return "torch.device";
    case PCT_ARG_TENSORLIST: return "tuple of Tensors";
    case PCT_ARG_STR: return "str";
    case PCT_ARG_GENERATOR: return "torch.Generator";
    case PCT_ARG_FLOATLIST: return "tuple of floats";
    case PCT_ARG_LAYOUT: return "torch.layout";
    case PCT_ARG_MEMFORMAT: return "torch.memory_format";
    default: return "object";
    }
}

int pct_scalar_from_object(PyObject *o, pct_scalar *s)
{
    s->from_tensor = 0;
    s->im = 0;
    if (PyComplex_Check(o) || pct_dtype_is_complex(pct_numpy_scalar_dtype(o))) {
        Py_complex z = PyComplex_AsCComplex(o);
        if (z.real == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
        s->kind = PCT_SCALAR_COMPLEX; s->d = z.real; s->im = z.imag; s->i = 0;
        return 0;
    }
    if (PyBool_Check(o)) { s->kind = PCT_SCALAR_BOOL; s->i = o == Py_True; s->d = (double)s->i; return 0; }
    if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) {
            /* torch keeps values in [2^63, 2^64) as unsigned; beyond that it overflows */
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (PyErr_Occurred()) { PyErr_Clear(); return -1; }
            s->kind = PCT_SCALAR_INT; s->i = (int64_t)u; s->d = (double)u;
            return 0;
        }
        s->kind = PCT_SCALAR_INT; s->i = v; s->d = (double)v;
        return 0;
    }
    if (PyFloat_Check(o)) { s->kind = PCT_SCALAR_FLOAT; s->d = PyFloat_AS_DOUBLE(o); s->i = 0; return 0; }
    if (PCT_TENSOR_CHECK(o)) {
        pct_tensor *t = (pct_tensor *)o;
        if (t->numel != 1 || t->device_type != PCT_CPU) return -1;
        const char *p = pct_tensor_data(t);
        s->from_tensor = 1;
        if (pct_dtype_is_complex(t->dtype)) { s->kind = PCT_SCALAR_COMPLEX; pct_load_as_complex(p, t->dtype, &s->d, &s->im); s->i = 0; }
        else if (pct_dtype_is_floating(t->dtype)) { s->kind = PCT_SCALAR_FLOAT; s->d = pct_load_as_double(p, t->dtype); s->i = 0; }
        else { s->kind = t->dtype == PCT_BOOL ? PCT_SCALAR_BOOL : PCT_SCALAR_INT; s->i = pct_load_as_int64(p, t->dtype); s->d = (double)s->i; }
        return 0;
    }
    /* numpy scalars and other number-likes (numpy.bool_ has no __index__ but is a bool) */
    const char *tn = Py_TYPE(o)->tp_name;
    if (strcmp(tn, "numpy.bool") == 0 || strcmp(tn, "numpy.bool_") == 0) {
        int b = PyObject_IsTrue(o);
        if (b < 0) { PyErr_Clear(); return -1; }
        s->kind = PCT_SCALAR_BOOL; s->i = b; s->d = b;
        return 0;
    }
    PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
    if (nb && nb->nb_index && !PyType_IsSubtype(Py_TYPE(o), &PyUnicode_Type)) {
        PyObject *i = PyNumber_Index(o);
        if (!i) { PyErr_Clear(); return -1; }
        int r = pct_scalar_from_object(i, s);
        Py_DECREF(i);
        return r;
    }
    if (nb && nb->nb_float) {
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
        s->kind = PCT_SCALAR_FLOAT; s->d = d; s->i = 0;
        return 0;
    }
    return -1;
}

pct_tensor *pct_wrap_scalar(const pct_scalar *s)
{
    pct_tensor *t = pct_scalar_tensor_of(pct_scalar_dtype(s), s);
    if (t) t->flags |= PCT_FLAG_WRAPPED_NUMBER | (pct_scalar_is_uint64(s) ? PCT_FLAG_UINT64_NUMBER : 0);
    return t;
}

static int as_int_or_bool(PyObject *o, int64_t *out)
{
    if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return -1; }
        *out = v;
        return 0;
    }
    if (PyFloat_Check(o)) return -1;
    if (PCT_TENSOR_CHECK(o)) {
        pct_tensor *t = (pct_tensor *)o;
        if (t->numel != 1 || pct_dtype_is_floating(t->dtype) || t->ndim != 0 || t->device_type != PCT_CPU) return -1;
        *out = pct_load_as_int64(pct_tensor_data(t), t->dtype);
        return 0;
    }
    PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
    if (nb && nb->nb_index) {
        PyObject *i = PyNumber_Index(o);
        if (!i) { PyErr_Clear(); return -1; }
        int r = as_int_or_bool(i, out);
        Py_DECREF(i);
        return r;
    }
    return -1;
}

/* torch refuses True/False for an int (but the elements of int lists take them: output_mask lists of bools) */
static int as_int(PyObject *o, int64_t *out) { return PyBool_Check(o) ? -1 : as_int_or_bool(o, out); }

/* Sets v to p's default (copied without the large list buffer unless it is an int list). */
static void take_default(const pct_param *p, pct_value *v)
{
    v->none = p->def.none;
    v->s = p->def.s; /* the largest union member: copies whichever is set */
    if (p->type == PCT_ARG_INTLIST) {
        v->n = p->def.n;
        memcpy(v->list, p->def.list, sizeof(int64_t) * (size_t)p->def.n);
    }
}

/* An instance of pyctorch's torch.memory_format / torch.layout classes (pyctorch/_layouts.py). */
static bool is_instance_named(PyObject *o, const char *type_name) { return strcmp(_PyType_Name(Py_TYPE(o)), type_name) == 0; }

/* pyctorch's memory_format singletons carry their name in _name. */
static int memory_format_code(PyObject *o)
{
    PyObject *name = PyObject_GetAttrString(o, "_name");
    if (!name) { PyErr_Clear(); return PCT_MF_UNKNOWN; }
    int code = PCT_MF_UNKNOWN;
    if (PyUnicode_Check(name)) {
        if (PyUnicode_CompareWithASCIIString(name, "preserve_format") == 0) code = PCT_MF_PRESERVE;
        else if (PyUnicode_CompareWithASCIIString(name, "contiguous_format") == 0) code = PCT_MF_CONTIGUOUS;
        else if (PyUnicode_CompareWithASCIIString(name, "channels_last") == 0) code = PCT_MF_CHANNELS_LAST;
        else if (PyUnicode_CompareWithASCIIString(name, "channels_last_3d") == 0) code = PCT_MF_CHANNELS_LAST_3D;
    }
    Py_DECREF(name);
    return code;
}

/* Converts one Python object to a value of param p's type. 0, or -1 (no exception), or PCT_PARSE_FAILED (raised). */
static int convert(const pct_param *p, PyObject *o, pct_value *v, pct_call *c)
{
    v->none = 0;
    if (PCT_TENSOR_CHECK(o) && pct_check_storage_holds((const pct_tensor *)o) < 0) return PCT_PARSE_FAILED;
    if (o == Py_None) {
        if (!p->optional && p->type != PCT_ARG_OBJECT && p->type != PCT_ARG_LAYOUT) return -1;
        /* None for `T? x=<value>` (requires_grad, pin_memory, ...) means the default, as in torch */
        if (p->optional && p->has_default && !p->def.none) take_default(p, v);
        else v->none = 1;
        if (p->type == PCT_ARG_OBJECT) v->obj = Py_None; /* an explicit None (a default leaves obj NULL) */
        return 0;
    }
    switch (p->type) {
    case PCT_ARG_TENSOR: {
        if (PCT_TENSOR_CHECK(o)) {
            /* torch's Scalar takes a 0-d tensor only when it does not require grad */
            if (p->scalar_only && (((pct_tensor *)o)->ndim != 0 || pct_tensor_requires_grad((pct_tensor *)o))) return -1;
            v->t = (pct_tensor *)o;
            return 0;
        }
        pct_scalar s;
        if (!p->allow_number || PyUnicode_Check(o) || pct_scalar_from_object(o, &s) < 0) return -1;
        if (c->nowned >= PCT_MAX_OWNED) return -1;
        pct_tensor *w = pct_wrap_scalar(&s);
        if (!w) { PyErr_Clear(); return -1; }
        w->flags |= PCT_FLAG_CALL_NUMBER;
        c->owned[c->nowned++] = (PyObject *)w;
        v->t = w;
        return 0;
    }
    case PCT_ARG_SCALAR:
        if (PyUnicode_Check(o)) return -1;
        return pct_scalar_from_object(o, &v->s);
    case PCT_ARG_INT:
        return as_int(o, &v->i);
    case PCT_ARG_FLOAT: {
        if (PyUnicode_Check(o)) return -1;
        if (PCT_TENSOR_CHECK(o)) {
            /* torch reads a float from a 0-d tensor that does not require grad (torchvision's
               uniform_(log_ratio[0], log_ratio[1])); a complex one only without an imaginary part */
            pct_tensor *t = (pct_tensor *)o;
            if (t->ndim != 0 || pct_tensor_requires_grad(t) || t->device_type != PCT_CPU) return -1;
            double re = 0, im = 0;
            if (pct_dtype_is_complex(t->dtype)) pct_load_as_complex(pct_tensor_data(t), t->dtype, &re, &im);
            else re = pct_load_as_double(pct_tensor_data(t), t->dtype);
            if (im != 0) return -1;
            v->d = re;
            return 0;
        }
        PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
        if (!nb || (!nb->nb_float && !nb->nb_index)) return -1;
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
        v->d = d;
        return 0;
    }
    case PCT_ARG_BOOL:
        if (!PyBool_Check(o)) return -1;
        v->b = o == Py_True;
        return 0;
    case PCT_ARG_INTLIST: {
        int64_t x;
        if (p->list_size > 0 && as_int(o, &x) == 0) {
            v->n = p->list_size;
            for (int i = 0; i < p->list_size; i++) v->list[i] = x;
            return 0;
        }
        if (p->int_only || (!PyTuple_Check(o) && !PyList_Check(o))) return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        if (n > PCT_MAX_DIMS) return -1;
        PyObject **items = PySequence_Fast_ITEMS(o);
        for (Py_ssize_t i = 0; i < n; i++)
            if (as_int_or_bool(items[i], &v->list[i]) < 0) return -1;
        v->n = (int32_t)n;
        return 0;
    }
    case PCT_ARG_FLOATLIST: {
        if (!PyTuple_Check(o) && !PyList_Check(o)) {
            double d = PyFloat_AsDouble(o);
            if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
            v->n = 1; v->flist[0] = d;
            return 0;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        if (n > 4) return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            double d = PyFloat_AsDouble(PySequence_Fast_ITEMS(o)[i]);
            if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
            v->flist[i] = d;
        }
        v->n = (int32_t)n;
        return 0;
    }
    case PCT_ARG_DTYPE: {
        int d = pct_dtype_from_object(o);
        if (d < 0) { PyErr_Clear(); return -1; }
        v->dtype = d;
        return 0;
    }
    case PCT_ARG_DEVICE:
        if (PyLong_Check(o) && !PyBool_Check(o)) { /* a negative ordinal matches; the kernel refuses it */
            int overflow = 0;
            long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (!overflow && x < 0) { v->dev.type = PCT_CUDA; v->dev.index = PCT_DEVICE_NEGATIVE_INDEX; return 0; }
            PyErr_Clear();
        }
        if (pct_device_from_object(o, &v->dev.type, &v->dev.index) < 0) {
            /* a malformed device string is torch's RuntimeError at once, not a non-matching overload */
            if (PyUnicode_Check(o)) return PCT_PARSE_FAILED;
            PyErr_Clear();
            return -1;
        }
        return 0;
    case PCT_ARG_TENSORLIST: {
        if (!PyTuple_Check(o) && !PyList_Check(o)) return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        if (n > INT32_MAX) return -1;
        for (Py_ssize_t i = 0; i < n; i++)
            if (!PCT_TENSOR_CHECK(PySequence_Fast_ITEMS(o)[i])) return -1;
        for (Py_ssize_t i = 0; i < n; i++) /* Note [Shrunk storages] */
            if (pct_check_storage_holds((const pct_tensor *)PySequence_Fast_ITEMS(o)[i]) < 0) return PCT_PARSE_FAILED;
        pct_value_set_tensorlist(v, o);
        return 0;
    }
    case PCT_ARG_STR:
        if (!PyUnicode_Check(o)) return -1;
        v->obj = o;
        if (!(v->str = PyUnicode_AsUTF8(o))) return PCT_PARSE_FAILED; /* a str with lone surrogates */
        return 0;
    case PCT_ARG_MEMFORMAT:
        if (!is_instance_named(o, "memory_format")) return -1;
        v->obj = o;
        v->code = memory_format_code(o);
        return 0;
    case PCT_ARG_LAYOUT:
        if (!is_instance_named(o, "layout")) return -1;
        v->obj = o;
        return 0;
    default:
        v->obj = o;
        return 0;
    }
}

void pct_call_release(pct_call *c)
{
    for (int i = 0; i < c->nowned; i++) {
        /* a number autograd saved outlives the call as a plain wrapped number */
        if (PCT_TENSOR_CHECK(c->owned[i])) ((pct_tensor *)c->owned[i])->flags &= (uint8_t)~PCT_FLAG_CALL_NUMBER;
        Py_CLEAR(c->owned[i]);
    }
    c->nowned = 0;
}

static PyObject *type_error_for(const pct_signature *sig, const pct_param *p, int pos, PyObject *o)
{
    if (pos >= 0)
        return PyUnicode_FromFormat("%s(): argument '%s' (position %d) must be %s, not %s", sig->name, p->name, pos + 1,
                                    type_label(p->type), o == Py_None ? "NoneType" : Py_TYPE(o)->tp_name);
    return PyUnicode_FromFormat("%s(): argument '%s' must be %s, not %s", sig->name, p->name, type_label(p->type),
                                o == Py_None ? "NoneType" : Py_TYPE(o)->tp_name);
}

int pct_parse_args(const pct_signature *sig, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, pct_call *c, PyObject **err)
{
    bool set[PCT_MAX_PARAMS] = {0};
    int np = sig->nparams;
    int pi = 0;
    if (err) *err = NULL;
    if (self) {
        const int rc = np == 0 ? -1 : convert(&sig->params[0], self, &c->v[sig->params[0].slot], c);
        if (rc == PCT_PARSE_FAILED) return rc;
        if (rc < 0) {
            if (err) *err = PyUnicode_FromFormat("%s(): self must be a Tensor", sig->name);
            return -1;
        }
        set[0] = true;
        pi = 1;
    }
    for (Py_ssize_t ai = 0; ai < nargs; ai++, pi++) {
        if (pi >= sig->npositional) { /* a method's counts leave self out, as torch's */
            int takes = sig->npositional - (self ? 1 : 0);
            if (err) *err = PyUnicode_FromFormat("%s() takes %d positional argument%s but %zd %s given", sig->name, takes,
                                        takes == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
            return -1;
        }
        const pct_param *p = &sig->params[pi];
        PyObject *o = args[ai];
        /* varargs form of a leading int[]: view(2, 3), zeros(2, 3) */
        int64_t first_int;
        /* torch allows this only when an int[] without a size (x.squeeze(0, 2), not x.std(0, 1)) is the one
         * positional parameter */
        if (p->type == PCT_ARG_INTLIST && p->list_size == 0 && (pi == 0 || (pi == 1 && self)) &&
            sig->npositional == pi + 1 &&
            !PyTuple_Check(o) && !PyList_Check(o) && as_int(o, &first_int) == 0) {
            pct_value *v = &c->v[p->slot];
            v->none = 0;
            v->n = 0;
            for (; ai < nargs; ai++) {
                if (v->n >= PCT_MAX_DIMS || as_int(args[ai], &v->list[v->n]) < 0) {
                    if (err) *err = type_error_for(sig, p, (int)ai, args[ai]);
                    return -1;
                }
                v->n++;
            }
            set[pi] = true;
            pi++;
            break;
        }
        int rc = convert(p, o, &c->v[p->slot], c);
        if (rc < 0) {
            if (rc == PCT_PARSE_FAILED) return rc;
            if (err) *err = type_error_for(sig, p, (int)ai, o); /* positions count from 1 after self, as torch's */
            return -1;
        }
        set[pi] = true;
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        PyObject *o = args[nargs + k];
        int found = -1;
        for (int i = 0; i < np; i++)
            if (sig->params[i].pyname == key) { found = i; break; }
        if (found < 0) {
            for (int i = 0; i < np; i++)
                if (PyUnicode_Compare(sig->params[i].pyname, key) == 0) { found = i; break; }
            /* torch names the first argument `input` for functions, `self` for methods */
            if (found < 0 && np > 0 && PyUnicode_CompareWithASCIIString(key, "self") == 0 &&
                sig->params[0].type == PCT_ARG_TENSOR)
                found = 0;
        }
        if (found < 0) {
            if (err) *err = PyUnicode_FromFormat("%s() got an unexpected keyword argument '%U'", sig->name, key);
            return -1;
        }
        if (set[found]) {
            if (err) *err = PyUnicode_FromFormat("%s() got multiple values for argument '%s'", sig->name, sig->params[found].name);
            return -1;
        }
        int rc = convert(&sig->params[found], o, &c->v[sig->params[found].slot], c);
        if (rc < 0) {
            if (rc == PCT_PARSE_FAILED) return rc;
            if (err) *err = type_error_for(sig, &sig->params[found], -1, o);
            return -1;
        }
        set[found] = true;
    }
    for (int i = 0; i < np; i++) {
        if (set[i]) continue;
        const pct_param *p = &sig->params[i];
        if (!p->has_default) {
            if (err) *err = PyUnicode_FromFormat("%s() missing required argument '%s' (pos %d)", sig->name, p->name, i + 1);
            return -1;
        }
        take_default(p, &c->v[p->slot]);
    }
    if (__builtin_expect(sig->missing != 0, 0)) /* an overload: the op's parameters it lacks take their defaults */
        for (int k = 0; k < sig->canon->nparams; k++)
            if (sig->missing & (1u << k)) take_default(&sig->canon->params[k], &c->v[k]);
    if (sig->out_index >= 0 && sig->params[sig->out_index].type == PCT_ARG_TENSOR) {
        const pct_value *o = &c->v[sig->params[sig->out_index].slot];
        c->out = o->none ? NULL : o->t;
    }
    return 0;
}

int pct_ops_init(void)
{
    for (int i = 0; i < PCT_NUM_OPS; i++)
        if (pct_signature_parse(pct_ops[i].schema, &pct_ops[i].sig) < 0) return -1;
    return 0;
}
