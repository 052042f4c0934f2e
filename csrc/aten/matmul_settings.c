/* matmul_settings.c: the process's matmul precision settings (gemm.h), torch's defaults until Python changes them. */
#include "gemm.h"

pct_matmul_settings pct_matmul = {
    .float32_precision = PCT_MATMUL_HIGHEST,
    .fp16_reduced_reduction = true,
    .bf16_reduced_reduction = true,
};
