/* op_ids.h: the operator enum, one PCT_OP_<id> per ops.def entry, in table order. op.h includes it; so do CUDA files,
 * which index their tables by op and cannot include op.h (its tensor.h needs C11 atomics). */
#ifndef PCT_OP_IDS_H
#define PCT_OP_IDS_H

enum pct_op_id {
#define PCT_OP(id, schema, variants, cpu) PCT_OP_##id,
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) PCT_OP_##id,
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) PCT_OP_##id,
#include "ops.def"
    PCT_NUM_OPS
};

#endif
