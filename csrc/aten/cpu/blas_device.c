/* blas_device.c: the tensor-level GEMM of the product ops on a device other than the CPU (Note [Device GEMM] in
 * gemm.h): operands packed where no BLAS takes their strides, the output computed aside where it overlaps an input or
 * has no BLAS layout, then one pct_gemm_call to the backend.
 *
 * Ownership: the packed copies and the temporary output are owned here and released before returning.
 */
#include "blas_internal.h"
#include "../backend.h"
#include "../error.h"
#include "../gemm.h"
#include "../iter.h"

/* A contiguous copy on t's device of the [batch..., rows, cols] view of t given by these strides; the strides are
 * updated to the copy's. NULL with an error. */
static pct_tensor *packed_copy(pct_tensor *t, int nb, const int64_t *bsize, int64_t *bs, int64_t rows, int64_t cols,
                               int64_t *rs, int64_t *cs)
{
    int64_t shape[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    for (int d = 0; d < nb; d++) { shape[d] = bsize[d]; st[d] = bs[d]; }
    shape[nb] = rows; shape[nb + 1] = cols;
    st[nb] = *rs; st[nb + 1] = *cs;
    pct_tensor *view = pct_tensor_view_of(t, nb + 2, shape, st, t->offset);
    pct_tensor *copy = view ? pct_tensor_empty(nb + 2, shape, t->dtype, t->device_type, t->device_index) : NULL;
    if (copy && pct_copy_(copy, view) < 0) { PCT_DECREF(copy); copy = NULL; }
    PCT_XDECREF(view);
    if (!copy) return NULL;
    for (int d = 0; d < nb; d++) bs[d] = bsize[d] == 1 ? 0 : copy->strides[d];
    *rs = copy->strides[nb];
    *cs = copy->strides[nb + 1];
    return copy;
}

static bool has_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    bool trans;
    int64_t ld;
    return pct_gemm_layout(rows, cols, rs, cs, &trans, &ld);
}

int pct_la_device_gemm(pct_tensor *c, const int64_t *c_bs, int64_t crs, int64_t ccs,
                       pct_tensor *a, const int64_t *a_bs, int64_t ars, int64_t acs,
                       pct_tensor *b, const int64_t *b_bs, int64_t brs, int64_t bcs,
                       int nb, const int64_t *bsize, int64_t m, int64_t n, int64_t k, coef alpha, coef beta)
{
    const pct_backend *backend = pct_backend_of(c->device_type);
    if (!backend) return -1;
    if (!backend->gemm) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "matrix products are not implemented on the '%s' device",
                  pct_device_type_name(c->device_type));
        return -1;
    }
    pct_gemm_call g = {.dtype = c->dtype, .device_index = c->device_index, .nb = nb, .m = m, .n = n, .k = k,
                       .alpha = alpha.d, .beta = beta.d, .beta_zero = beta.zero,
                       .ars = ars, .acs = acs, .brs = brs, .bcs = bcs, .crs = crs, .ccs = ccs};
    for (int d = 0; d < nb; d++) {
        g.bsize[d] = bsize[d];
        g.a_bs[d] = a_bs[d];
        g.b_bs[d] = b_bs[d];
        g.c_bs[d] = c_bs[d];
    }
    pct_tensor *a_packed = NULL, *b_packed = NULL, *c_view = NULL, *c_tmp = NULL;
    int rc = -1;
    if (!has_layout(m, k, ars, acs) &&
        !(a = a_packed = packed_copy(a, nb, bsize, g.a_bs, m, k, &g.ars, &g.acs)))
        goto done;
    if (!has_layout(k, n, brs, bcs) &&
        !(b = b_packed = packed_copy(b, nb, bsize, g.b_bs, k, n, &g.brs, &g.bcs)))
        goto done;
    bool c_aside = c->storage == a->storage || c->storage == b->storage || !has_layout(m, n, crs, ccs);
    for (int d = 0; d < nb; d++) c_aside |= bsize[d] > 1 && c_bs[d] == 0; /* an expanded out= */
    if (c_aside) {
        /* the product goes into a contiguous temporary (holding C's old values when beta counts) */
        int64_t shape[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
        for (int d = 0; d < nb; d++) { shape[d] = bsize[d]; st[d] = c_bs[d]; }
        shape[nb] = m; shape[nb + 1] = n;
        st[nb] = crs; st[nb + 1] = ccs;
        if (!(c_view = pct_tensor_view_of(c, nb + 2, shape, st, c->offset))) goto done;
        if (!(c_tmp = pct_tensor_empty(nb + 2, shape, c->dtype, c->device_type, c->device_index))) goto done;
        if (!beta.zero && pct_copy_(c_tmp, c_view) < 0) goto done;
        for (int d = 0; d < nb; d++) g.c_bs[d] = c_tmp->strides[d];
        g.crs = c_tmp->strides[nb];
        g.ccs = c_tmp->strides[nb + 1];
    }
    g.a = pct_tensor_data(a);
    g.b = pct_tensor_data(b);
    g.c = pct_tensor_data(c_tmp ? c_tmp : c);
    if (backend->gemm(&g) < 0) goto done;
    rc = c_tmp ? pct_copy_(c_view, c_tmp) : 0;
    if (rc == 0) pct_tensor_bump_version(c);
done:
    PCT_XDECREF(a_packed);
    PCT_XDECREF(b_packed);
    PCT_XDECREF(c_view);
    PCT_XDECREF(c_tmp);
    return rc;
}
