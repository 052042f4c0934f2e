/* attention_rows.h: the per-row float32 loops of the fused attention kernels (attention.c),
 * vectorised for AVX-512 / AVX2 when the CPU has them (chosen once at run time) and
 * plain C otherwise. Every function touches one row of a score tile. */
#ifndef PCT_ATTENTION_ROWS_H
#define PCT_ATTENTION_ROWS_H
#include <stdint.h>

typedef struct pct_attn_rows_f32 {
    /* the largest element (NaN ignored), -inf for an empty or all -inf row */
    float (*max)(const float *x, int64_t n);
    /* x[i] = exp(x[i] - m) in place (exactly 0 where x[i] - m < -87); returns the sum */
    float (*exp_sum)(float *x, int64_t n, float m);
    /* dp[i] = p[i] * (dp[i] - d): the softmax backward of one row */
    void (*ds)(float *dp, const float *p, int64_t n, float d);
} pct_attn_rows_f32;

/* The loops for this CPU (never NULL; the first call picks them, later calls are cheap). */
const pct_attn_rows_f32 *pct_attn_rows_f32_get(void);

#endif
