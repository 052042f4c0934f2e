/* pointwise.cuh: the CUDA loops of the op table's PCT_UNARY and PCT_BINARY entries (ops.def and the tables it
 * includes), one functor per entry and dtype of its set, from the entry's own float and integer expressions: the
 * expansion (pointwise_expand.h) and the expression helpers (cpu/pointwise_math.h, cpu/pointwise_special.h,
 * cpu/special_polynomials.h) are the CPU loops' own, so an op's math is written once (Note [One math for both
 * devices] in csrc/aten/host_device.h). As on the CPU, float16 and bfloat16 compute in float, as torch's CUDA kernels
 * do. loops.cuh launches them; pointwise.cu gives the C entry points, pointwise_glue.c builds the plans and fills the
 * op table's CUDA slots. A header, so that host tests (Note [Launch policies] in loops.cuh) can run the same loops. */
#ifndef PCT_CUDA_POINTWISE_CUH
#define PCT_CUDA_POINTWISE_CUH
#include "loops.cuh"
#include "../aten/dtype.h"
#include "../aten/op_ids.h"
#include "../aten/pointwise_expand.h"
#include "../aten/cpu/pointwise_math.h"
#include "../aten/cpu/special_polynomials.h"

/* Note [Ops left to the CPU]: the entries whose expressions call the scalar special functions compiled out of line
 * for the CPU (cpu/special_functions.c, cpu/special_erf_gamma.c: pct_sf_*) have no device code to call, so they get
 * no CUDA loops; their CUDA slots stay empty and the CUDA backend's fallback runs them on the CPU. Each is marked
 * here as `PCT_CUDA_CPU_ONLY_<id> ~, 1`, which PCT_CUDA_ON_CPU(id) turns into 1 (and any other id into 0). Moving
 * those functions into headers of PCT_HOST_DEVICE functions would bring these ops to the device. */
#define PCT_CUDA_CPU_ONLY_special_airy_ai ~, 1
#define PCT_CUDA_CPU_ONLY_special_bessel_j0 ~, 1
#define PCT_CUDA_CPU_ONLY_special_bessel_j1 ~, 1
#define PCT_CUDA_CPU_ONLY_special_bessel_y0 ~, 1
#define PCT_CUDA_CPU_ONLY_special_bessel_y1 ~, 1
#define PCT_CUDA_CPU_ONLY_special_modified_bessel_i0 ~, 1
#define PCT_CUDA_CPU_ONLY_special_modified_bessel_i1 ~, 1
#define PCT_CUDA_CPU_ONLY_special_modified_bessel_k0 ~, 1
#define PCT_CUDA_CPU_ONLY_special_modified_bessel_k1 ~, 1
#define PCT_CUDA_CPU_ONLY_special_scaled_modified_bessel_k0 ~, 1
#define PCT_CUDA_CPU_ONLY_special_scaled_modified_bessel_k1 ~, 1
#define PCT_CUDA_CPU_ONLY_special_spherical_bessel_j0 ~, 1
#define PCT_CUDA_CPU_ONLY_special_i0e ~, 1
#define PCT_CUDA_CPU_ONLY_special_i1e ~, 1
#define PCT_CUDA_CPU_ONLY_special_erfcx ~, 1
#define PCT_CUDA_CPU_ONLY_special_log_ndtr ~, 1
#define PCT_CUDA_CPU_ONLY_special_ndtri ~, 1
#define PCT_CUDA_CPU_ONLY_special_zeta ~, 1
#define PCT_CUDA_CPU_ONLY_igamma ~, 1
#define PCT_CUDA_CPU_ONLY_igammac ~, 1
#define PCT_CUDA_CPU_ONLY__polygamma_loop ~, 1
#define PCT_CUDA_PROBE_(a, b, ...) b
#define PCT_CUDA_PROBE(...) PCT_CUDA_PROBE_(__VA_ARGS__, )
#define PCT_CUDA_ON_CPU(id) PCT_CUDA_PROBE(PCT_CUDA_CPU_ONLY_##id, 0)
/* PCT_CUDA_ON_DEVICE(id, M): the macro name M for an op with CUDA loops, PCT_NO_LOOP for one left to the CPU */
#define PCT_CUDA_SELECT_0(m) m
#define PCT_CUDA_SELECT_1(m) PCT_NO_LOOP
#define PCT_CUDA_SELECT_(flag, m) PCT_CUDA_SELECT_##flag(m)
#define PCT_CUDA_SELECT(flag, m) PCT_CUDA_SELECT_(flag, m)
#define PCT_CUDA_ON_DEVICE(id, m) PCT_CUDA_SELECT(PCT_CUDA_ON_CPU(id), m)

/* Note [Errors of CUDA loops]: a CPU loop reports a data-dependent error (an integer division by zero) by setting
 * ctx->error, which the kernel raises after the loop (pct_pw_raise). On the device each element computes with its own
 * copy of ctx; a loop whose integer expression passes ctx to a helper (pct_pw_floordiv_int and its kind: the only
 * way an expression can report one) may fail, and for those the launch allocates a device int, each element that
 * fails writes its code there (the first one stays), and after the kernel the launch copies it back, waits for the
 * stream and hands it to ctx->error, so the error is raised as on the CPU. Other loops never wait. Whether an
 * expression passes ctx is read from its text (pct_cuda_names_ctx, at compile time). */
static constexpr bool pct_cuda_ident_char(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static constexpr bool pct_cuda_names_ctx(const char *s)
{
    for (int i = 0; s[i]; i++)
        if (s[i] == 'c' && s[i + 1] == 't' && s[i + 2] == 'x' && (i == 0 || !pct_cuda_ident_char(s[i - 1])) &&
            !pct_cuda_ident_char(s[i + 3]))
            return true;
    return false;
}
#define PCT_CUDA_CAN_FAIL(E, iexpr) PCT_PICK_##E(false, pct_cuda_names_ctx(#iexpr))

/* What every pointwise functor carries into its kernel: the call's ctx (error 0) and the device int of Note [Errors of
 * CUDA loops] (NULL for a loop that cannot fail). */
struct pct_cuda_pw_state {
    pct_pw_ctx ctx;
    int *error;
    __host__ __device__ void report(int code) const
    {
#ifdef __CUDA_ARCH__
        if (code && error) atomicCAS(error, 0, code);
#else /* a host test's run, one thread */
        if (code && error && !*error) *error = code;
#endif
    }
};

/* The functors of Note [The CUDA loop launch] (loops.cuh): x (unary) or a, b (binary) in the compute type C, with ctx,
 * alpha and OT in scope as in the CPU loops (cpu/pointwise.c). Where torch's CUDA kernels compute otherwise than its
 * CPU kernels, these follow CUDA:
 *  - a 0-d CPU operand of add/sub/mul/div over float16/bfloat16 is its value before the cast to that dtype
 *    (ctx->scalar_a, scalar_b: Note [CPU scalars in opmath] in csrc/aten/pointwise_call.h); it is broadcast, so the
 *    value holds for every element;
 *  - alpha is converted to the compute type directly (float for float16/bfloat16), where the CPU rounds it to the
 *    tensor's dtype first (PCT_PW_ALPHA);
 *  - a division by a 0-d CPU `other` multiplies by its reciprocal (Note [Division by a CPU scalar] below). */
#define PCT_CUDA_FUNCTOR(name, E, T, C, fexpr, iexpr, promo, n, LOAD)                                        \
    struct name {                                                                                          \
        typedef T in_t;                                                                                    \
        typedef PCT_OUT_T_##promo(T) out_t;                                                                \
        static constexpr int nin = n;                                                                      \
        static constexpr bool can_fail = PCT_CUDA_CAN_FAIL(E, iexpr);                                      \
        pct_cuda_pw_state state;                                                                           \
        __host__ __device__ out_t operator()(const in_t *v) const                                         \
        {                                                                                                  \
            typedef out_t OT;                                                                              \
            pct_pw_ctx local = state.ctx;                                                                  \
            [[maybe_unused]] pct_pw_ctx *ctx = &local;                                                     \
            LOAD(E, C)                                                                                     \
            const OT r = PCT_PW_RESULT(E, fexpr, iexpr, promo);                                            \
            if constexpr (can_fail) state.report(local.error);                                             \
            return r;                                                                                      \
        }                                                                                                  \
    };
#define PCT_CUDA_LOAD_X(E, C) [[maybe_unused]] C x = PCT_TO_COMPUTE_##E(v[0]);
#define PCT_CUDA_LOAD_AB(E, C)                                                                              \
    [[maybe_unused]] const C alpha = (C)PCT_PICK_##E(ctx->alpha_d, ctx->alpha_i);                           \
    [[maybe_unused]] C a = ctx->has_scalar_a ? (C)ctx->scalar_a : PCT_TO_COMPUTE_##E(v[0]);                \
    [[maybe_unused]] C b = ctx->has_scalar_b ? (C)ctx->scalar_b : PCT_TO_COMPUTE_##E(v[1]);
#define PCT_CUDA_UNARY_FUNCTOR(E, N, T, C, S, id, fexpr, iexpr, promo) \
    PCT_CUDA_FUNCTOR(pct_cuda_unary_##id##_##N, E, T, C, fexpr, iexpr, promo, 1, PCT_CUDA_LOAD_X)
#define PCT_CUDA_BINARY_FUNCTOR(E, N, T, C, S, id, fexpr, iexpr, promo) \
    PCT_CUDA_FUNCTOR(pct_cuda_binary_##id##_##N, E, T, C, fexpr, iexpr, promo, 2, PCT_CUDA_LOAD_AB)
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    PCT_CUDA_ON_DEVICE(id, PCT_PW_LOOPS)(PCT_CUDA_UNARY_FUNCTOR, id, fexpr, iexpr, dtypes, promo)
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) \
    PCT_CUDA_ON_DEVICE(id, PCT_PW_LOOPS)(PCT_CUDA_BINARY_FUNCTOR, id, fexpr, iexpr, dtypes, promo)
#include "../aten/ops.def"

typedef int (*pct_cuda_pw_launcher)(const pct_cuda_loop *plan, pct_pw_ctx *ctx, cudaStream_t stream);

/* Runs functor F's loop over plan through launch policy L. A loop that may fail (Note [Errors of CUDA loops]) runs with
 * a fresh device int, read back after it. */
template <typename L, typename F>
static int pct_cuda_pw_run(const pct_cuda_loop *plan, pct_pw_ctx *ctx, cudaStream_t stream)
{
    F f;
    f.state.ctx = *ctx;
    f.state.ctx.error = 0;
    f.state.error = nullptr;
    if constexpr (!F::can_fail) {
        return pct_cuda_launch_elementwise<L>(plan, f, stream);
    } else {
        int found = 0;
        cudaError_t err = L::flag_new(&f.state.error, stream);
        if (err != cudaSuccess) return (int)err;
        err = (cudaError_t)pct_cuda_launch_elementwise<L>(plan, f, stream);
        const cudaError_t taken = L::flag_take(f.state.error, &found, stream);
        if (err == cudaSuccess) err = taken;
        if (err == cudaSuccess && found) ctx->error = found;
        return (int)err;
    }
}

/* Note [Shards of the pointwise loops]: the op table's pointwise entries make some 1,600 functors of two kernels
 * each. In one translation unit nvcc spends minutes on them on one core per architecture (cicc and ptxas do not
 * split a file), the longest step of the build. So setup.py compiles pointwise.cu PCT_CUDA_PW_SHARDS times (it reads
 * the count here), shard k (-DPCT_CUDA_PW_SHARD=k) holding the loops of the ops whose index is k modulo the count,
 * and pointwise_entry.cu asks the shard of an op for its loop. */
#define PCT_CUDA_PW_SHARDS 4
#define PCT_CUDA_PW_FOR_EACH_SHARD(X) X(0) X(1) X(2) X(3)
#define PCT_CUDA_PW_SHARD_FIND_(k) pct_cuda_pw_find_shard_##k
#define PCT_CUDA_PW_SHARD_FIND(k) PCT_CUDA_PW_SHARD_FIND_(k) /* shard k's finder (pointwise.cu) */

/* The launcher of op op_index's loop for dtype through launch policy L, or NULL; with shard >= 0, only the loops of
 * that shard's ops are instantiated (the others' finds give NULL). */
template <typename L, int shard = -1>
static pct_cuda_pw_launcher pct_cuda_pw_find(int op_index, int dtype)
{
#define PCT_CUDA_UNARY_CASE(E, N, T, C, S, id, fexpr, iexpr, promo) \
    case PCT_##E: return &pct_cuda_pw_run<L, pct_cuda_unary_##id##_##N>;
#define PCT_CUDA_BINARY_CASE(E, N, T, C, S, id, fexpr, iexpr, promo) \
    case PCT_##E: return &pct_cuda_pw_run<L, pct_cuda_binary_##id##_##N>;
    switch (op_index) {
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr)                                                 \
    case PCT_OP_##id:                                                                                       \
        if constexpr (shard >= 0 && (int)PCT_OP_##id % PCT_CUDA_PW_SHARDS != shard) return nullptr;         \
        else switch (dtype) {                                                                               \
            PCT_CUDA_ON_DEVICE(id, PCT_PW_LOOPS)(PCT_CUDA_UNARY_CASE, id, fexpr, iexpr, dtypes, promo)      \
        default: return nullptr;                                                                            \
        }
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr)                                        \
    case PCT_OP_##id:                                                                                       \
        if constexpr (shard >= 0 && (int)PCT_OP_##id % PCT_CUDA_PW_SHARDS != shard) return nullptr;         \
        else switch (dtype) {                                                                               \
            PCT_CUDA_ON_DEVICE(id, PCT_PW_LOOPS)(PCT_CUDA_BINARY_CASE, id, fexpr, iexpr, dtypes, promo)     \
        default: return nullptr;                                                                            \
        }
#include "../aten/ops.def"
    default: return nullptr;
    }
}

/* Note [Division by a CPU scalar]: torch's CUDA kernels divide a floating tensor by a 0-d CPU `other` as a
 * multiplication by its reciprocal, taken once in the compute type (from the value before the cast for
 * float16/bfloat16, Note [CPU scalars in opmath]); so does pct_cuda_pw_launch, with mul's loop and the reciprocal as
 * mul's scalar `other`. */
static inline bool pct_cuda_divides_by_cpu_scalar(int op_index, int dtype, const pct_cuda_loop *plan)
{
    const bool div = op_index == PCT_OP_div || op_index == PCT_OP_divide || op_index == PCT_OP_true_divide;
    const bool floating = dtype == PCT_FLOAT16 || dtype == PCT_BFLOAT16 || dtype == PCT_FLOAT32 || dtype == PCT_FLOAT64;
    return div && floating && plan->ntensors == 3 && (plan->host_scalars & 4u);
}

typedef pct_cuda_pw_launcher (*pct_cuda_pw_finder)(int op_index, int dtype);

/* Op op_index's loop for compute dtype `dtype` (found by `find`) over plan through launch policy L:
 * pct_cuda_pointwise_launch (loop_plan.h). */
template <typename L>
static int pct_cuda_pw_launch(pct_cuda_pw_finder find, int op_index, int dtype, const pct_cuda_loop *plan,
                              pct_pw_ctx *ctx, cudaStream_t stream)
{
    if (pct_cuda_divides_by_cpu_scalar(op_index, dtype, plan)) {
        pct_pw_ctx by = *ctx;
        switch (dtype) {
#define PCT_CUDA_RECIPROCAL(E, N, T, C, S)                                                                  \
    case PCT_##E: {                                                                                        \
        T stored;                                                                                          \
        memcpy(&stored, &plan->scalar[2], sizeof stored);                                                  \
        const C b = ctx->has_scalar_b ? (C)ctx->scalar_b : PCT_TO_COMPUTE_##E(stored);                     \
        by.scalar_b = (double)((C)1 / b);                                                                  \
        break;                                                                                             \
    }
            PCT_FORALL_FLOAT_DTYPES(PCT_CUDA_RECIPROCAL)
        default: break;
        }
        by.has_scalar_b = 1;
        const pct_cuda_pw_launcher mul = find(PCT_OP_mul, dtype);
        return mul ? mul(plan, &by, stream) : (int)cudaErrorInvalidValue;
    }
    const pct_cuda_pw_launcher run = find(op_index, dtype);
    return run ? run(plan, ctx, stream) : (int)cudaErrorInvalidValue;
}

#endif
