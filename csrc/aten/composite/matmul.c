/* matmul.c: torch.matmul, a composite over dot, mv, mm and bmm (ATen's _matmul_impl in LinearAlgebra.cpp): the
 * product by rank; a batch folded into the rows of one mm/mv where that needs no copy (should_fold); otherwise the
 * batch dims broadcast, flattened and run as one bmm. Implicit autograd: the gradient comes from those ops, and
 * grad_fn is torch's (DotBackward0, MvBackward0, MmBackward0, a view of MmBackward0 / BmmBackward0). */
#include "composite.h"

/* ATen's should_fold: fold the batch of the larger (>= 3-D) operand into the rows of one mm/mv when that needs no
 * copy (or the smaller operand requires grad: the copy then saves the larger gradient's reduction). */
static bool should_fold(const pct_tensor *t1, const pct_tensor *t2, bool has_out)
{
    const bool t1_larger = t1->ndim >= t2->ndim;
    const pct_tensor *big = t1_larger ? t1 : t2, *small = t1_larger ? t2 : t1;
    const int dim_big = big->ndim;
    if (!(dim_big >= 3 && small->ndim <= 2)) return false;
    if (pct_tensor_requires_grad(small) && !has_out) return true;
    if (t1->ndim == 2) return false;
    if (big->numel == 0) return true;
    /* sizes / strides of big, with the last two swapped when it is t2 (it is read as its mT) */
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    memcpy(sz, big->sizes, sizeof(int64_t) * (size_t)dim_big);
    memcpy(st, big->strides, sizeof(int64_t) * (size_t)dim_big);
    if (!t1_larger) {
        sz[dim_big - 2] = big->sizes[dim_big - 1]; sz[dim_big - 1] = big->sizes[dim_big - 2];
        st[dim_big - 2] = big->strides[dim_big - 1]; st[dim_big - 1] = big->strides[dim_big - 2];
    }
    for (int i = 0; i < dim_big - 2; i++)
        if (st[i] != st[i + 1] * sz[i + 1]) return false;
    return true;
}

/* out= resized to shape, then written from result (unless result already is out's memory) */
static pct_object *deliver_out(pct_tensor *out, pct_tensor *result, int nd, const int64_t *shape)
{
    if (pct_out_resize(out, nd, shape) < 0) return NULL;
    if (result->storage != out->storage || result->offset != out->offset) {
        pct_tensor *v = pct_comp_shape(PCT_OP_view, result, nd, shape);
        int rc = v ? pct_comp_copy_(out, v) : -1;
        PCT_XDECREF(v);
        if (rc < 0) return NULL;
    }
    PCT_INCREF(out);
    return (pct_object *)out;
}

/* (..., n, m) @ (m, p) or (m,), and the transposed case (m) / (p, m) @ (..., m, n): one mm or mv */
static pct_object *matmul_fold(pct_tensor *tensor1, pct_tensor *tensor2, pct_tensor *out)
{
    const bool transpose = tensor2->ndim > tensor1->ndim;
    pct_tensor *t1 = NULL, *t2 = NULL, *t1f = NULL, *prod = NULL, *shaped = NULL, *ro = NULL;
    pct_object *r = NULL;
    if (transpose) {
        if (!(t1 = pct_comp_mT(tensor2))) return NULL;
        if (tensor1->ndim == 2) { if (!(t2 = pct_comp_call1(PCT_OP_t, tensor1))) goto done; }
        else { PCT_INCREF(tensor1); t2 = tensor1; }
    } else {
        PCT_INCREF(tensor1); t1 = tensor1;
        PCT_INCREF(tensor2); t2 = tensor2;
    }
    int64_t oshape[PCT_MAX_DIMS], folded = 1;
    int ond = t1->ndim - 1;
    for (int i = 0; i < ond; i++) { oshape[i] = t1->sizes[i]; folded *= t1->sizes[i]; }
    const bool t2_matrix = t2->ndim == 2;
    if (t2_matrix) oshape[ond++] = t2->sizes[1];
    const int64_t fshape[2] = {folded, t1->sizes[t1->ndim - 1]};
    if (!(t1f = pct_comp_shape(PCT_OP_reshape, t1, 2, fshape))) goto done;
    if (!out) {
        prod = pct_comp_call2(t2_matrix ? PCT_OP_mm : PCT_OP_mv, t1f, t2, NULL);
        if (!prod || !(shaped = pct_comp_shape(PCT_OP_view, prod, ond, oshape))) goto done;
        if (transpose && t2_matrix) {
            /* torch gives the 2-D @ 3-D product contiguous */
            pct_tensor *mt = pct_comp_mT(shaped);
            r = mt ? (pct_object *)pct_comp_contiguous_clone(mt) : NULL;
            PCT_XDECREF(mt);
        } else {
            r = (pct_object *)shaped;
            shaped = NULL;
        }
    } else {
        if (pct_out_resize(out, ond, oshape) < 0) goto done;
        const int64_t rs[2] = {folded, t2->sizes[t2->ndim - 1]};
        if (!(ro = pct_comp_shape(PCT_OP_reshape, out, t2_matrix ? 2 : 1, rs))) goto done;
        if (!(prod = pct_comp_call2(t2_matrix ? PCT_OP_mm : PCT_OP_mv, t1f, t2, ro))) goto done;
        if (ro->storage != out->storage && pct_comp_copy_(out, ro) < 0) goto done;
        PCT_INCREF(out);
        r = (pct_object *)out;
    }
done:
    PCT_XDECREF(t1); PCT_XDECREF(t2); PCT_XDECREF(t1f); PCT_XDECREF(prod); PCT_XDECREF(shaped); PCT_XDECREF(ro);
    return r;
}

/* t expanded or reshaped to shape (op: expand, reshape), or t itself (a new reference) when it has that shape
 * already: the common batched product (equal 3-D batches) then makes no view ops, only its bmm */
static pct_tensor *shaped(int op, pct_tensor *t, int nd, const int64_t *shape)
{
    if (t->ndim == nd && memcmp(t->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0) {
        PCT_INCREF(t);
        return t;
    }
    return pct_comp_shape(op, t, nd, shape);
}

/* The batched case: batch dims broadcast, flattened into one, and one bmm */
static pct_object *matmul_batched(pct_tensor *t1, pct_tensor *t2, pct_tensor *out)
{
    const int d1 = t1->ndim, d2 = t2->ndim;
    const int64_t n = d1 > 1 ? t1->sizes[d1 - 2] : 1, m1 = t1->sizes[d1 - 1];
    const int64_t m2 = d2 > 1 ? t2->sizes[d2 - 2] : t2->sizes[0], p = d2 > 1 ? t2->sizes[d2 - 1] : 1;
    int nb;
    int64_t bshape[PCT_MAX_DIMS + 2], e1[PCT_MAX_DIMS + 2], e2[PCT_MAX_DIMS + 2], oshape[PCT_MAX_DIMS];
    if (pct_broadcast_shapes(d1 > 2 ? d1 - 2 : 0, t1->sizes, d2 > 2 ? d2 - 2 : 0, t2->sizes, &nb, bshape) < 0)
        return NULL;
    int64_t batch = 1;
    for (int i = 0; i < nb; i++) batch *= bshape[i];
    memcpy(e1, bshape, sizeof(int64_t) * (size_t)nb);
    memcpy(e2, bshape, sizeof(int64_t) * (size_t)nb);
    memcpy(oshape, bshape, sizeof(int64_t) * (size_t)nb);
    e1[nb] = n; e1[nb + 1] = m1;
    e2[nb] = m2; e2[nb + 1] = p;
    int ond = nb;
    if (d1 > 1) oshape[ond++] = n;
    if (d2 > 1) oshape[ond++] = p;
    const int64_t f1[3] = {batch, n, m1}, f2[3] = {batch, m2, p};
    pct_tensor *x1 = NULL, *x2 = NULL, *a = NULL, *b = NULL, *prod = NULL, *v = NULL;
    pct_object *r = NULL;
    /* a vector operand is (m,) -> (1, m) or (m, 1) first: its expand then matches the matrix case */
    pct_tensor *m_1 = d1 == 1 ? pct_comp_unsqueeze(t1, 0) : (PCT_INCREF(t1), t1);
    pct_tensor *m_2 = d2 == 1 ? pct_comp_unsqueeze(t2, 1) : (PCT_INCREF(t2), t2);
    if (!m_1 || !m_2) goto done;
    if (!(x1 = shaped(PCT_OP_expand, m_1, nb + 2, e1)) || !(x2 = shaped(PCT_OP_expand, m_2, nb + 2, e2))) goto done;
    if (!(a = shaped(PCT_OP_reshape, x1, 3, f1)) || !(b = shaped(PCT_OP_reshape, x2, 3, f2))) goto done;
    if (out && pct_out_check_dtype(out, t2->dtype) < 0) goto done;
    if (!(prod = pct_comp_call2(PCT_OP_bmm, a, b, NULL))) goto done;
    if (out) r = deliver_out(out, prod, ond, oshape);
    else if ((v = pct_comp_shape(PCT_OP_view, prod, ond, oshape))) { r = (pct_object *)v; v = NULL; }
done:
    PCT_XDECREF(m_1); PCT_XDECREF(m_2); PCT_XDECREF(x1); PCT_XDECREF(x2); PCT_XDECREF(a); PCT_XDECREF(b);
    PCT_XDECREF(prod); PCT_XDECREF(v);
    return r;
}

pct_object *pct_composite_matmul(pct_call *c)
{
    PCT_ARGS(matmul);
    pct_tensor *t1 = arg.input, *t2 = arg.other, *out = c->out;
    const int d1 = t1->ndim, d2 = t2->ndim;
    if (d1 == 0 || d2 == 0) {
        pct_error(PCT_ERR_RUNTIME, "both arguments to matmul need to be at least 1D, but they are %dD and %dD", d1, d2);
        return NULL;
    }
    if (d1 == 1 && d2 == 1) return (pct_object *)pct_comp_call2(PCT_OP_dot, t1, t2, out);
    if (d1 == 2 && d2 == 1) return (pct_object *)pct_comp_call2(PCT_OP_mv, t1, t2, out);
    if (d1 == 2 && d2 == 2) return (pct_object *)pct_comp_call2(PCT_OP_mm, t1, t2, out);
    if (d1 == 1 && d2 == 2) { /* unsqueeze(0).mm(t2).squeeze_(0), out= included */
        pct_tensor *u = pct_comp_unsqueeze(t1, 0);
        pct_tensor *r = u ? pct_comp_call2(PCT_OP_mm, u, t2, out) : NULL;
        PCT_XDECREF(u);
        if (!r) return NULL;
        /* a product that came back as a view (the complex mm) is squeezed out of place: an in-place squeeze_ of a
         * view would rebase its history onto the view's base (CopySlices of a metadata change) */
        const int64_t zero = 0;
        pct_tensor *s = r->base && !out ? pct_comp_shape(PCT_OP_squeeze, r, 1, &zero) : pct_comp_squeeze_(r, 0);
        PCT_DECREF(r);
        return (pct_object *)s;
    }
    if (should_fold(t1, t2, out != NULL)) return matmul_fold(t1, t2, out);
    return matmul_batched(t1, t2, out);
}
