/* generator_state.h: the state of a CPU torch.Generator: torch's mt19937 with its seed and normal caches, seeding,
 * and get_state/set_state in torch's byte layout. Device-neutral core: the binding's Generator object owns one, and
 * the CPU random kernels (cpu/random_engine.h) draw from it. */
#ifndef PCT_GENERATOR_STATE_H
#define PCT_GENERATOR_STATE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PCT_MT19937_N 624

/* Seed of a freshly constructed torch.Generator() (c10's
 * default_rng_seed_val).  Note: torch's *global* default generator is seeded
 * non-deterministically at start-up (torch.initial_seed() differs between
 * processes); pyctorch may pick any policy for its global generator. */
#define PCT_DEFAULT_SEED UINT64_C(67280421310721)

/* Size in bytes of torch.Generator.get_state() for a CPU generator. */
#define PCT_GENERATOR_STATE_SIZE 5056

typedef struct pct_cpu_generator {
    uint32_t state[PCT_MT19937_N]; /* mt19937 state words                    */
    int32_t  left;                 /* outputs left before the next twist   */
    uint32_t next;                 /* index of the next state word to use  */
    int32_t  seeded;               /* 1 once seeded                        */
    uint64_t seed;                 /* value returned by initial_seed()     */
    /* Box-Muller caches (torch: next_double_normal_sample_ /
     * next_float_normal_sample_).  The double cache is filled and consumed by
     * the scalar normal path; the float cache is never touched by any CPU
     * kernel in torch 2.13 but is kept so get_state/set_state round-trip. */
    double   next_double_normal;
    float    next_float_normal;
    int32_t  has_next_double_normal;
    int32_t  has_next_float_normal;
} pct_cpu_generator;

/* Equivalent of torch.manual_seed(seed) / Generator.manual_seed(seed) on a
 * generator: re-initialises the mt19937 state from the low 32 bits of seed,
 * remembers the full 64-bit seed and clears both Box-Muller caches.  A fresh
 * torch.Generator() equals pct_generator_init(g, PCT_DEFAULT_SEED). */
void     pct_generator_init(pct_cpu_generator *g, uint64_t seed);

/* torch.Generator.initial_seed(). */
uint64_t pct_generator_seed_value(const pct_cpu_generator *g);

/* get_state / set_state use exactly the byte layout of
 * torch.Generator.get_state() (uint8 tensor of 5056 bytes, little endian):
 *   [0,8)      uint64 initial seed
 *   [8,12)     int32  left
 *   [12,16)    int32  seeded
 *   [16,24)    uint64 next
 *   [24,5016)  624 x uint64 state words (zero-extended uint32)
 *   [5016,5024) double normal_x   (always 0)
 *   [5024,5032) double normal_y   (cached double normal sample or 0)
 *   [5032,5040) double normal_rho (always 0)
 *   [5040,5044) int32  normal_is_valid
 *   [5044,5048) padding (0)
 *   [5048,5052) float  next float normal sample (or 0)
 *   [5052]      bool   float sample valid
 *   [5053,5056) padding (0)
 * get_state writes PCT_GENERATOR_STATE_SIZE bytes to out.
 * set_state returns 0 on success and -1 (generator unchanged) when n is not
 * 5056 or the mt19937 part is invalid (seeded == 0, left not in [1,624],
 * next > 624) - the same conditions torch rejects.  State words are
 * truncated to 32 bits and next to 32 bits, as torch does. */
size_t   pct_generator_state_size(void);
void     pct_generator_get_state(const pct_cpu_generator *g, uint8_t *out);
int      pct_generator_set_state(pct_cpu_generator *g, const uint8_t *in, size_t n);

#ifdef __cplusplus
}
#endif
#endif
