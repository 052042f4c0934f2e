/* reduce_sum.cu: the sum family of the CUDA reduction runner (reduce.cuh): sum, nansum, mean, nanmean, prod,
 * count_nonzero, all, any, over the dtypes the CPU's tables have (cpu/reduce.c). */
#include "reduce.cuh"

PCT_RED_FUNCTORS_ALL(sum)
PCT_RED_FUNCTORS_FLT(nansum)
PCT_RED_FUNCTORS_FLT(mean)
PCT_RED_FUNCTORS_FLT(nanmean)
PCT_RED_FUNCTORS_ALL(prod)
PCT_RED_FUNCTORS_ALLU(cnz)
PCT_RED_FUNCTORS_ALLU(all)
PCT_RED_FUNCTORS_ALLU(any)

const pct_red_entry *pct_red_sum_family(int op, int dtype)
{
    switch (op) {
    PCT_RED_LOOKUP_ALL(sum)
    PCT_RED_LOOKUP_FLT(nansum)
    PCT_RED_LOOKUP_FLT(mean)
    PCT_RED_LOOKUP_FLT(nanmean)
    PCT_RED_LOOKUP_ALL(prod)
    PCT_RED_LOOKUP_ALLU(cnz)
    PCT_RED_LOOKUP_ALLU(all)
    PCT_RED_LOOKUP_ALLU(any)
    default: return nullptr;
    }
}
