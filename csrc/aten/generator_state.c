/* generator_state.c: seeding and (de)serialising a CPU generator's state (generator_state.h). */
#include "generator_state.h"
#include <string.h>

void pct_generator_init(pct_cpu_generator *g, uint64_t seed)
{
    uint32_t j;
    if (g == NULL)
        return;
    memset(g, 0, sizeof *g);
    g->seed = seed;
    g->seeded = 1;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (j = 1; j < PCT_MT19937_N; j++) {
        uint32_t prev = g->state[j - 1];
        g->state[j] = 1812433253u * (prev ^ (prev >> 30)) + j;
    }
    g->left = 1;
    g->next = 0;
    g->has_next_double_normal = 0;
    g->has_next_float_normal = 0;
}

uint64_t pct_generator_seed_value(const pct_cpu_generator *g)
{
    return g != NULL ? g->seed : 0;
}

/* ----------------------------------------------------- state (de)serialise */

#define RNG_ST_SEED 0
#define RNG_ST_LEFT 8
#define RNG_ST_SEEDED 12
#define RNG_ST_NEXT 16
#define RNG_ST_STATE 24
#define RNG_ST_NORMAL_X 5016
#define RNG_ST_NORMAL_Y 5024
#define RNG_ST_NORMAL_RHO 5032
#define RNG_ST_NORMAL_VALID 5040
#define RNG_ST_FLOAT_NORMAL 5048
#define RNG_ST_FLOAT_VALID 5052

static void rng_put_u64(uint8_t *p, uint64_t v)
{
    int i;
    for (i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void rng_put_u32(uint8_t *p, uint32_t v)
{
    int i;
    for (i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t rng_get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t rng_get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    int i;
    for (i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

size_t pct_generator_state_size(void)
{
    return PCT_GENERATOR_STATE_SIZE;
}

void pct_generator_get_state(const pct_cpu_generator *g, uint8_t *out)
{
    int i;
    uint64_t dbits;
    if (g == NULL || out == NULL)
        return;
    memset(out, 0, PCT_GENERATOR_STATE_SIZE);
    rng_put_u64(out + RNG_ST_SEED, g->seed);
    rng_put_u32(out + RNG_ST_LEFT, (uint32_t)g->left);
    rng_put_u32(out + RNG_ST_SEEDED, g->seeded ? 1u : 0u);
    rng_put_u64(out + RNG_ST_NEXT, (uint64_t)g->next);
    for (i = 0; i < PCT_MT19937_N; i++)
        rng_put_u64(out + RNG_ST_STATE + 8 * i, (uint64_t)g->state[i]);
    if (g->has_next_double_normal) {
        memcpy(&dbits, &g->next_double_normal, sizeof dbits);
        rng_put_u64(out + RNG_ST_NORMAL_Y, dbits);
        rng_put_u32(out + RNG_ST_NORMAL_VALID, 1u);
    }
    if (g->has_next_float_normal) {
        uint32_t fbits;
        memcpy(&fbits, &g->next_float_normal, sizeof fbits);
        rng_put_u32(out + RNG_ST_FLOAT_NORMAL, fbits);
        out[RNG_ST_FLOAT_VALID] = 1;
    }
}

int pct_generator_set_state(pct_cpu_generator *g, const uint8_t *in, size_t n)
{
    pct_cpu_generator tmp;
    int32_t left, seeded;
    uint32_t next;
    uint64_t dbits;
    int i;

    if (g == NULL || in == NULL || n != PCT_GENERATOR_STATE_SIZE)
        return -1;
    left = (int32_t)rng_get_u32(in + RNG_ST_LEFT);
    seeded = (int32_t)rng_get_u32(in + RNG_ST_SEEDED);
    next = (uint32_t)rng_get_u64(in + RNG_ST_NEXT);
    if (seeded == 0 || left <= 0 || left > PCT_MT19937_N || next > PCT_MT19937_N)
        return -1;

    memset(&tmp, 0, sizeof tmp);
    tmp.seed = rng_get_u64(in + RNG_ST_SEED);
    tmp.left = left;
    tmp.seeded = 1;
    tmp.next = next;
    for (i = 0; i < PCT_MT19937_N; i++)
        tmp.state[i] = (uint32_t)rng_get_u64(in + RNG_ST_STATE + 8 * i);
    if (rng_get_u32(in + RNG_ST_NORMAL_VALID) != 0) {
        dbits = rng_get_u64(in + RNG_ST_NORMAL_Y);
        memcpy(&tmp.next_double_normal, &dbits, sizeof dbits);
        tmp.has_next_double_normal = 1;
    }
    if (in[RNG_ST_FLOAT_VALID] != 0) {
        uint32_t fbits = rng_get_u32(in + RNG_ST_FLOAT_NORMAL);
        memcpy(&tmp.next_float_normal, &fbits, sizeof fbits);
        tmp.has_next_float_normal = 1;
    }
    *g = tmp;
    return 0;
}
