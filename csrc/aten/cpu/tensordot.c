/* tensordot.c: contractions written as one matrix product of reshaped operands:
 * tensordot (ATen's tensordot, and torch.functional.tensordot's forms of `dims`), inner
 * (a tensordot over the last dims) and kron (a broadcast multiply of interleaved views).
 */
#include "blas_internal.h"

/* ATen's tensordot(input1, input2, dims1, dims2) (and tensordot_out) */
static PyObject *tensordot_impl(pct_tensor *a, pct_tensor *b, const int64_t *dims1, int n1, const int64_t *dims2, int n2,
                                pct_tensor *out)
{
    if (n1 != n2) {
        PyErr_SetString(PyExc_RuntimeError, "both dimension lists should have same length");
        return NULL;
    }
    if (a->dtype != b->dtype) {
        PyErr_SetString(PyExc_RuntimeError, "both inputs should have same dtype");
        return NULL;
    }
    pct_tensor *t1 = a, *t2 = b, *t1p = NULL, *t2p = NULL, *prod = NULL;
    Py_INCREF(t1);
    Py_INCREF(t2);
    bool c1[PCT_MAX_DIMS + 1], c2[PCT_MAX_DIMS + 1];
    int64_t p1[PCT_MAX_DIMS], p2[PCT_MAX_DIMS], rsizes[2 * PCT_MAX_DIMS], csize = 1, size1 = 1, size2 = 1;
    int np1 = 0, np2 = 0, nr = 0;
    for (int i = 0; i < n1; i++) {
        /* Tensor.size(dim): a 0-d tensor has no dim to give */
        if (a->ndim == 0 || b->ndim == 0) {
            PyErr_Format(PyExc_IndexError, "Dimension specified as %lld but tensor has no dimensions",
                         (long long)(a->ndim == 0 ? dims1[i] : dims2[i]));
            goto fail;
        }
        int d1 = pct_wrap_dim(dims1[i], a->ndim), d2;
        if (d1 < 0 || (d2 = pct_wrap_dim(dims2[i], b->ndim)) < 0) goto fail;
        int64_t s1 = a->sizes[d1], s2 = b->sizes[d2];
        /* a contracted dim of size 1 on one side is summed away on the other, in its
         * own dtype (torch's tensordot keeps int32 int32, unlike Tensor.sum) */
        if (s2 == 1) {
            bool mask[PCT_MAX_DIMS + 1] = {false};
            mask[d1] = true;
            pct_tensor *s = pct_la_reduce(t1, mask, true, t1->dtype, RED_SUM, 0.0);
            if (!s) goto fail;
            Py_SETREF(t1, s);
        } else if (s1 == 1) {
            bool mask[PCT_MAX_DIMS + 1] = {false};
            mask[d2] = true;
            pct_tensor *s = pct_la_reduce(t2, mask, true, t2->dtype, RED_SUM, 0.0);
            if (!s) goto fail;
            Py_SETREF(t2, s);
        } else if (s1 != s2) {
            PyErr_Format(PyExc_RuntimeError,
                         "contracted dimensions need to match, but first has size %lld in dim %lld and second has size "
                         "%lld in dim %lld",
                         (long long)s1, (long long)dims1[i], (long long)s2, (long long)dims2[i]);
            goto fail;
        } else {
            csize *= s1;
        }
    }
    if (pct_la_dims_to_mask(dims1, n1, a->ndim, c1) < 0 || pct_la_dims_to_mask(dims2, n2, b->ndim, c2) < 0) goto fail;
    for (int i = 0; i < a->ndim; i++)
        if (!c1[i]) { p1[np1++] = i; size1 *= t1->sizes[i]; rsizes[nr++] = t1->sizes[i]; }
    for (int i = 0; i < n1; i++) p1[np1++] = pct_wrap_dim(dims1[i], a->ndim);
    for (int i = 0; i < n2; i++) p2[np2++] = pct_wrap_dim(dims2[i], b->ndim);
    for (int i = 0; i < b->ndim; i++)
        if (!c2[i]) { p2[np2++] = i; size2 *= t2->sizes[i]; rsizes[nr++] = t2->sizes[i]; }
    {
        pct_tensor *v1 = pct_la_view_permute(t1, p1), *v2 = v1 ? pct_la_view_permute(t2, p2) : NULL;
        const int64_t s1[2] = {size1, csize}, s2[2] = {csize, size2};
        if (v1 && v2) {
            t1p = pct_la_reshape(v1, 2, s1);
            if (t1p) t2p = pct_la_reshape(v2, 2, s2);
        }
        Py_XDECREF(v1);
        Py_XDECREF(v2);
        if (!t1p || !t2p) goto fail;
    }
    /* torch 2.13 contracts a 1 x 1 product (two vectors, or every dim contracted) with dot, which has no bool
     * kernel even for empty inputs */
    if (size1 == 1 && size2 == 1 && t1p->dtype == PCT_BOOL) { pct_la_not_implemented_bool("dot"); goto fail; }
    if (!(prod = (pct_tensor *)pct_mm(t1p, t2p, NULL))) goto fail;
    if (pct_tensor_set_shape(prod, nr, rsizes, NULL) < 0) goto fail;
    Py_DECREF(t1); Py_DECREF(t2); Py_DECREF(t1p); Py_DECREF(t2p);
    if (!out) return (PyObject *)prod;
    if (prod->dtype != out->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "tensordot: Expected the output tensor to have dtype %s, but got an output tensor with dtype %s",
                     pct_dtype_cpp_name[prod->dtype], pct_dtype_cpp_name[out->dtype]);
        Py_DECREF(prod);
        return NULL;
    }
    if (pct_out_resize(out, nr, rsizes) < 0 || pct_copy_(out, prod) < 0) {
        Py_DECREF(prod);
        return NULL;
    }
    Py_DECREF(prod);
    Py_INCREF(out);
    return (PyObject *)out;
fail:
    Py_XDECREF(t1);
    Py_XDECREF(t2);
    Py_XDECREF(t1p);
    Py_XDECREF(t2p);
    Py_XDECREF(prod);
    return NULL;
}

static PyObject *inner_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (a->ndim == 0 || b->ndim == 0) return pct_la_mul(out, false, a, b);
    if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 1]) {
        PyErr_Format(PyExc_RuntimeError,
                     "inner() the last dimension must match on both input tensors but got shapes %s and %s",
                     SHAPE(b1, a), SHAPE(b2, b));
        return NULL;
    }
    const int64_t d = -1;
    return tensordot_impl(a, b, &d, 1, &d, 1, out);
}

/* One of tensordot's dims lists: a list or tuple of ints. */
static int int_list(PyObject *o, int64_t *dst, int *n, const char *argname, int pos)
{
    if (!PyList_Check(o) && !PyTuple_Check(o)) {
        PyErr_Format(PyExc_TypeError, "tensordot(): argument '%s' (position %d) must be tuple of ints, not %s", argname,
                     pos, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(o);
    if (len > PCT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "tensordot(): too many dims (%zd)", len);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(o, i);
        PyObject *idx = PCT_TENSOR_CHECK(it) ? NULL : PyNumber_Index(it);
        if (!idx) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "tensordot(): argument '%s' (position %d) must be tuple of ints, but found "
                         "element of type %s at pos %zd", argname, pos, Py_TYPE(it)->tp_name, i);
            return -1;
        }
        dst[i] = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (dst[i] == -1 && PyErr_Occurred()) return -1;
    }
    *n = (int)len;
    return 0;
}

/* torch.functional.tensordot's handling of `dims`: an int, a pair of lists, or a tensor. */
static PyObject *tensordot_op(pct_tensor *a, pct_tensor *b, PyObject *dims, pct_tensor *out)
{
    int64_t d1[PCT_MAX_DIMS], d2[PCT_MAX_DIMS];
    int n1 = 0, n2 = 0;
    if (dims && dims != Py_None && !PyLong_Check(dims) && !PyList_Check(dims) && !PyTuple_Check(dims) &&
        !PCT_TENSOR_CHECK(dims)) {
        PyErr_Format(PyExc_RuntimeError,
                     "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two "
                     "lists, but got dims=%S", dims);
        return NULL;
    }
    int64_t k = 2;
    bool have_k = !dims || dims == Py_None;
    if (dims && (PyList_Check(dims) || PyTuple_Check(dims))) {
        Py_ssize_t len = PySequence_Fast_GET_SIZE(dims);
        if (len != 2) {
            if (len < 2) PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected 2, got %zd)", len);
            else PyErr_SetString(PyExc_ValueError, "too many values to unpack (expected 2)");
            return NULL;
        }
        if (int_list(PySequence_Fast_GET_ITEM(dims, 0), d1, &n1, "dims_self", 3) < 0 ||
            int_list(PySequence_Fast_GET_ITEM(dims, 1), d2, &n2, "dims_other", 4) < 0)
            return NULL;
    } else if (dims && PCT_TENSOR_CHECK(dims)) {
        pct_tensor *t = (pct_tensor *)dims;
        if (t->numel > 1) {
            if (t->ndim != 2 || t->sizes[0] != 2 || t->sizes[1] > PCT_MAX_DIMS) {
                PyErr_SetString(PyExc_RuntimeError, "tensordot expects a dims tensor of shape (2, n)");
                return NULL;
            }
            const char *p = pct_tensor_data(t);
            const int isz = pct_tensor_itemsize(t);
            n1 = n2 = (int)t->sizes[1];
            for (int i = 0; i < n1; i++) {
                d1[i] = pct_load_as_int64(p + (i * t->strides[1]) * isz, t->dtype);
                d2[i] = pct_load_as_int64(p + (t->strides[0] + i * t->strides[1]) * isz, t->dtype);
            }
        } else {
            int64_t v = t->numel == 1 ? pct_load_as_int64(pct_tensor_data(t), t->dtype) : 0;
            if (v < 0) {
                PyErr_Format(PyExc_RuntimeError, "tensordot expects dims >= 0, but got dims=%S", dims);
                return NULL;
            }
            if (v > PCT_MAX_DIMS) v = PCT_MAX_DIMS + 1;
            for (int64_t i = 0; i < v && i < PCT_MAX_DIMS; i++) { d1[i] = i - v; d2[i] = i; }
            n1 = n2 = (int)imin(v, PCT_MAX_DIMS);
        }
    } else {
        if (!have_k) {
            int overflow = 0;
            k = PyLong_AsLongLongAndOverflow(dims, &overflow);
            if (k == -1 && PyErr_Occurred()) return NULL;
            if (overflow) k = overflow > 0 ? INT64_MAX : -1;
        }
        if (k < 0) {
            PyErr_Format(PyExc_RuntimeError, "tensordot expects dims >= 0, but got dims=%lld", (long long)k);
            return NULL;
        }
        if (k > imin(a->ndim, b->ndim)) {
            PyErr_Format(PyExc_RuntimeError, "tensordot expects dims < ndim_a or ndim_b, but got dims=%lld", (long long)k);
            return NULL;
        }
        for (int64_t i = 0; i < k; i++) { d1[i] = i - k; d2[i] = i; }
        n1 = n2 = (int)k;
    }
    return tensordot_impl(a, b, d1, n1, d2, n2, out);
}

static PyObject *kron_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    const int maxdim = a->ndim > b->ndim ? a->ndim : b->ndim;
    const int pa = maxdim - a->ndim, pb = maxdim - b->ndim;
    int64_t asz[2 * PCT_MAX_DIMS], ast[2 * PCT_MAX_DIMS], bsz[2 * PCT_MAX_DIMS], bst[2 * PCT_MAX_DIMS], rsz[PCT_MAX_DIMS];
    if (2 * maxdim > PCT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "kron: inputs with more than %d dimensions are not supported", PCT_MAX_DIMS / 2);
        return NULL;
    }
    for (int i = 0; i < maxdim; i++) {
        asz[2 * i] = i >= pa ? a->sizes[i - pa] : 1;
        ast[2 * i] = i >= pa ? a->strides[i - pa] : 0;
        asz[2 * i + 1] = 1; ast[2 * i + 1] = 0;
        bsz[2 * i] = 1; bst[2 * i] = 0;
        bsz[2 * i + 1] = i >= pb ? b->sizes[i - pb] : 1;
        bst[2 * i + 1] = i >= pb ? b->strides[i - pb] : 0;
        rsz[i] = asz[2 * i] * bsz[2 * i + 1];
    }
    pct_tensor *av = pct_la_view_with(a, 2 * maxdim, asz, ast), *bv = av ? pct_la_view_with(b, 2 * maxdim, bsz, bst) : NULL;
    pct_tensor *r = bv ? (pct_tensor *)pct_la_mul(NULL, false, av, bv) : NULL;
    Py_XDECREF(av);
    Py_XDECREF(bv);
    if (!r) return NULL;
    if (!pct_tensor_is_contiguous(r)) { /* the product follows its inputs' memory order; the reshape needs C order */
        pct_tensor *cr = pct_contiguous(r);
        Py_DECREF(r);
        if (!(r = cr)) return NULL;
    }
    if (pct_tensor_set_shape(r, maxdim, rsz, NULL) < 0) goto fail;
    if (!out) return (PyObject *)r;
    if (!pct_can_cast(r->dtype, out->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     pct_dtype_cpp_name[r->dtype], pct_dtype_cpp_name[out->dtype]);
        goto fail;
    }
    if (pct_out_resize(out, maxdim, rsz) < 0 || pct_copy_(out, r) < 0) goto fail;
    Py_DECREF(r);
    Py_INCREF(out);
    return (PyObject *)out;
fail:
    Py_DECREF(r);
    return NULL;
}

/* ---- kernels (ops_linalg.def) ---- */

#define T(i) (c->v[i].t)
#define OUT (c->inplace ? NULL : c->out)

PyObject *pct_cpu_inner(pct_call *c) { return inner_op(T(0), T(1), c->out); }
PyObject *pct_cpu_kron(pct_call *c) { return kron_op(T(0), T(1), c->out); }

PyObject *pct_cpu_tensordot(pct_call *c)
{
    if (c->v[2].none && c->v[2].obj == Py_None) { /* the default is 2; an explicit None is refused */
        PyErr_SetString(PyExc_RuntimeError, "tensordot expects dims to be int or tuple[list[int], list[int]] or "
                                            "list[list[int]] containing two lists, but got dims=None");
        return NULL;
    }
    return tensordot_op(T(0), T(1), c->v[2].none ? NULL : c->v[2].obj, c->out);
}

#undef T
#undef OUT
