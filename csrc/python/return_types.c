/* return_types.c: torch.return_types.* named tuples ((values, indices), (U, S, Vh)...): the plain result tuple of an op
 * that ops_returns.def lists, named for Python (Note [Result tuples] in csrc/aten/dispatch.c). Types are made on first
 * use and kept for the process. */
#include "pyobjects.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCT_MAX_RETURN_TYPES 96
#define PCT_MAX_RETURN_FIELDS 4

typedef struct {
    char *name;                       /* e.g. "torch.return_types.sort", owned, never released */
    PyStructSequence_Field fields[PCT_MAX_RETURN_FIELDS + 1];
    PyStructSequence_Desc desc;
    PyTypeObject *type;               /* owned, never released */
} return_type_entry;

static return_type_entry entries[PCT_MAX_RETURN_TYPES];
static int nentries;

/* torch's repr: "torch.return_types.sort(\nvalues=tensor(...),\nindices=tensor(...))" */
static PyObject *named_repr(PyObject *self)
{
    const return_type_entry *e = NULL;
    for (int i = 0; i < nentries; i++)
        if (entries[i].type == Py_TYPE(self)) e = &entries[i];
    if (!e) return PyTuple_Type.tp_repr(self);
    PyObject *r = PyUnicode_FromFormat("%s(", e->name);
    for (int i = 0; r && i < e->desc.n_in_sequence; i++) {
        PyObject *item = PyUnicode_FromFormat("%s\n%s=%R", i ? "," : "", e->fields[i].name, PyTuple_GET_ITEM(self, i));
        PyObject *joined = item ? PyUnicode_Concat(r, item) : NULL;
        Py_XDECREF(item);
        Py_SETREF(r, joined);
    }
    if (r) {
        PyObject *close = PyUnicode_FromString(")");
        PyObject *joined = close ? PyUnicode_Concat(r, close) : NULL;
        Py_XDECREF(close);
        Py_SETREF(r, joined);
    }
    return r;
}

static PyTypeObject *lookup(const char *name, int n, const char *const *fields)
{
    char *owned_name;
    for (int i = 0; i < nentries; i++)
        if (strcmp(entries[i].name, name) == 0) return entries[i].type;
    if (nentries == PCT_MAX_RETURN_TYPES || n > PCT_MAX_RETURN_FIELDS) {
        PyErr_SetString(PyExc_RuntimeError, "pyctorch internal error: too many return types; please report a bug");
        return NULL;
    }
    if (!(owned_name = strdup(name))) {
        PyErr_NoMemory();
        return NULL;
    }
    return_type_entry *e = &entries[nentries];
    e->name = owned_name;
    for (int i = 0; i < n; i++) e->fields[i] = (PyStructSequence_Field){fields[i], NULL};
    e->fields[n] = (PyStructSequence_Field){NULL, NULL};
    e->desc = (PyStructSequence_Desc){e->name, NULL, e->fields, n};
    if (!(e->type = PyStructSequence_NewType(&e->desc))) {
        free(e->name);
        return NULL;
    }
    e->type->tp_repr = named_repr;
    PyType_Modified(e->type);
    nentries++;
    return e->type;
}

PyObject *pct_py_name_result(PyObject *tuple, const char *op_name, const pct_op_returns *returns, bool out)
{
    if (!PyTuple_CheckExact(tuple) || PyTuple_GET_SIZE(tuple) != returns->n) return tuple;
    char name[96];
    snprintf(name, sizeof name, "torch.return_types.%s%s", op_name, out ? "_out" : "");
    PyTypeObject *tp = lookup(name, returns->n, returns->fields);
    PyObject *r = tp ? PyStructSequence_New(tp) : NULL;
    if (r)
        for (int i = 0; i < returns->n; i++) PyStructSequence_SET_ITEM(r, i, Py_NewRef(PyTuple_GET_ITEM(tuple, i)));
    Py_DECREF(tuple);
    return r;
}
