/* return_types.c: torch.return_types.* (values, indices)-style named pairs, shared by all
 * kernels that return two tensors. Types are made on first use and kept for the process. */
#include "pyobjects.h"
#include <string.h>

#define PCT_MAX_RETURN_TYPES 48

typedef struct {
    const char *name;                 /* a static string, e.g. "torch.return_types.sort" */
    PyStructSequence_Field fields[3];
    PyStructSequence_Desc desc;
    PyTypeObject *type;               /* owned, never released */
} return_type_entry;

static return_type_entry entries[PCT_MAX_RETURN_TYPES];
static int nentries;

static PyTypeObject *lookup(const char *name, const char *f0, const char *f1)
{
    for (int i = 0; i < nentries; i++)
        if (strcmp(entries[i].name, name) == 0) return entries[i].type;
    if (nentries == PCT_MAX_RETURN_TYPES) {
        PyErr_SetString(PyExc_RuntimeError, "pyctorch internal error: too many return types; please report a bug");
        return NULL;
    }
    return_type_entry *e = &entries[nentries];
    e->name = name;
    e->fields[0] = (PyStructSequence_Field){f0, NULL};
    e->fields[1] = (PyStructSequence_Field){f1, NULL};
    e->fields[2] = (PyStructSequence_Field){NULL, NULL};
    e->desc = (PyStructSequence_Desc){name, NULL, e->fields, 2};
    if (!(e->type = PyStructSequence_NewType(&e->desc))) return NULL;
    nentries++;
    return e->type;
}

PyObject *pct_return_pair(const char *name, const char *f0, const char *f1, pct_tensor *a, pct_tensor *b)
{
    PyObject *r = NULL;
    PyTypeObject *tp;
    if (!a || !b || !(tp = lookup(name, f0, f1)) || !(r = PyStructSequence_New(tp))) goto fail;
    PyStructSequence_SET_ITEM(r, 0, (PyObject *)a);
    PyStructSequence_SET_ITEM(r, 1, (PyObject *)b);
    return r;
fail:
    Py_XDECREF(a);
    Py_XDECREF(b);
    return NULL;
}
