/* fill.h: filling a tensor with one scalar (convert.c), shared by fill_, zero_, full and fill_(Tensor). */
#ifndef PCT_FILL_H
#define PCT_FILL_H
#include "../op.h"

/* Writes s (converted to t's dtype) into every element of t; 0, or -1 with an exception set. */
int pct_fill_scalar(pct_tensor *t, const pct_scalar *s);
/* torch's range check of a Scalar fill value for t (fill_, full): -1 with RuntimeError. */
int pct_fill_check_value(const pct_scalar *s, const pct_tensor *t);
/* fill_(self, Scalar value) with its check (convert.c) and fill_(self, Tensor value) with its checks (index.c), for
 * the in-place ops and torch.fill: 0, or -1 with an exception set. */
int pct_fill_value_(pct_tensor *self, const pct_scalar *value);
int pct_fill_tensor_value_(pct_tensor *self, pct_tensor *value);
#endif
