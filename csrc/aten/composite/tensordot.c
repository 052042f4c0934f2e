/* tensordot.c: tensordot and inner, composites: the contracted dims permuted to the end of the first operand and
 * the start of the second, both reshaped to matrices, one mm, and the result viewed to the free dims (ATen's
 * tensordot, with torch.functional.tensordot's forms of `dims`; inner is a tensordot over the last dims, or a product
 * with a 0-d operand). Implicit composites: their gradients are those of the ops they call, and grad_fn is torch's
 * (ViewBackward0 from the last view, MulBackward0 for inner with a 0-d operand). */
#include "composite.h"
#include <stdlib.h>

/* ATen's tensordot(input1, input2, dims1, dims2) (and tensordot_out) */
static pct_object *tensordot_impl(pct_tensor *a, pct_tensor *b, const int64_t *dims1, int n1, const int64_t *dims2, int n2,
                                pct_tensor *out)
{
    if (n1 != n2) {
        pct_error_str(PCT_ERR_RUNTIME, "both dimension lists should have same length");
        return NULL;
    }
    if (a->dtype != b->dtype) {
        pct_error_str(PCT_ERR_RUNTIME, "both inputs should have same dtype");
        return NULL;
    }
    pct_tensor *t1 = a, *t2 = b, *t1p = NULL, *t2p = NULL, *prod = NULL;
    PCT_INCREF(t1);
    PCT_INCREF(t2);
    bool c1[PCT_MAX_DIMS + 1], c2[PCT_MAX_DIMS + 1];
    int64_t p1[PCT_MAX_DIMS], p2[PCT_MAX_DIMS], rsizes[2 * PCT_MAX_DIMS], csize = 1, size1 = 1, size2 = 1;
    int np1 = 0, np2 = 0, nr = 0;
    for (int i = 0; i < n1; i++) {
        /* Tensor.size(dim): a 0-d tensor has no dim to give */
        if (a->ndim == 0 || b->ndim == 0) {
            pct_error(PCT_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions",
                         (long long)(a->ndim == 0 ? dims1[i] : dims2[i]));
            goto fail;
        }
        int d1 = pct_wrap_dim(dims1[i], a->ndim), d2;
        if (d1 < 0 || (d2 = pct_wrap_dim(dims2[i], b->ndim)) < 0) goto fail;
        int64_t s1 = a->sizes[d1], s2 = b->sizes[d2];
        /* a contracted dim of size 1 on one side is summed away on the other, in its
         * own dtype (torch's tensordot keeps int32 int32, unlike Tensor.sum) */
        if (s2 == 1) {
            const int64_t d = d1;
            pct_tensor *s = pct_comp_sum(t1, 1, &d, true, t1->dtype);
            if (!s) goto fail;
            PCT_SETREF(t1, s);
        } else if (s1 == 1) {
            const int64_t d = d2;
            pct_tensor *s = pct_comp_sum(t2, 1, &d, true, t2->dtype);
            if (!s) goto fail;
            PCT_SETREF(t2, s);
        } else if (s1 != s2) {
            pct_error(PCT_ERR_RUNTIME,
                         "contracted dimensions need to match, but first has size %lld in dim %lld and second has size "
                         "%lld in dim %lld",
                         (long long)s1, (long long)dims1[i], (long long)s2, (long long)dims2[i]);
            goto fail;
        } else {
            csize *= s1;
        }
    }
    if (pct_dims_mask(dims1, n1, a->ndim, c1) < 0 || pct_dims_mask(dims2, n2, b->ndim, c2) < 0) goto fail;
    for (int i = 0; i < a->ndim; i++)
        if (!c1[i]) { p1[np1++] = i; size1 *= t1->sizes[i]; rsizes[nr++] = t1->sizes[i]; }
    for (int i = 0; i < n1; i++) p1[np1++] = pct_wrap_dim(dims1[i], a->ndim);
    for (int i = 0; i < n2; i++) p2[np2++] = pct_wrap_dim(dims2[i], b->ndim);
    for (int i = 0; i < b->ndim; i++)
        if (!c2[i]) { p2[np2++] = i; size2 *= t2->sizes[i]; rsizes[nr++] = t2->sizes[i]; }
    {
        pct_tensor *v1 = pct_comp_shape(PCT_OP_permute, t1, np1, p1);
        pct_tensor *v2 = v1 ? pct_comp_shape(PCT_OP_permute, t2, np2, p2) : NULL;
        const int64_t s1[2] = {size1, csize}, s2[2] = {csize, size2};
        if (v1 && v2) {
            t1p = pct_comp_shape(PCT_OP_reshape, v1, 2, s1);
            if (t1p) t2p = pct_comp_shape(PCT_OP_reshape, v2, 2, s2);
        }
        PCT_XDECREF(v1);
        PCT_XDECREF(v2);
        if (!t1p || !t2p) goto fail;
    }
    /* torch 2.13 contracts a 1 x 1 product (two vectors, or every dim contracted) with dot, which has no bool
     * kernel even for empty inputs */
    if (size1 == 1 && size2 == 1 && t1p->dtype == PCT_BOOL) {
        pct_error_str(PCT_ERR_NOT_IMPLEMENTED, "\"dot\" not implemented for 'Bool'");
        goto fail;
    }
    {
        pct_tensor *mm = pct_comp_call2(PCT_OP_mm, t1p, t2p, NULL);
        if (!mm) goto fail;
        prod = pct_comp_shape(PCT_OP_view, mm, nr, rsizes);
        PCT_DECREF(mm);
        if (!prod) goto fail;
    }
    PCT_DECREF(t1); PCT_DECREF(t2); PCT_DECREF(t1p); PCT_DECREF(t2p);
    if (!out) return (pct_object *)prod;
    if (prod->dtype != out->dtype) {
        pct_error(PCT_ERR_RUNTIME,
                     "tensordot: Expected the output tensor to have dtype %s, but got an output tensor with dtype %s",
                     pct_dtype_cpp_name[prod->dtype], pct_dtype_cpp_name[out->dtype]);
        PCT_DECREF(prod);
        return NULL;
    }
    if (pct_out_resize(out, nr, rsizes) < 0 || pct_comp_copy_(out, prod) < 0) {
        PCT_DECREF(prod);
        return NULL;
    }
    PCT_DECREF(prod);
    PCT_INCREF(out);
    return (pct_object *)out;
fail:
    PCT_XDECREF(t1);
    PCT_XDECREF(t2);
    PCT_XDECREF(t1p);
    PCT_XDECREF(t2p);
    PCT_XDECREF(prod);
    return NULL;
}

static pct_object *inner_op(pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (a->ndim == 0 || b->ndim == 0) return (pct_object *)pct_comp_mul(a, b, out);
    if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 1]) {
        pct_error(PCT_ERR_RUNTIME,
                     "inner() the last dimension must match on both input tensors but got shapes %s and %s",
                     pct_shape_str(b1, sizeof b1, a->ndim, a->sizes), pct_shape_str(b2, sizeof b2, b->ndim, b->sizes));
        return NULL;
    }
    const int64_t d = -1;
    return tensordot_impl(a, b, &d, 1, &d, 1, out);
}

/* One of tensordot's dims lists: a list or tuple of ints. */
static int int_list(pct_object *o, int64_t *dst, int *n, const char *argname, int pos)
{
    pct_object *const *items;
    int64_t len;
    if (!pct_sequence_items(o, &items, &len)) {
        pct_error(PCT_ERR_TYPE, "tensordot(): argument '%s' (position %d) must be tuple of ints, not %s", argname,
                     pos, pct_type_name(o));
        return -1;
    }
    if (len > PCT_MAX_DIMS) {
        pct_error(PCT_ERR_RUNTIME, "tensordot(): too many dims (%lld)", (long long)len);
        return -1;
    }
    for (int64_t i = 0; i < len; i++) {
        pct_object *it = items[i];
        int rc = pct_is_tensor(it) ? -1 : pct_runtime.index_value(it, &dst[i], NULL);
        if (rc == -2) return -1; /* an int out of range: its OverflowError */
        if (rc < 0) {
            pct_error_clear();
            pct_error(PCT_ERR_TYPE, "tensordot(): argument '%s' (position %d) must be tuple of ints, but found "
                         "element of type %s at pos %lld", argname, pos, pct_type_name(it), (long long)i);
            return -1;
        }
    }
    *n = (int)len;
    return 0;
}

/* torch.functional.tensordot's handling of `dims`: an int, a pair of lists, or a tensor. */
static pct_object *tensordot_op(pct_tensor *a, pct_tensor *b, pct_object *dims, pct_tensor *out)
{
    int64_t d1[PCT_MAX_DIMS], d2[PCT_MAX_DIMS];
    int n1 = 0, n2 = 0;
    pct_object *const *pair;
    int64_t len;
    const bool is_none = !dims || pct_is_none(dims), is_seq = !is_none && pct_sequence_items(dims, &pair, &len);
    const bool is_tensor = !is_none && !is_seq && pct_is_tensor(dims);
    if (!is_none && !is_seq && !is_tensor && !pct_runtime.is_int(dims)) {
        char *r = pct_runtime.str(dims);
        if (!r) return NULL;
        pct_error(PCT_ERR_RUNTIME,
                     "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two "
                     "lists, but got dims=%s", r);
        free(r);
        return NULL;
    }
    int64_t k = 2;
    bool have_k = is_none;
    if (is_seq) {
        if (len != 2) {
            if (len < 2) pct_error(PCT_ERR_VALUE, "not enough values to unpack (expected 2, got %lld)", (long long)len);
            else pct_error_str(PCT_ERR_VALUE, "too many values to unpack (expected 2)");
            return NULL;
        }
        if (int_list(pair[0], d1, &n1, "dims_self", 3) < 0 || int_list(pair[1], d2, &n2, "dims_other", 4) < 0)
            return NULL;
    } else if (is_tensor) {
        pct_tensor *t = (pct_tensor *)dims;
        if (t->device_type == PCT_META) { /* torch reads it with item() or tolist(): a meta tensor has no values */
            if (t->numel > 1) pct_error_str(PCT_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
            else pct_error_str(PCT_ERR_RUNTIME, "Tensor.item() cannot be called on meta tensors");
            return NULL;
        }
        if (t->numel > 1) {
            if (t->ndim != 2 || t->sizes[0] != 2 || t->sizes[1] > PCT_MAX_DIMS) {
                pct_error_str(PCT_ERR_RUNTIME, "tensordot expects a dims tensor of shape (2, n)");
                return NULL;
            }
            /* dims given as a tensor: an argument read on the host, as torch does with .tolist() */
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
                char *r = pct_runtime.str(dims);
                if (!r) return NULL;
                pct_error(PCT_ERR_RUNTIME, "tensordot expects dims >= 0, but got dims=%s", r);
                free(r);
                return NULL;
            }
            if (v > PCT_MAX_DIMS) v = PCT_MAX_DIMS + 1;
            for (int64_t i = 0; i < v && i < PCT_MAX_DIMS; i++) { d1[i] = i - v; d2[i] = i; }
            n1 = n2 = (int)(v < PCT_MAX_DIMS ? v : PCT_MAX_DIMS);
        }
    } else {
        if (!have_k) {
            int overflow = 0;
            if (pct_runtime.index_value(dims, &k, &overflow) < 0) return NULL;
            if (overflow) k = overflow > 0 ? INT64_MAX : -1;
        }
        if (k < 0) {
            pct_error(PCT_ERR_RUNTIME, "tensordot expects dims >= 0, but got dims=%lld", (long long)k);
            return NULL;
        }
        if (k > (a->ndim < b->ndim ? a->ndim : b->ndim)) {
            pct_error(PCT_ERR_RUNTIME, "tensordot expects dims < ndim_a or ndim_b, but got dims=%lld", (long long)k);
            return NULL;
        }
        for (int64_t i = 0; i < k; i++) { d1[i] = i - k; d2[i] = i; }
        n1 = n2 = (int)k;
    }
    return tensordot_impl(a, b, d1, n1, d2, n2, out);
}


/* ---- composites (ops_linalg.def) ---- */

pct_object *pct_composite_inner(pct_call *c)
{
    PCT_ARGS(inner);
    return inner_op(arg.input, arg.other, c->out);
}

pct_object *pct_composite_tensordot(pct_call *c)
{
    PCT_ARGS(tensordot);
    if (arg.dims && pct_is_none(arg.dims)) { /* the default (NULL) is 2; an explicit None is refused */
        pct_error_str(PCT_ERR_RUNTIME, "tensordot expects dims to be int or tuple[list[int], list[int]] or "
                                       "list[list[int]] containing two lists, but got dims=None");
        return NULL;
    }
    return tensordot_op(arg.a, arg.b, arg.dims, c->out);
}
