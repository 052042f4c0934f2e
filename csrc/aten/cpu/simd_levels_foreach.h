/* simd_levels_foreach.h: the levels of simd_levels.h for a template header (the .c.src idiom of dtype_foreach.h, for
 * instruction sets). Includes the template named by PCT_LEVELS_TEMPLATE (a quoted file name) once per level that
 * PCT_SIMD_LEVELS expands (the baseline; AVX2 + FMA where PCT_SIMD_X86; AVX-512 where PCT_SIMD_AVX512), each time with
 *   PCT_LVL_SFX   the level's name (base, avx2, avx512): functions named <base>_<sfx>
 *   PCT_LVL_ATTR  its attributes (PCT_SIMD_ATTR_BASE / _AVX2 / _AVX512)
 *   PCT_LVL_W     its float lanes (4, 8, 16)
 * defined, and undefines them after the template; at the end it undefines PCT_LEVELS_TEMPLATE. Pick a level at run
 * time with __builtin_cpu_supports under the same PCT_SIMD_X86 / PCT_SIMD_AVX512 conditions. No include guard: by
 * design. */
#include "simd_levels.h"

#define PCT_LVL_SFX base
#define PCT_LVL_ATTR PCT_SIMD_ATTR_BASE
#define PCT_LVL_W 4
#include PCT_LEVELS_TEMPLATE
#undef PCT_LVL_SFX
#undef PCT_LVL_ATTR
#undef PCT_LVL_W
#ifdef PCT_SIMD_X86
#define PCT_LVL_SFX avx2
#define PCT_LVL_ATTR PCT_SIMD_ATTR_AVX2
#define PCT_LVL_W 8
#include PCT_LEVELS_TEMPLATE
#undef PCT_LVL_SFX
#undef PCT_LVL_ATTR
#undef PCT_LVL_W
#endif
#ifdef PCT_SIMD_AVX512
#define PCT_LVL_SFX avx512
#define PCT_LVL_ATTR PCT_SIMD_ATTR_AVX512
#define PCT_LVL_W 16
#include PCT_LEVELS_TEMPLATE
#undef PCT_LVL_SFX
#undef PCT_LVL_ATTR
#undef PCT_LVL_W
#endif
#undef PCT_LEVELS_TEMPLATE
