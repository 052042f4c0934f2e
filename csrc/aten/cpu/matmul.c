/* matmul.c: torch.matmul composed of the products beside it (ATen's matmul in
 * LinearAlgebra.cpp): dot, mv and mm by rank, a batch folded into the rows of one mm where
 * ATen folds (should_fold), and otherwise broadcast batch dims read with stride 0 and run
 * as one batched GEMM.
 */
#include "blas_internal.h"

/* ATen's should_fold: fold the batch of the larger (>= 3-D) operand into the rows of
 * one mm/mv when that needs no copy (or the smaller operand requires grad). */
static bool should_fold(const pct_tensor *t1, const pct_tensor *t2, bool has_out)
{
    const bool t1_larger = t1->ndim >= t2->ndim;
    const pct_tensor *big = t1_larger ? t1 : t2;
    const int dim_big = big->ndim, dim_small = t1_larger ? t2->ndim : t1->ndim;
    if (!(dim_big >= 3 && dim_small <= 2)) return false;
    const pct_tensor *small = t1_larger ? t2 : t1;
    if (pct_tensor_requires_grad(small) && !has_out) return true;
    if (t1->ndim == 2) return false;
    if (big->numel == 0) return true;
    /* sizes / strides of big, with the last two swapped when it is t2 (mT) */
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

static pct_object *matmul_fold(pct_tensor *tensor1, pct_tensor *tensor2, pct_tensor *out)
{
    const bool transpose = tensor2->ndim > tensor1->ndim;
    pct_tensor *t1 = NULL, *t2 = NULL, *t1f = NULL, *prod = NULL, *res = NULL;
    pct_object *r = NULL;
    int64_t oshape[PCT_MAX_DIMS], fshape[2];
    if (transpose) {
        if (!(t1 = pct_la_view_mT(tensor2))) return NULL;
        if (tensor1->ndim == 2) { if (!(t2 = pct_la_view_mT(tensor1))) goto fail; }
        else { PCT_INCREF(tensor1); t2 = tensor1; }
    } else {
        PCT_INCREF(tensor1); t1 = tensor1;
        PCT_INCREF(tensor2); t2 = tensor2;
    }
    int ond = t1->ndim - 1;
    int64_t folded = 1;
    for (int i = 0; i < ond; i++) { oshape[i] = t1->sizes[i]; folded *= t1->sizes[i]; }
    const bool t2_matrix = t2->ndim == 2;
    if (t2_matrix) oshape[ond++] = t2->sizes[1];
    fshape[0] = folded;
    fshape[1] = t1->sizes[t1->ndim - 1];
    if (!(t1f = pct_la_reshape(t1, 2, fshape))) goto fail;
    if (!out) {
        prod = (pct_tensor *)(t2_matrix ? pct_mm(t1f, t2, NULL) : pct_la_mv(t1f, t2, NULL));
        if (!prod) goto fail;
        /* the product is contiguous: give it the output shape */
        if (pct_tensor_set_shape(prod, ond, oshape, NULL) < 0) goto fail;
        if (transpose && t2_matrix) {
            pct_tensor *mt = pct_la_view_mT(prod);
            if (!mt) goto fail;
            res = pct_contiguous(mt);
            PCT_DECREF(mt);
            if (!res) goto fail;
            r = (pct_object *)res;
        } else {
            r = (pct_object *)prod;
            prod = NULL;
        }
    } else {
        if (pct_out_resize(out, ond, oshape) < 0) goto fail;
        int64_t rs[2] = {folded, t2->sizes[t2->ndim - 1]};
        pct_tensor *ro = pct_la_reshape(out, t2_matrix ? 2 : 1, rs);
        if (!ro) goto fail;
        pct_object *x = t2_matrix ? pct_mm(t1f, t2, ro) : pct_la_mv(t1f, t2, ro);
        if (x && ro->storage != out->storage && pct_copy_(out, ro) < 0) PCT_CLEAR(x);
        PCT_DECREF(ro);
        if (!x) goto fail;
        PCT_DECREF(x);
        PCT_INCREF(out);
        r = (pct_object *)out;
    }
fail:
    PCT_XDECREF(t1);
    PCT_XDECREF(t2);
    PCT_XDECREF(t1f);
    PCT_XDECREF(prod);
    return r;
}

/* The batched case: broadcast batch dims are read with stride 0 and run as one
 * batched GEMM (no expand-and-copy as in ATen's reshape of the expanded operands). */
static pct_object *matmul_batched(pct_tensor *t1, pct_tensor *t2, pct_tensor *out)
{
    const int d1 = t1->ndim, d2 = t2->ndim;
    const int64_t n = d1 > 1 ? t1->sizes[d1 - 2] : 1, m1 = t1->sizes[d1 - 1];
    const int64_t m2 = d2 > 1 ? t2->sizes[d2 - 2] : t2->sizes[0], p = d2 > 1 ? t2->sizes[d2 - 1] : 1;
    const int nb1 = d1 > 2 ? d1 - 2 : 0, nb2 = d2 > 2 ? d2 - 2 : 0;
    int nb;
    int64_t bshape[PCT_MAX_DIMS];
    if (pct_broadcast_shapes(nb1, t1->sizes, nb2, t2->sizes, &nb, bshape) < 0) return NULL;
    int64_t B = 1;
    for (int i = 0; i < nb; i++) B *= bshape[i];
    if (m1 != m2) {
        pct_error(PCT_ERR_RUNTIME,
                     "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, %lld].",
                     (long long)B, (long long)m1, (long long)B, (long long)m2);
        return NULL;
    }
    int64_t oshape[PCT_MAX_DIMS];
    int ond = nb;
    memcpy(oshape, bshape, sizeof(int64_t) * (size_t)nb);
    if (d1 > 1) oshape[ond++] = n;
    if (d2 > 1) oshape[ond++] = p;
    const int dtype = t2->dtype;
    if (pct_out_check_dtype(out, dtype) < 0) return NULL;
    pct_tensor *result = pct_la_result_tensor(out, ond, oshape, dtype), *target = result;
    if (!result) return NULL;
    if (out && (!pct_tensor_is_contiguous(out) || shares_storage(out, t1) || shares_storage(out, t2))) {
        if (!(target = pct_tensor_empty(ond, oshape, dtype, PCT_CPU, -1))) goto fail;
    }
    if (target->numel == 0) goto done;
    if (m1 == 0) {
        if (pct_la_fill_zero(target) < 0) goto fail;
        goto done;
    }
    if (t1->dtype != t2->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s", pct_dtype_cpp_name[t1->dtype],
                     pct_dtype_cpp_name[t2->dtype]);
        goto fail;
    }
    if (dtype == PCT_BOOL) { pct_la_not_implemented_bool("bmm"); goto fail; }
    {
        int64_t a_bs[PCT_MAX_DIMS], b_bs[PCT_MAX_DIMS], c_bs[PCT_MAX_DIMS], full[PCT_MAX_DIMS + 2], cst[PCT_MAX_DIMS + 2];
        for (int i = 0; i < nb; i++) {
            int i1 = i - (nb - nb1), i2 = i - (nb - nb2);
            a_bs[i] = (i1 >= 0 && t1->sizes[i1] != 1) ? t1->strides[i1] : 0;
            b_bs[i] = (i2 >= 0 && t2->sizes[i2] != 1) ? t2->strides[i2] : 0;
            full[i] = bshape[i];
        }
        full[nb] = n;
        full[nb + 1] = p;
        pct_contiguous_strides(nb + 2, full, cst);
        for (int i = 0; i < nb; i++) c_bs[i] = cst[i];
        const int64_t ars = d1 > 1 ? t1->strides[d1 - 2] : 0, acs = t1->strides[d1 - 1];
        const int64_t brs = d2 > 1 ? t2->strides[d2 - 2] : t2->strides[0], bcs = d2 > 1 ? t2->strides[d2 - 1] : 0;
        coef alpha = coef_from_double(1.0, dtype), beta = coef_from_double(0.0, dtype);
        if (pct_la_run_gemm(target, c_bs, cst[nb], cst[nb + 1], t1, a_bs, ars, acs, t2, b_bs, brs, bcs, nb, bshape, n, p, m1,
                     alpha, beta) < 0)
            goto fail;
    }
done:
    if (target != result) {
        if (pct_copy_(result, target) < 0) goto fail;
        PCT_DECREF(target);
    }
    return (pct_object *)result;
fail:
    if (target != result) PCT_XDECREF(target);
    PCT_DECREF(result);
    return NULL;
}

pct_object *pct_matmul(pct_tensor *t1, pct_tensor *t2, pct_tensor *out)
{
    const int d1 = t1->ndim, d2 = t2->ndim;
    if (d1 == 0 || d2 == 0) {
        pct_error(PCT_ERR_RUNTIME, "both arguments to matmul need to be at least 1D, but they are %dD and %dD", d1,
                     d2);
        return NULL;
    }
    if (d1 == 1 && d2 == 1) return pct_la_dot(t1, t2, out);
    if (d1 == 2 && d2 == 1) return pct_la_mv(t1, t2, out);
    if (d1 == 1 && d2 == 2) {
        pct_tensor *u = pct_la_view_unsqueeze(t1, 0);
        if (!u) return NULL;
        pct_tensor *r = (pct_tensor *)pct_mm(u, t2, out);
        PCT_DECREF(u);
        if (!r) return NULL;
        /* squeeze_(0) of the [1, n] result, out= included */
        int64_t sz = r->sizes[1], st = r->strides[1];
        if (pct_tensor_set_shape(r, 1, &sz, &st) < 0) { PCT_DECREF(r); return NULL; }
        return (pct_object *)r;
    }
    if (d1 == 2 && d2 == 2) return pct_mm(t1, t2, out);
    if (should_fold(t1, t2, out != NULL)) return matmul_fold(t1, t2, out);
    return matmul_batched(t1, t2, out);
}

/* ---- kernel (ops_linalg.def) ---- */

#define T(i) (c->v[i].t)
#define OUT (c->inplace ? NULL : c->out)

pct_object *pct_cpu_matmul(pct_call *c) { return pct_matmul(T(0), T(1), c->out); }

#undef T
#undef OUT
