/* checked.h: overflow-proof integer arithmetic for sizes, offsets, strides and bound checks.
 *
 * Note [Checked bounds]: a bound check written `start + length > size` is wrong when the sum
 * overflows int64: `narrow(0, 1, 2**63 - 1)` on a 2-element tensor wrapped to a negative sum,
 * passed, and made a view far past its storage. Every check of a user-given size, offset,
 * step or index against a limit goes through these helpers instead of plain + and *, so it
 * cannot wrap. They are header-only (the compiler's overflow builtins), Python-free, and
 * usable from .c and .cu files alike.
 */
#ifndef PCT_CHECKED_H
#define PCT_CHECKED_H
#include <stdbool.h>
#include <stdint.h>

/* *r = a + b; true when the exact result does not fit in int64 (then *r is the wrapped value). */
static inline bool pct_add_overflows(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
static inline bool pct_sub_overflows(int64_t a, int64_t b, int64_t *r) { return __builtin_sub_overflow(a, b, r); }
static inline bool pct_mul_overflows(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }

/* True when the half-open range [start, start + length) lies inside [0, size), written so that
 * nothing can overflow: the caller's `start + length > size` is `length > size - start`. */
static inline bool pct_range_within(int64_t start, int64_t length, int64_t size)
{
    return start >= 0 && length >= 0 && start <= size && length <= size - start;
}

/* The product of n sizes; false when it overflows int64 (sizes are non-negative). The overflow
 * is sticky, as torch's: a later zero does not undo it. */
static inline bool pct_sizes_product(int n, const int64_t *sizes, int64_t *product)
{
    int64_t p = 1;
    bool overflow = false;
    for (int i = 0; i < n; i++) overflow |= __builtin_mul_overflow(p, sizes[i], &p);
    *product = p;
    return !overflow;
}

#endif
