/* embedding.c: embedding lookup (torch's embedding: rows of a (num_weights, D) table picked by
 * an index tensor of any shape), its dense backward (embedding_dense_backward: the gradient
 * rows added into a weight-shaped zero tensor) and embedding_renorm_ (max_norm).
 *
 * Note [Race-free embedding backward]: threads own disjoint ranges of weight rows. Each thread
 * zeroes its own rows, then walks all indices and adds only the gradient rows whose index falls
 * in its range, so no two threads ever write one row and repeated indices accumulate in index
 * order, as torch's serial index_add does. */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "norm_rows.h"
#include "../backend.h"
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#define EMB_TID() omp_get_thread_num()
#define EMB_NTH() omp_get_num_threads()
#else
#define EMB_TID() 0
#define EMB_NTH() 1
#endif

/* Note [Device embedding]: the lookup and the dense backward are device-neutral up to their loops: the checks (a
 * device's indices are copied to the host for the bounds check, and for the backward's grouping of positions by row),
 * the results on the device, the conversions; on a device other than the CPU the loops are that backend's embedding,
 * handed a pct_embedding_call (embedding_call.h). */
int pct_embedding_on_device(const pct_embedding_call *call, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return -1;
    if (!b->embedding) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "embedding is not implemented on the '%s' device",
                  pct_device_type_name(device_type));
        return -1;
    }
    return b->embedding(call);
}

/* t (on another device) copied to the CPU, or t itself there; a new reference or NULL */
static pct_tensor *on_host(pct_tensor *t)
{
    if (t->device_type == PCT_CPU) { PCT_INCREF(t); return t; }
    pct_tensor *h = pct_tensor_empty(t->ndim, t->sizes, t->dtype, PCT_CPU, -1);
    if (h && pct_copy_(h, t) < 0) PCT_CLEAR(h);
    return h;
}

/* a CPU int64 array of n values as a new tensor on dev's device; NULL with an error */
static pct_tensor *to_device_of(const int64_t *v, int64_t n, const pct_tensor *dev)
{
    pct_tensor *h = pct_tensor_empty(1, &n, PCT_INT64, PCT_CPU, -1);
    pct_tensor *d = h ? pct_tensor_empty(1, &n, PCT_INT64, dev->device_type, dev->device_index) : NULL;
    if (d) {
        if (n) memcpy(pct_tensor_data(h), v, sizeof(int64_t) * (size_t)n);
        if (pct_copy_(d, h) < 0) PCT_CLEAR(d);
    }
    PCT_XDECREF(h);
    return d;
}

/* Indices (int32 or int64) as a contiguous int64 tensor, all in [0, n); -1 with torch's errors. */
static pct_tensor *checked_indices(pct_tensor *indices, int64_t n, const char *fn)
{
    if (indices->dtype != PCT_INT64 && indices->dtype != PCT_INT32) {
        /* torch names a dtype without a legacy tensor class (uint16/32/64) by its type object, CPUUInt16Type */
        pct_error(PCT_ERR_RUNTIME, "Expected tensor for argument #1 'indices' to have one of the following scalar "
                     "types: Long, Int; but got %s%s%s instead (while checking arguments for %s)",
                     pct_dtype_is_barebones(indices->dtype) ? "CPU" : "torch.", pct_dtype_cpp_name[indices->dtype],
                     pct_dtype_is_barebones(indices->dtype) ? "Type" : "Tensor", fn);
        return NULL;
    }
    pct_tensor *idx = NULL, *c = pct_to_dtype(indices, PCT_INT64, false);
    if (!c) return NULL;
    idx = pct_contiguous(c);
    PCT_DECREF(c);
    if (!idx) return NULL;
    pct_tensor *host = on_host(idx);
    if (!host) { PCT_DECREF(idx); return NULL; }
    const int64_t *p = (const int64_t *)pct_tensor_data(host);
    int64_t k = idx->numel;
    int bad = 0;
    _Pragma("omp parallel for reduction(|:bad) if (k > 65536)")
    for (int64_t i = 0; i < k; i++) bad |= p[i] < 0 || p[i] >= n;
    PCT_DECREF(host);
    if (bad) {
        PCT_DECREF(idx);
        pct_error_str(PCT_ERR_INDEX, "index out of range in self");
        return NULL;
    }
    return idx;
}

pct_object *pct_cpu_embedding(pct_call *c)
{
    PCT_ARGS(embedding);
    pct_tensor *weight = arg.weight, *indices = arg.indices, *idx = NULL, *out = NULL;
    if (weight->ndim != 2) {
        pct_error_str(PCT_ERR_RUNTIME, "'weight' must be 2-D");
        return NULL;
    }
    if (indices->ndim + 1 > PCT_MAX_DIMS) {
        pct_error(PCT_ERR_RUNTIME, "embedding: indices have too many dimensions (%d)", indices->ndim);
        return NULL;
    }
    int64_t V = weight->sizes[0], D = weight->sizes[1], shape[PCT_MAX_DIMS];
    PCT_TRY(idx = checked_indices(indices, V, "embedding"));
    memcpy(shape, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim);
    shape[indices->ndim] = D;
    PCT_TRY(out = pct_tensor_empty(indices->ndim + 1, shape, weight->dtype, weight->device_type, weight->device_index));
    if (weight->device_type != PCT_CPU) { /* Note [Device embedding] */
        const pct_embedding_call call = {.dtype = weight->dtype, .device_index = weight->device_index, .k = idx->numel,
                                         .D = D, .V = V, .index = (const int64_t *)pct_tensor_data(idx),
                                         .weight = pct_tensor_data(weight), .ws0 = weight->strides[0],
                                         .ws1 = weight->strides[1], .out = pct_tensor_data(out)};
        if (out->numel && pct_embedding_on_device(&call, weight->device_type) < 0) goto fail;
    } else if (out->numel) {
        const int64_t *ip = (const int64_t *)pct_tensor_data(idx);
        int64_t k = idx->numel, isz = pct_dtype_itemsize[weight->dtype];
        int64_t rs = weight->strides[0] * isz, cs = weight->strides[1] * isz;
        const char *wd = pct_tensor_data(weight);
        char *od = pct_tensor_data(out);
        int nth = pct_norm_threads(k * D, k);
        PCT_NOGIL_BEGIN
        _Pragma("omp parallel for num_threads(nth) if (nth > 1) schedule(static)")
        for (int64_t i = 0; i < k; i++) {
            const char *src = wd + ip[i] * rs;
            char *dst = od + i * D * isz;
            if (cs == isz) {
                memcpy(dst, src, (size_t)(D * isz));
            } else {
                for (int64_t j = 0; j < D; j++) memcpy(dst + j * isz, src + j * cs, (size_t)isz);
            }
        }
        PCT_NOGIL_END
    }
    PCT_DECREF(idx);
    return (pct_object *)out;
fail:
    PCT_XDECREF(idx);
    PCT_XDECREF(out);
    return NULL;
}

/* out rows [r0, r1) of the accumulation: see Note [Race-free embedding backward]. */
#define EMB_ACC(T)                                                                                   \
    static void emb_acc_##T(const T *g, const int64_t *ip, int64_t k, int64_t D, T *o, int64_t r0,   \
                            int64_t r1, int64_t pad, const int64_t *counts)                          \
    {                                                                                                \
        memset(o + r0 * D, 0, sizeof(T) * (size_t)((r1 - r0) * D));                                 \
        for (int64_t i = 0; i < k; i++) {                                                            \
            int64_t r = ip[i];                                                                       \
            if (r < r0 || r >= r1 || r == pad) continue;                                             \
            T *dst = o + r * D;                                                                      \
            const T *src = g + i * D;                                                                \
            if (counts) {                                                                            \
                T s = (T)1 / (T)counts[r];                                                           \
                _Pragma("omp simd")                                                                  \
                for (int64_t j = 0; j < D; j++) dst[j] += src[j] * s;                                \
            } else {                                                                                 \
                _Pragma("omp simd")                                                                  \
                for (int64_t j = 0; j < D; j++) dst[j] += src[j];                                    \
            }                                                                                        \
        }                                                                                            \
    }
EMB_ACC(float)
EMB_ACC(double)

/* The dense backward on another device: the positions of each weight row in index order (a counting sort of a host
 * copy of the indices), uploaded, then the backend's loops. 0, or -1 with an error. */
static int device_backward(pct_tensor *idx, pct_tensor *g, pct_tensor *out, int64_t V, int64_t D, int64_t pad,
                           bool by_freq)
{
    int rc = -1;
    pct_tensor *host = on_host(idx), *order = NULL, *starts = NULL;
    const int64_t k = idx->numel;
    int64_t *start = calloc((size_t)V + 2, sizeof(int64_t)), *pos = malloc(sizeof(int64_t) * (size_t)(k ? k : 1));
    if (!host || !start || !pos) { if (host) pct_error_nomem(); goto done; }
    const int64_t *ip = (const int64_t *)pct_tensor_data(host);
    for (int64_t i = 0; i < k; i++) start[ip[i] + 1]++;
    for (int64_t r = 0; r < V; r++) start[r + 1] += start[r];
    for (int64_t i = 0; i < k; i++) pos[start[ip[i]]++] = i; /* stable: index order within a row */
    for (int64_t r = V; r > 0; r--) start[r] = start[r - 1]; /* back to the rows' first positions */
    start[0] = 0;
    if (!(order = to_device_of(pos, k, out)) || !(starts = to_device_of(start, V + 1, out))) goto done;
    const pct_embedding_call call = {.dtype = out->dtype, .device_index = out->device_index, .backward = true, .k = k,
                                     .D = D, .V = V, .grad = pct_tensor_data(g),
                                     .order = (const int64_t *)pct_tensor_data(order),
                                     .row_start = (const int64_t *)pct_tensor_data(starts),
                                     .padding_idx = pad, .by_freq = by_freq, .out = pct_tensor_data(out)};
    rc = V * D == 0 ? 0 : pct_embedding_on_device(&call, out->device_type);
done:
    free(start);
    free(pos);
    PCT_XDECREF(host);
    PCT_XDECREF(order);
    PCT_XDECREF(starts);
    return rc;
}

pct_object *pct_cpu_embedding_dense_backward(pct_call *c)
{
    PCT_ARGS(embedding_dense_backward);
    char s1[PCT_SHAPE_BUF], s2[PCT_SHAPE_BUF];
    pct_tensor *grad = arg.grad_output, *indices = arg.indices, *idx = NULL, *g = NULL, *out = NULL;
    int64_t V = arg.num_weights, pad = arg.padding_idx;
    bool by_freq = arg.scale_grad_by_freq;
    int64_t *counts = NULL;
    if (V < 0) {
        pct_error(PCT_ERR_RUNTIME, "embedding_dense_backward: num_weights must be non-negative, got %lld", (long long)V);
        return NULL;
    }
    if (!pct_dtype_is_floating(grad->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "embedding_dense_backward: expected a floating point grad_output, got %s",
                     pct_dtype_cpp_name[grad->dtype]);
        return NULL;
    }
    if (grad->ndim != indices->ndim + 1 ||
        memcmp(grad->sizes, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim) != 0) {
        pct_error(PCT_ERR_RUNTIME, "embedding_dense_backward: grad_output of shape %s does not match indices of "
                     "shape %s (expected the indices' shape plus the embedding dim)",
                     pct_shape_str(s1, sizeof s1, grad->ndim, grad->sizes),
                     pct_shape_str(s2, sizeof s2, indices->ndim, indices->sizes));
        return NULL;
    }
    int64_t D = grad->sizes[grad->ndim - 1], shape[2] = {V, D};
    int cdt = grad->dtype == PCT_FLOAT64 ? PCT_FLOAT64 : PCT_FLOAT32;
    PCT_TRY(idx = checked_indices(indices, V, "embedding_backward"));
    PCT_TRY_INT(pct_norm_as_contig(grad, cdt, &g));
    PCT_TRY(out = pct_tensor_empty(2, shape, cdt, grad->device_type, grad->device_index));
    if (grad->device_type != PCT_CPU) { /* Note [Device embedding]: positions grouped by row on the host */
        if (device_backward(idx, g, out, V, D, pad, by_freq) < 0) goto fail;
    } else {
        const int64_t *ip = (const int64_t *)pct_tensor_data(idx);
        int64_t k = idx->numel;
        if (by_freq) {
            counts = calloc((size_t)(V ? V : 1), sizeof(int64_t));
            if (!counts) { pct_error_nomem(); goto fail; }
            for (int64_t i = 0; i < k; i++) counts[ip[i]]++;
        }
        const void *gd = pct_tensor_data(g);
        void *od = pct_tensor_data(out);
        int nth = pct_norm_threads(V * D + k * D, V);
        PCT_NOGIL_BEGIN
        _Pragma("omp parallel num_threads(nth) if (nth > 1)")
        {
            int t = EMB_TID(), nt = EMB_NTH();
            int64_t r0 = V * t / nt, r1 = V * (t + 1) / nt;
            if (cdt == PCT_FLOAT64) emb_acc_double(gd, ip, k, D, od, r0, r1, pad, counts);
            else emb_acc_float(gd, ip, k, D, od, r0, r1, pad, counts);
        }
        PCT_NOGIL_END
    }
    free(counts);
    counts = NULL;
    PCT_CLEAR(idx);
    PCT_CLEAR(g);
    if (out->dtype != grad->dtype) {
        pct_tensor *r = pct_to_dtype(out, grad->dtype, false);
        PCT_SETREF(out, r);
    }
    return (pct_object *)out;
fail:
    free(counts);
    PCT_XDECREF(idx);
    PCT_XDECREF(g);
    PCT_XDECREF(out);
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* |element| as a double: the modulus of a complex one, as torch's norm takes it */
static double magnitude(const char *p, int dtype)
{
    if (!pct_dtype_is_complex(dtype)) return fabs(pct_load_as_double(p, dtype));
    double re, im;
    pct_load_as_complex(p, dtype, &re, &im);
    return hypot(re, im);
}

/* The norm_type norm of one row (D elements, byte stride cs). */
static double row_norm(const char *row, int64_t D, int64_t cs, int dtype, double p)
{
    double acc = 0;
    for (int64_t j = 0; j < D; j++) {
        double v = magnitude(row + j * cs, dtype);
        if (isinf(p)) acc = p > 0 ? (j == 0 || v > acc ? v : acc) : (j == 0 || v < acc ? v : acc);
        else if (p == 0) acc += v != 0;
        else if (p == 1) acc += v;
        else if (p == 2) acc += v * v;
        else acc += pow(v, p);
    }
    if (isinf(p) || p == 0 || p == 1) return acc;
    if (p == 2) return sqrt(acc);
    return pow(acc, 1.0 / p);
}

pct_object *pct_cpu_embedding_renorm_(pct_call *c)
{
    PCT_ARGS(embedding_renorm_);
    pct_tensor *weight = arg.input, *idx = NULL;
    double max_norm = arg.max_norm, p = arg.norm_type;
    int64_t *sorted = NULL;
    if (weight->ndim != 2) {
        pct_error_str(PCT_ERR_RUNTIME, "embedding_renorm_: 'weight' must be 2-D");
        return NULL;
    }
    /* torch visits the unique indices in ascending order, selecting each row (an IndexError past the
     * end) and then taking its norm (an error for integral weights): which comes first depends on the
     * smallest index */
    const pct_tensor *raw = arg.indices;
    const bool numeric = pct_dtype_is_floating(weight->dtype) || pct_dtype_is_complex(weight->dtype);
    if (!numeric && raw->numel > 0 && (raw->dtype == PCT_INT64 || raw->dtype == PCT_INT32)) {
        pct_tensor *flat = pct_contiguous((pct_tensor *)raw);
        if (!flat) return NULL;
        int64_t lo = INT64_MAX;
        for (int64_t i = 0; i < flat->numel; i++) {
            int64_t v = raw->dtype == PCT_INT64 ? ((const int64_t *)pct_tensor_data(flat))[i]
                                                : ((const int32_t *)pct_tensor_data(flat))[i];
            if (v < lo) lo = v;
        }
        PCT_DECREF(flat);
        if (lo >= -weight->sizes[0] && lo < weight->sizes[0]) {
            pct_error(PCT_ERR_RUNTIME, "norm(): input dtype should be either floating point or complex. "
                         "Got %s instead.", pct_dtype_cpp_name[weight->dtype]);
            return NULL;
        }
    }
    PCT_TRY(idx = checked_indices(arg.indices, weight->sizes[0], "embedding_renorm_"));
    int64_t k = idx->numel, D = weight->sizes[1], isz = pct_dtype_itemsize[weight->dtype];
    if (k > 0 && !numeric) { /* torch fails in the row norm, so only with rows */
        pct_error(PCT_ERR_RUNTIME, "norm(): input dtype should be either floating point or complex. "
                     "Got %s instead.", pct_dtype_cpp_name[weight->dtype]);
        goto fail;
    }
    int64_t rs = weight->strides[0] * isz, cs = weight->strides[1] * isz;
    sorted = malloc(sizeof(int64_t) * (size_t)(k ? k : 1));
    if (!sorted) { pct_error_nomem(); goto fail; }
    memcpy(sorted, pct_tensor_data(idx), sizeof(int64_t) * (size_t)k);
    qsort(sorted, (size_t)k, sizeof(int64_t), cmp_i64);
    char *wd = pct_tensor_data(weight);
    for (int64_t i = 0; i < k; i++) {
        if (i > 0 && sorted[i] == sorted[i - 1]) continue; /* each row once */
        char *row = wd + sorted[i] * rs;
        double norm = row_norm(row, D, cs, weight->dtype, p);
        if (norm > max_norm) {
            double scale = max_norm / (norm + 1e-7);
            for (int64_t j = 0; j < D; j++) {
                char *e = row + j * cs;
                if (pct_dtype_is_complex(weight->dtype)) { /* torch's product by scale + 0i (-0 parts become 0) */
                    double re, im;
                    pct_load_as_complex(e, weight->dtype, &re, &im);
                    pct_store_complex(e, weight->dtype, re * scale - im * 0.0, re * 0.0 + im * scale);
                } else {
                    pct_store_double(e, weight->dtype, pct_load_as_double(e, weight->dtype) * scale);
                }
            }
        }
    }
    free(sorted);
    PCT_DECREF(idx);
    pct_tensor_bump_version(weight);
    PCT_INCREF(weight);
    return (pct_object *)weight;
fail:
    free(sorted);
    PCT_XDECREF(idx);
    return NULL;
}
