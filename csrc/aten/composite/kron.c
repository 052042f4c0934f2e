/* kron.c: torch.kron, an implicit composite (its gradient that of the ops it calls, grad_fn UnsafeViewBackward0 as
 * in torch): the operands given interleaved dims by _unsafe_view (a's sizes at even dims, b's at odd ones, 1
 * elsewhere), multiplied with broadcasting, and the product's dim pairs merged by _unsafe_view again. The product
 * follows its inputs' memory order, so where that order keeps the pairs apart (a transposed operand) the last
 * _unsafe_view refuses it, as torch's does. */
#include "composite.h"

pct_object *pct_composite_kron(pct_call *c)
{
    PCT_ARGS(kron);
    pct_tensor *a = arg.input, *b = arg.other, *out = c->out;
    const int maxdim = a->ndim > b->ndim ? a->ndim : b->ndim;
    const int pa = maxdim - a->ndim, pb = maxdim - b->ndim;
    if (2 * maxdim > PCT_MAX_DIMS) {
        pct_error(PCT_ERR_RUNTIME, "kron: inputs with more than %d dimensions are not supported", PCT_MAX_DIMS / 2);
        return NULL;
    }
    int64_t asz[PCT_MAX_DIMS], bsz[PCT_MAX_DIMS], rsz[PCT_MAX_DIMS];
    for (int i = 0; i < maxdim; i++) {
        asz[2 * i] = i >= pa ? a->sizes[i - pa] : 1;
        asz[2 * i + 1] = 1;
        bsz[2 * i] = 1;
        bsz[2 * i + 1] = i >= pb ? b->sizes[i - pb] : 1;
        rsz[i] = asz[2 * i] * bsz[2 * i + 1];
    }
    pct_tensor *av = pct_comp_shape(PCT_OP_unsafe_view, a, 2 * maxdim, asz);
    pct_tensor *bv = av ? pct_comp_shape(PCT_OP_unsafe_view, b, 2 * maxdim, bsz) : NULL;
    pct_tensor *prod = bv ? pct_comp_mul(av, bv, NULL) : NULL;
    pct_tensor *r = prod ? pct_comp_shape(PCT_OP_unsafe_view, prod, maxdim, rsz) : NULL;
    PCT_XDECREF(av); PCT_XDECREF(bv); PCT_XDECREF(prod);
    if (!r || !out) return (pct_object *)r;
    if (!pct_can_cast(r->dtype, out->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                  pct_dtype_cpp_name[r->dtype], pct_dtype_cpp_name[out->dtype]);
    } else if (pct_out_resize(out, maxdim, rsz) == 0 && pct_comp_copy_(out, r) == 0) {
        PCT_DECREF(r);
        PCT_INCREF(out);
        return (pct_object *)out;
    }
    PCT_DECREF(r);
    return NULL;
}
