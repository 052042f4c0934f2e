/* half_f16c.c: whether the F16C conversions of half_f16c.h can run here. */
#include "half_f16c.h"

bool pct_have_f16c(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int have = -1; /* a benign race: every thread computes the same answer */
    if (have < 0) have = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    return have;
#else
    return false;
#endif
}
