/* reduce_minmax.cu: the min/max family of the CUDA reduction runner (reduce.cuh): amax, amin, argmax, argmin,
 * max.dim, min.dim, aminmax, over the dtypes the CPU's tables have (cpu/reduce.c). */
#include "reduce.cuh"

PCT_RED_FUNCTORS_ALL(amax)
PCT_RED_FUNCTORS_ALL(amin)
PCT_RED_FUNCTORS_ALL(argmax)
PCT_RED_FUNCTORS_ALL(argmin)
PCT_RED_FUNCTORS_ALLU(maxdim)
PCT_RED_FUNCTORS_ALLU(mindim)
PCT_RED_FUNCTORS_ALL(aminmax)

const pct_red_entry *pct_red_minmax_family(int op, int dtype)
{
    switch (op) {
    PCT_RED_LOOKUP_ALL(amax)
    PCT_RED_LOOKUP_ALL(amin)
    PCT_RED_LOOKUP_ALL(argmax)
    PCT_RED_LOOKUP_ALL(argmin)
    PCT_RED_LOOKUP_ALLU(maxdim)
    PCT_RED_LOOKUP_ALLU(mindim)
    PCT_RED_LOOKUP_ALL(aminmax)
    default: return nullptr;
    }
}
