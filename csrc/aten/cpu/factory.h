/* factory.h: what the factories of creation.c and random.c share: the memory_format argument and
 * the tensor a *_like factory starts from. */
#ifndef PCT_FACTORY_H
#define PCT_FACTORY_H
#include "../op.h"

/* The call's memory_format argument (None counts as preserve_format). */
int pct_memory_format_kind(const pct_call *c);
/* The uninitialised result of a *_like factory: src's shape, the call's dtype (default src's), laid out
 * by memory_format (preserve: src's layout, as torch's empty_like); NULL with exception. */
pct_tensor *pct_like_new(const pct_call *c, const pct_tensor *src);
/* Strides for sizes in memory format mf (contiguous or channels_last; 4-d only for the latter);
 * -1 with torch's error. */
int pct_format_strides(int mf, int ndim, const int64_t *sizes, int64_t *strides);
/* The dtype of a factory's result: out='s (dtype= must agree), else dtype=, else default_dtype; checks the
 * device too. -1 with torch's error. */
int pct_factory_dtype(pct_call *c, int default_dtype);
/* Applies the call's requires_grad=True to a new tensor (stolen; NULL passes through). */
pct_tensor *pct_factory_requires_grad(pct_call *c, pct_tensor *t);
#endif
