/* op_calls.c: the op calls composites are written with (composite.h): a pct_call filled for the op's schema, called
 * by id through the dispatcher's composite caller (Note [Composite ops], op.h). */
#include "composite.h"

static pct_tensor *call(pct_call *c) { return (pct_tensor *)pct_composite_call(c); }

static void set_tensor(pct_call *c, int i, pct_tensor *t)
{
    c->v[i].none = 0;
    c->v[i].t = t;
}

static void set_int(pct_call *c, int i, int64_t v)
{
    c->v[i].none = 0;
    c->v[i].i = v;
}

static void set_list(pct_call *c, int i, int n, const int64_t *list)
{
    c->v[i].none = 0;
    c->v[i].n = n;
    if (n > 0) memcpy(c->v[i].list, list, sizeof(int64_t) * (size_t)n);
}

void pct_comp_set_out(pct_call *c, pct_tensor *out)
{
    const int at = c->op->sig.out_index;
    if (!out || at < 0) return;
    set_tensor(c, at, out);
    c->out = out;
}

pct_tensor *pct_comp_call1(int op, pct_tensor *a)
{
    pct_call c;
    pct_call_init(&c, op);
    set_tensor(&c, 0, a);
    return call(&c);
}

pct_tensor *pct_comp_call2(int op, pct_tensor *a, pct_tensor *b, pct_tensor *out)
{
    pct_call c;
    pct_call_init(&c, op);
    set_tensor(&c, 0, a);
    set_tensor(&c, 1, b);
    pct_comp_set_out(&c, out);
    return call(&c);
}

pct_tensor *pct_comp_shape(int op, pct_tensor *a, int n, const int64_t *list)
{
    pct_call c;
    pct_call_init(&c, op);
    set_tensor(&c, 0, a);
    set_list(&c, 1, n, list);
    return call(&c);
}

/* op(a, ints[0], ..., ints[n - 1]) for the ops whose parameters after a are n ints */
static pct_tensor *call_ints(int op, pct_tensor *a, int n, const int64_t *ints)
{
    pct_call c;
    pct_call_init(&c, op);
    set_tensor(&c, 0, a);
    for (int i = 0; i < n; i++) set_int(&c, 1 + i, ints[i]);
    return call(&c);
}

pct_tensor *pct_comp_unsqueeze(pct_tensor *a, int64_t dim) { return call_ints(PCT_OP_unsqueeze, a, 1, &dim); }

pct_tensor *pct_comp_transpose(pct_tensor *a, int64_t dim0, int64_t dim1)
{
    return call_ints(PCT_OP_transpose, a, 2, (const int64_t[]){dim0, dim1});
}

pct_tensor *pct_comp_diagonal(pct_tensor *a, int64_t offset, int64_t dim1, int64_t dim2)
{
    return call_ints(PCT_OP_diagonal, a, 3, (const int64_t[]){offset, dim1, dim2});
}

pct_tensor *pct_comp_contiguous_clone(pct_tensor *a)
{
    pct_call c;
    pct_call_init(&c, PCT_OP_clone);
    set_tensor(&c, 0, a);
    c.v[1].none = 0;
    c.v[1].code = PCT_MF_CONTIGUOUS;
    return call(&c);
}

pct_tensor *pct_comp_mT(pct_tensor *a) { return pct_comp_transpose(a, -2, -1); }

pct_tensor *pct_comp_squeeze_(pct_tensor *a, int64_t dim)
{
    pct_call c;
    pct_call_init(&c, PCT_OP_squeeze);
    set_tensor(&c, 0, a);
    set_list(&c, 1, 1, &dim);
    c.inplace = true;
    c.out = a;
    return call(&c);
}

pct_tensor *pct_comp_sum(pct_tensor *a, int n, const int64_t *dims, bool keepdim, int dtype)
{
    pct_call c;
    pct_call_init(&c, PCT_OP_sum);
    set_tensor(&c, 0, a);
    if (n > 0) set_list(&c, 1, n, dims);
    c.v[2].none = 0;
    c.v[2].b = keepdim;
    if (dtype >= 0) {
        c.v[3].none = 0;
        c.v[3].dtype = dtype;
    }
    return call(&c);
}

pct_tensor *pct_comp_reduce_dim(int op, pct_tensor *a, int64_t dim, bool keepdim)
{
    pct_call c;
    pct_call_init(&c, op);
    set_tensor(&c, 0, a);
    set_list(&c, 1, 1, &dim);
    c.v[2].none = 0;
    c.v[2].b = keepdim;
    return call(&c);
}

/* linalg_vector_norm and linalg_matrix_norm (str ord): ord (slot 1) as given, then dim, keepdim, dtype, out. */
static pct_tensor *call_norm(int op, pct_tensor *a, const pct_value *ord, int n, const int64_t *dims, bool keepdim,
                             int dtype, pct_tensor *out)
{
    pct_call c;
    pct_call_init(&c, op);
    set_tensor(&c, 0, a);
    c.v[1] = *ord;
    if (dims) set_list(&c, 2, n, dims);
    c.v[3].none = 0;
    c.v[3].b = keepdim;
    if (dtype >= 0) {
        c.v[4].none = 0;
        c.v[4].dtype = dtype;
    }
    pct_comp_set_out(&c, out);
    return call(&c);
}

pct_tensor *pct_comp_vector_norm(pct_tensor *a, const pct_scalar *ord, int n, const int64_t *dims, bool keepdim,
                                 int dtype, pct_tensor *out)
{
    const pct_value v = {.none = 0, .s = *ord};
    return call_norm(PCT_OP_linalg_vector_norm, a, &v, n, dims, keepdim, dtype, out);
}

pct_tensor *pct_comp_matrix_norm_str(pct_tensor *a, const char *ord, int n, const int64_t *dims, bool keepdim,
                                     int dtype, pct_tensor *out)
{
    const pct_value v = {.none = 0, .str = ord}; /* the text alone, as a string default is: kernels read str */
    return call_norm(PCT_OP_linalg_matrix_norm_str, a, &v, n, dims, keepdim, dtype, out);
}

pct_tensor *pct_comp_to_dtype(pct_tensor *a, int dtype)
{
    pct_call c;
    pct_call_init(&c, PCT_OP_to_dtype);
    set_tensor(&c, 0, a);
    c.v[1].none = 0;
    c.v[1].dtype = dtype;
    return call(&c);
}

int pct_comp_copy_(pct_tensor *out, pct_tensor *src)
{
    pct_tensor *r = pct_comp_call2(PCT_OP_copy_, out, src, NULL);
    if (!r) return -1;
    PCT_DECREF(r);
    return 0;
}
