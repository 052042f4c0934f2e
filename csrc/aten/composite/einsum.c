/* einsum.c: torch.einsum (ATen's Linear.cpp), a composite: the equation is parsed into labels, each operand
 * brought to one label order (diagonal for a repeated label, unsqueeze for a missing one, permute), dims only one
 * operand has are summed early, and the operands contracted left to right in pairs (sumproduct_pair: permute,
 * reshape, bmm). An implicit composite: its gradient is that of the ops it calls, and grad_fn is the node of the last
 * one, as in torch (ViewBackward0 after a contraction, PermuteBackward0, a sum's, MulBackward0...).
 */
#include "composite.h"
#include <stdlib.h>

static inline int imin(int a, int b) { return a < b ? a : b; }

/* t.sum(dims where mask, keepdim=True): integral and bool sums are int64, as in torch */
static pct_tensor *sum_keepdim(pct_tensor *t, const bool *mask)
{
    int64_t dims[PCT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < t->ndim; d++)
        if (mask[d]) dims[n++] = d;
    return pct_comp_sum(t, n, dims, true, -1);
}

static pct_tensor *permute(pct_tensor *t, const int64_t *perm)
{
    return pct_comp_shape(PCT_OP_permute, t, t->ndim, perm);
}

/* t.diagonal(0, d0, d1).movedim(-1, d0): dims d0 < d1 become one, at d0 (the move a permute, as torch's movedim) */
static pct_tensor *diagonal_at(pct_tensor *t, int64_t d0, int64_t d1)
{
    pct_tensor *d = pct_comp_diagonal(t, 0, d0, d1);
    if (!d) return NULL;
    int64_t perm[PCT_MAX_DIMS];
    for (int i = 0, k = 0; i < d->ndim; i++) perm[i] = i == d0 ? d->ndim - 1 : k++;
    pct_tensor *r = permute(d, perm);
    PCT_DECREF(d);
    return r;
}

#define EIN_LETTERS 26
#define EIN_TOTAL 52
#define EIN_ELLIPSIS 52
#define EIN_MAX_LABELS (PCT_MAX_DIMS + 2)

static bool ein_isalpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int ein_sub(unsigned char c) { return c <= 'Z' ? c - 'A' : c - 'a' + EIN_LETTERS; }
static char ein_label(int s) { return (char)(s < EIN_LETTERS ? 'A' + s : 'a' + s - EIN_LETTERS); }

/* ATen's sumproduct_pair: (left * right).sum(sum_dims) through permute + bmm, keepdim. */
static pct_tensor *sumproduct_pair(pct_tensor *left_in, pct_tensor *right_in, const int64_t *sum_dims, int nsum)
{
    if (nsum == 0) return pct_comp_mul(left_in, right_in, NULL);
    const int dim = left_in->ndim;
    bool is_sum[PCT_MAX_DIMS] = {false};
    for (int i = 0; i < nsum; i++) is_sum[sum_dims[i]] = true;
    int64_t lro[PCT_MAX_DIMS], lo[PCT_MAX_DIMS], ro[PCT_MAX_DIMS];
    int nlro = 0, nlo = 0, nro = 0;
    int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
    pct_tensor *left = left_in, *right = right_in, *lv = NULL, *rv = NULL, *l3 = NULL, *r3 = NULL, *res = NULL,
               *result = NULL;
    PCT_INCREF(left);
    PCT_INCREF(right);
    for (int i = 0; i < dim; i++) {
        bool sl = left->sizes[i] != 1, sr = right->sizes[i] != 1;
        if (is_sum[i]) {
            if (sl && sr) {
                if (left->sizes[i] != right->sizes[i]) {
                    pct_error_str(PCT_ERR_RUNTIME, "non-broadcast dimensions must match");
                    goto fail;
                }
                sum_size *= left->sizes[i];
            } else if (sl || sr) {
                bool mask[PCT_MAX_DIMS] = {false};
                mask[i] = true;
                pct_tensor **t = sl ? &left : &right;
                pct_tensor *s = sum_keepdim(*t, mask);
                if (!s) goto fail;
                PCT_SETREF(*t, s);
            }
        } else if (sl && sr) {
            if (left->sizes[i] != right->sizes[i]) {
                pct_error_str(PCT_ERR_RUNTIME, "non-broadcast dimensions must match");
                goto fail;
            }
            lro[nlro++] = i;
            lro_size *= left->sizes[i];
        } else if (sl) {
            lo[nlo++] = i;
            lo_size *= left->sizes[i];
        } else {
            ro[nro++] = i;
            ro_size *= right->sizes[i];
        }
    }
    {
        int64_t out_size[PCT_MAX_DIMS], lperm[PCT_MAX_DIMS], rperm[PCT_MAX_DIMS], operm[PCT_MAX_DIMS];
        int no = 0, nl = 0, nr = 0;
        for (int i = 0; i < nlro; i++) out_size[no++] = left->sizes[lro[i]];
        for (int i = 0; i < nlo; i++) out_size[no++] = left->sizes[lo[i]];
        for (int i = 0; i < nsum; i++) out_size[no++] = 1;
        for (int i = 0; i < nro; i++) out_size[no++] = right->sizes[ro[i]];
        for (int i = 0; i < nlro; i++) { lperm[nl++] = lro[i]; rperm[nr++] = lro[i]; }
        for (int i = 0; i < nlo; i++) lperm[nl++] = lo[i];
        for (int i = 0; i < nsum; i++) lperm[nl++] = sum_dims[i];
        for (int i = 0; i < nro; i++) lperm[nl++] = ro[i];
        for (int i = 0; i < nsum; i++) rperm[nr++] = sum_dims[i];
        for (int i = 0; i < nro; i++) rperm[nr++] = ro[i];
        for (int i = 0; i < nlo; i++) rperm[nr++] = lo[i];
        int k = 0;
        for (int i = 0; i < nlro; i++) operm[lro[i]] = k++;
        for (int i = 0; i < nlo; i++) operm[lo[i]] = k++;
        for (int i = 0; i < nsum; i++) operm[sum_dims[i]] = k++;
        for (int i = 0; i < nro; i++) operm[ro[i]] = k++;
        const int64_t ls[3] = {lro_size, lo_size, sum_size}, rs[3] = {lro_size, sum_size, ro_size};
        if (!(lv = permute(left, lperm)) || !(rv = permute(right, rperm))) goto fail;
        if (!(l3 = pct_comp_shape(PCT_OP_reshape, lv, 3, ls))) goto fail;
        if (!(r3 = pct_comp_shape(PCT_OP_reshape, rv, 3, rs))) goto fail;
        if (!(res = pct_comp_call2(PCT_OP_bmm, l3, r3, NULL))) goto fail;
        PCT_SETREF(res, pct_comp_shape(PCT_OP_view, res, no, out_size));
        if (!res) goto fail;
        result = permute(res, operm);
    }
fail:
    PCT_XDECREF(left);
    PCT_XDECREF(right);
    PCT_XDECREF(lv);
    PCT_XDECREF(rv);
    PCT_XDECREF(l3);
    PCT_XDECREF(r3);
    PCT_XDECREF(res);
    return result;
}

static pct_object *einsum_op(const char *eq, pct_tensor *const *items, ptrdiff_t num_ops)
{
    const ptrdiff_t len = (ptrdiff_t)strlen(eq);
    if (num_ops == 0) {
        pct_error_str(PCT_ERR_RUNTIME, "einsum(): must provide at least one operand");
        return NULL;
    }
    uint8_t(*labels)[EIN_MAX_LABELS] = calloc((size_t)num_ops, sizeof *labels);
    int *nlab = calloc((size_t)num_ops, sizeof(int));
    pct_tensor **ops = calloc((size_t)num_ops, sizeof(pct_tensor *));
    pct_object *result = NULL;
    if (!labels || !nlab || !ops) { pct_error_nomem(); goto done; }

    const char *arrow = strstr(eq, "->");
    const ptrdiff_t lhs_len = arrow ? arrow - eq : len;
    {
        bool ell_in_input = false;
        ptrdiff_t curr = 0;
        for (ptrdiff_t i = 0; i < lhs_len; i++) {
            unsigned char c = (unsigned char)eq[i];
            if (c == ' ') continue;
            if (c == '.') {
                if (ell_in_input) {
                    pct_error(PCT_ERR_RUNTIME, "einsum(): found '.' for operand %zd for which an ellipsis was already found", curr);
                    goto done;
                }
                if (!(i + 2 < lhs_len && eq[++i] == '.' && eq[++i] == '.')) {
                    pct_error(PCT_ERR_RUNTIME, "einsum(): found '.' for operand %zd that is not part of any ellipsis", curr);
                    goto done;
                }
                if (nlab[curr] < EIN_MAX_LABELS) labels[curr][nlab[curr]] = EIN_ELLIPSIS;
                nlab[curr]++;
                ell_in_input = true;
            } else if (c == ',') {
                if (++curr >= num_ops) {
                    pct_error_str(PCT_ERR_RUNTIME, "einsum(): fewer operands were provided than specified in the equation");
                    goto done;
                }
                ell_in_input = false;
            } else {
                if (!ein_isalpha(c)) {
                    pct_error(PCT_ERR_RUNTIME,
                                 "einsum(): invalid subscript given at index %zd in the equation string, subscripts must be in [a-zA-Z]", i);
                    goto done;
                }
                if (nlab[curr] < EIN_MAX_LABELS) labels[curr][nlab[curr]] = (uint8_t)ein_sub(c);
                nlab[curr]++;
            }
        }
        if (curr != num_ops - 1) {
            pct_error_str(PCT_ERR_RUNTIME, "einsum(): more operands were provided than specified in the equation");
            goto done;
        }
    }

    int64_t label_count[EIN_TOTAL] = {0};
    int ell_num_dim = 0;
    for (ptrdiff_t i = 0; i < num_ops; i++) {
        const pct_tensor *t = (const pct_tensor *)items[i];
        int nlabels = nlab[i];
        bool has_ell = false;
        for (int j = 0; j < imin(nlab[i], EIN_MAX_LABELS); j++) {
            if (labels[i][j] == EIN_ELLIPSIS) {
                nlabels--;
                has_ell = true;
                if (t->ndim - nlabels > ell_num_dim) ell_num_dim = t->ndim - nlabels;
            } else {
                label_count[labels[i][j]]++;
            }
        }
        if (has_ell ? nlabels > t->ndim : nlabels != t->ndim) {
            if (has_ell)
                pct_error(PCT_ERR_RUNTIME,
                             "einsum(): the number of subscripts in the equation (%d) is more than the number of "
                             "dimensions (%d) for operand %zd", nlabels, t->ndim, i);
            else
                pct_error(PCT_ERR_RUNTIME,
                             "einsum(): the number of subscripts in the equation (%d) does not match the number of "
                             "dimensions (%d) for operand %zd and no ellipsis was given", nlabels, t->ndim, i);
            goto done;
        }
    }

    int label_perm_index[EIN_TOTAL];
    for (int l = 0; l < EIN_TOTAL; l++) label_perm_index[l] = -1;
    int perm_index = 0, ell_index = 0;
    bool ell_in_output = false;
    if (!arrow) {
        perm_index = ell_num_dim;
        ell_in_output = true;
        for (int l = 0; l < EIN_TOTAL; l++)
            if (label_count[l] == 1) label_perm_index[l] = perm_index++;
    } else {
        const char *rhs = arrow + 2;
        const ptrdiff_t rhs_len = len - lhs_len - 2;
        for (ptrdiff_t i = 0; i < rhs_len; i++) {
            unsigned char c = (unsigned char)rhs[i];
            if (c == ' ') continue;
            if (c == '.') {
                if (ell_in_output) {
                    pct_error_str(PCT_ERR_RUNTIME, "einsum(): found '.' for output but an ellipsis (...) was already found");
                    goto done;
                }
                if (!(i + 2 < rhs_len && rhs[++i] == '.' && rhs[++i] == '.')) {
                    pct_error_str(PCT_ERR_RUNTIME, "einsum(): found '.' for output that is not part of any ellipsis (...)");
                    goto done;
                }
                ell_index = perm_index;
                perm_index += ell_num_dim;
                ell_in_output = true;
            } else {
                if (!ein_isalpha(c)) {
                    pct_error(PCT_ERR_RUNTIME,
                                 "einsum(): invalid subscript given at index %zd in the equation string, subscripts must be in [a-zA-Z]",
                                 lhs_len + 2 + i);
                    goto done;
                }
                int idx = ein_sub(c);
                if (!(label_count[idx] > 0 && label_perm_index[idx] == -1)) {
                    pct_error(PCT_ERR_RUNTIME, "einsum(): output subscript %c%s", c,
                                 label_perm_index[idx] > -1 ? " appears more than once in the output"
                                                            : " does not appear in the equation for any input operand");
                    goto done;
                }
                label_perm_index[idx] = perm_index++;
            }
        }
    }
    const int out_num_dim = perm_index;
    if (!ell_in_output) {
        ell_index = perm_index;
        perm_index += ell_num_dim;
    }
    for (int l = 0; l < EIN_TOTAL; l++)
        if (label_count[l] > 0 && label_perm_index[l] == -1) label_perm_index[l] = perm_index++;
    if (perm_index > PCT_MAX_DIMS) {
        pct_error(PCT_ERR_RUNTIME, "einsum(): too many dimensions (%d; at most %d are supported)", perm_index, PCT_MAX_DIMS);
        goto done;
    }

    /* align every operand to perm_index dims: diagonals for repeated labels, size-1
     * dims for missing ones, then one permutation */
    int64_t label_size[EIN_TOTAL], ell_sizes[PCT_MAX_DIMS], dim_counts[PCT_MAX_DIMS] = {0};
    for (int l = 0; l < EIN_TOTAL; l++) label_size[l] = 1;
    for (int j = 0; j < ell_num_dim; j++) ell_sizes[j] = 1;
    for (ptrdiff_t i = 0; i < num_ops; i++) {
        pct_tensor *t = (pct_tensor *)items[i];
        int64_t perm[PCT_MAX_DIMS];
        int dim = 0;
        const int64_t *sz = t->sizes; /* the sizes of the operand as brought so far (ops[i]) */
        PCT_INCREF(t);
        ops[i] = t;
        for (int j = 0; j < perm_index; j++) perm[j] = -1;
        for (int j = 0; j < nlab[i]; j++) {
            const int s = labels[i][j];
            if (s == EIN_ELLIPSIS) {
                const int ndim = t->ndim - (nlab[i] - 1);
                for (int e = ell_num_dim - ndim; e < ell_num_dim; e++) {
                    if (sz[dim] != 1) {
                        if (!(ell_sizes[e] == 1 || ell_sizes[e] == sz[dim])) {
                            pct_error(PCT_ERR_RUNTIME,
                                         "einsum(): dimension %d covered by ellipsis in operand %zdhas size %lld which does "
                                         "not broadcast with previously seen ellipsis with size %lld for the respective dimension",
                                         dim, i, (long long)sz[dim], (long long)ell_sizes[e]);
                            goto done;
                        }
                        ell_sizes[e] = sz[dim];
                        dim_counts[ell_index + e]++;
                    }
                    perm[ell_index + e] = dim++;
                }
            } else if (perm[label_perm_index[s]] == -1) {
                if (sz[dim] != 1) {
                    if (!(label_size[s] == 1 || label_size[s] == sz[dim])) {
                        pct_error(PCT_ERR_RUNTIME,
                                     "einsum(): subscript %c has size %lld for operand %zd which does not broadcast with "
                                     "previously seen size %lld", ein_label(s), (long long)sz[dim], i, (long long)label_size[s]);
                        goto done;
                    }
                    label_size[s] = sz[dim];
                    dim_counts[label_perm_index[s]]++;
                }
                perm[label_perm_index[s]] = dim++;
            } else {
                /* repeated label: the diagonal of dims prev and dim, moved to prev (dim is gone) */
                const int64_t prev = perm[label_perm_index[s]];
                if (sz[dim] != sz[prev]) {
                    pct_error(PCT_ERR_RUNTIME,
                                 "einsum(): subscript %c is repeated for operand %zd but the sizes don't match, %lld != %lld",
                                 ein_label(s), i, (long long)sz[dim], (long long)sz[prev]);
                    goto done;
                }
                pct_tensor *diag = diagonal_at(ops[i], prev, dim);
                PCT_SETREF(ops[i], diag);
                if (!ops[i]) goto done;
                sz = ops[i]->sizes;
            }
        }
        for (int j = 0; j < perm_index; j++) {
            if (perm[j] == -1) { /* unsqueeze at the end */
                pct_tensor *u = pct_comp_unsqueeze(ops[i], -1);
                PCT_SETREF(ops[i], u);
                if (!ops[i]) goto done;
                perm[j] = dim++;
            }
        }
        PCT_SETREF(ops[i], permute(ops[i], perm));
        if (!ops[i]) goto done;
    }

    /* contract left to right */
    ptrdiff_t nops = num_ops;
    while (nops > 1) {
        pct_tensor *a = ops[0], *b = ops[1];
        for (ptrdiff_t q = 2; q < nops; q++) ops[q - 2] = ops[q];
        ops[nops - 2] = ops[nops - 1] = NULL;
        nops -= 2;
        int64_t sum_dims[PCT_MAX_DIMS];
        int nsum = 0;
        bool amask[PCT_MAX_DIMS] = {false}, bmask[PCT_MAX_DIMS] = {false}, asum = false, bsum = false;
        for (int d = out_num_dim; d < perm_index; d++) {
            if (a->sizes[d] != 1 && b->sizes[d] != 1) {
                if (--dim_counts[d] == 1) {
                    sum_dims[nsum++] = d;
                    dim_counts[d] = 0;
                }
            } else if (dim_counts[d] == 1) {
                if (a->sizes[d] != 1) { amask[d] = asum = true; dim_counts[d] = 0; }
                else if (b->sizes[d] != 1) { bmask[d] = bsum = true; dim_counts[d] = 0; }
            }
        }
        pct_tensor *r = NULL;
        if (asum) { pct_tensor *s = sum_keepdim(a, amask); PCT_SETREF(a, s); }
        if (a && bsum) { pct_tensor *s = sum_keepdim(b, bmask); PCT_SETREF(b, s); }
        if (a && b) r = sumproduct_pair(a, b, sum_dims, nsum);
        PCT_XDECREF(a);
        PCT_XDECREF(b);
        if (!r) goto done;
        for (ptrdiff_t q = nops; q > 0; q--) ops[q] = ops[q - 1];
        ops[0] = r;
        nops++;
    }

    if (perm_index - out_num_dim > 0) {
        if (num_ops > 1) { /* the contracted dims are all 1 now: a view without them */
            result = (pct_object *)pct_comp_shape(PCT_OP_view, ops[0], out_num_dim, ops[0]->sizes);
        } else {
            int64_t dims[PCT_MAX_DIMS];
            for (int d = out_num_dim; d < perm_index; d++) dims[d - out_num_dim] = d;
            result = (pct_object *)pct_comp_sum(ops[0], perm_index - out_num_dim, dims, false, -1);
        }
    } else {
        result = (pct_object *)ops[0];
        ops[0] = NULL;
    }
done:
    if (ops)
        for (ptrdiff_t i = 0; i < num_ops; i++) PCT_XDECREF(ops[i]);
    free(ops);
    free(labels);
    free(nlab);
    return result;
}

/* ---- composite (ops_linalg.def) ---- */

pct_object *pct_composite_einsum(pct_call *c)
{
    PCT_ARGS(einsum);
    return einsum_op(arg.equation, arg.tensors.items, arg.tensors.n);
}
