/* index_loop_impl.h: ix_loop_<N>, the index loop of one dtype (Note [Index loops] in index.c),
 * included by index_common.c once per dtype through dtype_foreach.h (PCT_TPL_E/N/T/C), the way
 * NumPy's .c.src loops are expanded. Each op's walk is index_each_impl.h with its IX_BODY. No
 * include guard: by design. */
#define IX_CAT_(a, b) a##b
#define IX_CAT(a, b) IX_CAT_(a, b)
#define IX_TO_C IX_CAT(PCT_TO_COMPUTE_, PCT_TPL_E)
#define IX_FROM_C IX_CAT(PCT_FROM_COMPUTE_, PCT_TPL_E)

static void IX_CAT(ix_loop_, PCT_TPL_N)(char **args, const int64_t *dims, const int64_t *steps, void *vctx)
{
    /* a local copy: the stores through char pointers may alias *vctx (-fno-strict-aliasing), which would reload the
       strides every element (gather took 5x torch's time) */
    const ix_ctx cv = *(const ix_ctx *)vctx, *c = &cv;
    const int64_t n = c->n;
    const PCT_TPL_C alpha = pct_dtype_is_floating(IX_CAT(PCT_, PCT_TPL_E)) ? (PCT_TPL_C)c->alpha_d
                                                                          : (PCT_TPL_C)c->alpha_i;
    switch (c->op) {
    case IX_COPY:
#define IX_BODY *(PCT_TPL_T *)d = *(const PCT_TPL_T *)s
#include "index_each_impl.h"
        break;
    case IX_ADD:
#define IX_BODY *(PCT_TPL_T *)d = IX_FROM_C(IX_TO_C(*(PCT_TPL_T *)d) + alpha * IX_TO_C(*(const PCT_TPL_T *)s))
#include "index_each_impl.h"
        break;
    case IX_MUL:
#define IX_BODY *(PCT_TPL_T *)d = IX_FROM_C(IX_TO_C(*(PCT_TPL_T *)d) * IX_TO_C(*(const PCT_TPL_T *)s))
#include "index_each_impl.h"
        break;
    case IX_MAX:
#define IX_BODY PCT_TPL_C a_ = IX_TO_C(*(PCT_TPL_T *)d), b_ = IX_TO_C(*(const PCT_TPL_T *)s); \
    if (ix_isnan((double)b_) || b_ > a_) *(PCT_TPL_T *)d = *(const PCT_TPL_T *)s
#include "index_each_impl.h"
        break;
    case IX_MIN:
#define IX_BODY PCT_TPL_C a_ = IX_TO_C(*(PCT_TPL_T *)d), b_ = IX_TO_C(*(const PCT_TPL_T *)s); \
    if (ix_isnan((double)b_) || b_ < a_) *(PCT_TPL_T *)d = *(const PCT_TPL_T *)s
#include "index_each_impl.h"
        break;
    case IX_MEAN:
#define IX_BODY *(PCT_TPL_T *)d = IX_FROM_C(IX_TO_C(*(PCT_TPL_T *)d) + IX_TO_C(*(const PCT_TPL_T *)s)); \
    (*(int64_t *)(args[3] + k * steps[3] + j * c->cnt_sj))++
#include "index_each_impl.h"
        break;
    }
}

#undef IX_CAT_
#undef IX_CAT
#undef IX_TO_C
#undef IX_FROM_C
