/* reduce_stats.cu: the statistics family of the CUDA reduction runner (reduce.cuh): var/std (Welford), logsumexp and
 * the vector norms, over the floating dtypes (as the CPU's tables, cpu/reduce.c). */
#include "reduce.cuh"

PCT_RED_FUNCTORS_FLT(var)
PCT_RED_FUNCTORS_FLT(lse)
PCT_RED_FUNCTORS_FLT(norm2)
PCT_RED_FUNCTORS_FLT(norm1)
PCT_RED_FUNCTORS_FLT(norm0)
PCT_RED_FUNCTORS_FLT(normp)
PCT_RED_FUNCTORS_FLT(norminf)
PCT_RED_FUNCTORS_FLT(normninf)

const pct_red_entry *pct_red_stats_family(int op, int dtype)
{
    switch (op) {
    PCT_RED_LOOKUP_FLT(var)
    PCT_RED_LOOKUP_FLT(lse)
    PCT_RED_LOOKUP_FLT(norm2)
    PCT_RED_LOOKUP_FLT(norm1)
    PCT_RED_LOOKUP_FLT(norm0)
    PCT_RED_LOOKUP_FLT(normp)
    PCT_RED_LOOKUP_FLT(norminf)
    PCT_RED_LOOKUP_FLT(normninf)
    default: return nullptr;
    }
}
