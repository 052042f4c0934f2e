/* op.h: operator descriptors, parsed arguments and the kernel calling convention.
 *
 * Every operator is one entry of ops.def. The entry's signature string (torch's
 * schema syntax) is parsed once at import into a pct_signature; the binding layer
 * parses Python arguments against it into pct_value slots (one per parameter, in
 * signature order) and the dispatcher calls the kernel of the backend the tensor
 * arguments live on. Kernels read those slots through their op's typed argument struct
 * (Note [Typed arguments] below), not by position.
 */
#ifndef PCT_OP_H
#define PCT_OP_H
#include "tensor.h"

#define PCT_MAX_PARAMS 16

/* A memory_format argument as the binding reads it (pct_value.code). */
enum { PCT_MF_PRESERVE = 0, PCT_MF_CONTIGUOUS = 1, PCT_MF_CHANNELS_LAST = 2, PCT_MF_CHANNELS_LAST_3D = 3, PCT_MF_UNKNOWN = -1 };

typedef enum pct_arg_type {
    PCT_ARG_TENSOR, PCT_ARG_SCALAR, PCT_ARG_INT, PCT_ARG_INTLIST, PCT_ARG_FLOAT, PCT_ARG_BOOL,
    PCT_ARG_DTYPE, PCT_ARG_DEVICE, PCT_ARG_TENSORLIST, PCT_ARG_STR, PCT_ARG_GENERATOR,
    PCT_ARG_OBJECT, PCT_ARG_LAYOUT, PCT_ARG_MEMFORMAT, PCT_ARG_FLOATLIST
} pct_arg_type;

typedef enum pct_scalar_kind { PCT_SCALAR_BOOL, PCT_SCALAR_INT, PCT_SCALAR_FLOAT, PCT_SCALAR_COMPLEX } pct_scalar_kind;

typedef struct pct_scalar {
    int8_t kind;
    int64_t i;  /* valid for BOOL and INT */
    double d;   /* valid for all kinds (COMPLEX: the real part) */
    uint8_t from_tensor; /* parsed from a one-element tensor (ops with a Tensor overload skip the range check) */
    double im;  /* COMPLEX: the imaginary part (0 for the other kinds) */
} pct_scalar;

/* One parsed argument. Objects are borrowed from the call's arguments, except the
 * wrapped-number tensors made from Python scalars, which the call owns (c->owned). */
typedef struct pct_value {
    uint8_t none;                /* None was given (or the default is None) */
    union {
        pct_tensor *t;
        struct {
            pct_object *obj;     /* TENSORLIST (a tuple or list), STR, OBJECT, GENERATOR, LAYOUT, MEMFORMAT: the argument */
            union {              /* what the binding read from it, so kernels need no Python: */
                pct_tensor *const *items; /* TENSORLIST: its n tensors (the sequence's own array, valid for the call) */
                const char *str;          /* STR: the text, UTF-8 (owned by obj) */
                int code;                 /* MEMFORMAT: PCT_MF_* (cpu/factory.h) */
            };
        };
        int64_t i;
        double d;
        bool b;
        int dtype;
        pct_scalar s;
        struct { int8_t type, index; } dev;
    };
    int32_t n;                   /* INTLIST / FLOATLIST / TENSORLIST length */
    int64_t list[PCT_MAX_DIMS];  /* INTLIST values */
    double flist[4];             /* FLOATLIST values (short lists only) */
} pct_value;

typedef struct pct_param {
    uint8_t type;
    uint8_t optional;     /* Type? : accepts None */
    uint8_t kwonly;
    uint8_t has_default;
    int8_t list_size;     /* int[N]: a single int stands for N copies; 0 for int[] */
    uint8_t allow_number; /* `Tensor|Scalar`: a Python number becomes a wrapped 0-d tensor */
    uint8_t int_only;     /* an overload's `int x` for the op's `int[N] x`: a single int, kept as an N-list */
    uint8_t scalar_only;  /* an overload's `Scalar x` for the op's `Tensor|Scalar x`: a number or a 0-d tensor */
    int8_t slot;          /* where the value goes in pct_call.v: its index in the op's own signature */
    const char *name;
    pct_object *pyname;     /* interned */
    pct_value def;
} pct_param;

typedef struct pct_signature {
    char name[48];
    int nparams;
    int npositional;
    int out_index;        /* the `out` parameter, or -1 */
    pct_param params[PCT_MAX_PARAMS];
    char text[256];       /* the parameter list for error messages */
    /* Note [Overload signatures]: an overload (csrc/aten/ops_overloads.def) is a narrower spelling of an op's
     * schema; its parameters land in the op's slots (pct_param.slot) and the op's parameters it lacks take the
     * op's defaults. NULL and 0 for an op's own signature. */
    const struct pct_signature *canon;
    uint16_t missing;     /* bit i: the op's parameter i is not in this overload */
} pct_signature;

enum { PCT_V_FUNC = 1, PCT_V_METHOD = 2, PCT_V_INPLACE = 4 };
#define PCT_FMI (PCT_V_FUNC | PCT_V_METHOD | PCT_V_INPLACE)
#define PCT_FM (PCT_V_FUNC | PCT_V_METHOD)
#define PCT_F PCT_V_FUNC
#define PCT_FI (PCT_V_FUNC | PCT_V_INPLACE) /* a function and its in-place method op_ */
#define PCT_M PCT_V_METHOD

typedef enum pct_op_kind { PCT_KIND_CUSTOM, PCT_KIND_UNARY, PCT_KIND_BINARY, PCT_KIND_COMPOSITE } pct_op_kind;

/* How a pointwise op treats dtypes. */
typedef enum pct_promotion {
    PCT_PROMOTE_DEFAULT,     /* result_type of the inputs */
    PCT_PROMOTE_INT_TO_FLOAT,/* as default, but integral results become the default float */
    PCT_PROMOTE_COMPARE,     /* compute in result_type, output bool */
    PCT_PROMOTE_BOOL_OUT,    /* output bool, inputs keep their common dtype (logical_*) */
} pct_promotion;

struct pct_call;
typedef pct_object *(*pct_kernel_fn)(struct pct_call *c);

typedef struct pct_op {
    const char *id;           /* unique name of this overload, e.g. "sum_dim" */
    const char *schema;
    unsigned variants;
    uint8_t kind;
    uint8_t promotion;
    pct_kernel_fn kernels[PCT_NUM_BACKENDS];
    pct_signature sig;        /* filled at import */
} pct_op;

#define PCT_MAX_OWNED 6
typedef struct pct_call {
    const pct_op *op;
    int op_index;
    pct_value v[PCT_MAX_PARAMS];
    pct_tensor *out;          /* out= or in-place target (borrowed), NULL otherwise */
    bool inplace;
    int nowned;
    pct_object *owned[PCT_MAX_OWNED];
} pct_call;

/* The operator enum, one PCT_OP_<id> per ops.def entry. */
#include "op_ids.h"

/* Kernel prototypes for custom ops. */
#define PCT_OP(id, schema, variants, cpu) pct_object *cpu(pct_call *c);
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) pct_object *pct_cpu_unary_##id(pct_call *c);
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) pct_object *pct_cpu_binary_##id(pct_call *c);
#include "ops.def"

extern pct_op pct_ops[PCT_NUM_OPS];

/* A call of op op_index with every parameter at its default (None where it has none), no out= and not in place:
 * C callers (autograd, autocast) set the arguments they pass and call the op by id (pct_op_call, autograd.h). */
void pct_call_init(pct_call *c, int op_index);
/* Calls the kernel for c->op on the backend of its tensor arguments. */
pct_object *pct_dispatch(pct_call *c);

/* Note [Composite ops]: a PCT_COMPOSITE entry (ops.def) is written once over other ops, in csrc/aten/composite/.
 * Its impl sits in every backend's kernel slot and calls ops by id through pct_composite_call, never reading data
 * pointers, so the meta backend (and CUDA later) runs it as the CPU does and a backend implements primitives only.
 * Calling an op from a composite must record autograd and take the profiler and autocast hooks, which live in
 * csrc/autograd, a layer above: rather than include it, the core calls through this pointer, which the autograd
 * layer points at its pct_op_call when the module loads (pct_autograd_install). Until then (or in a core built
 * without autograd) it is pct_dispatch. An implicit composite (no PCT_GRAD line) runs with grad mode on, so the ops
 * it calls record their own nodes, as torch's CompositeImplicitAutograd ops do; an explicit one runs under its own
 * node with grad mode off, like any kernel. */
extern pct_object *(*pct_composite_caller)(pct_call *c);
static inline pct_object *pct_composite_call(pct_call *c) { return pct_composite_caller(c); }

/* Whether k is one of views.c's kernels, which serve every backend as they are (Note [Device-neutral views]). */
bool pct_is_view_kernel(pct_kernel_fn k);

/* torch's kernel name in its "not implemented for 'UInt16'" refusal of op_index where that is not "<op>_cpu", else NULL
 * (csrc/aten/ops_unsigned.def). */
const char *pct_unsigned_refusal_name(int op_index);

/* The fields of op_index's named result tuple (torch.return_types.<op name>; ops_returns.def), or NULL for an op whose
 * result is a tensor or a plain tuple (Note [Result tuples] in dispatch.c). */
typedef struct pct_op_returns {
    int n;
    const char *fields[PCT_MAX_RESULTS];
} pct_op_returns;
const pct_op_returns *pct_op_returns_of(int op_index);


/* Note [Typed arguments]: a kernel reads its arguments through a struct generated from its op's schema
 * (csrc/codegen/gen_op_args.py writes build/generated/op_args.h at build time): `PCT_ARGS(add);` at the top of the
 * kernel of op `add` declares `arg`, with one field per parameter named as in the schema and typed as it is:
 *   Tensor / Tensor? / Tensor|Scalar  pct_tensor * (NULL for None; a Python number arrives as a wrapped 0-d tensor)
 *   Scalar                            pct_scalar;        Scalar?  const pct_scalar * (NULL for None)
 *   int / float / bool                int64_t / double / bool;  int? / float? / bool?  pct_int_opt / pct_float_opt /
 *                                     pct_bool_opt ({none, v})
 *   int[] / float[] / Tensor[]        pct_int_list / pct_float_list / pct_tensor_list ({v or items, n, none})
 *   ScalarType(?)                     int, PCT_NO_DTYPE for None;  MemoryFormat(?)  int PCT_MF_*, PCT_MF_NONE for None
 *   Device(?)                         pct_device_arg ({none, type, index});  str(?)  const char * (NULL for None)
 *   Generator / Layout                pct_object * (NULL for None)
 *   PyObject                          pct_object *: the object, None included (the None object where None is given,
 *                                     NULL where the argument is left out: tensordot refuses dims=None, not its default)
 * A schema change a kernel does not follow then fails to compile instead of reading the wrong slot. The values
 * stay owned by the call (pct_call): the struct borrows them for the kernel's duration. Ops that share an
 * implementation (the 12 upsample schemas, the overloads of scatter) each have a typed entry of a few lines that
 * passes typed values (or a small struct of them) to it; the table's unary and binary ops get theirs from X-macros
 * over ops.def (cpu/pointwise.c), the binary ones through pct_binary_args. No kernel reads a slot by number: only
 * the generic machinery that works on any op does (dispatch.c, out.c, meta/meta_backend.c, composite/op_calls.c,
 * the binding; tests/test_typed_args.py checks it). */
typedef struct pct_int_list { const int64_t *v; int32_t n; bool none; } pct_int_list;
typedef struct pct_float_list { const double *v; int32_t n; bool none; } pct_float_list;
typedef struct pct_tensor_list {
    pct_tensor *const *items;
    int32_t n;
    bool none;
    pct_object *seq; /* the tuple or list itself (out=(values, indices) checks name its type) */
} pct_tensor_list;
typedef struct pct_int_opt { bool none; int64_t v; } pct_int_opt;
typedef struct pct_float_opt { bool none; double v; } pct_float_opt;
typedef struct pct_bool_opt { bool none; bool v; } pct_bool_opt;
typedef struct pct_device_arg { bool none; int8_t type, index; } pct_device_arg;
/* The default device of factories (torch.set_default_device); none: the CPU. */
extern pct_device_arg pct_default_device;
#define PCT_NO_DTYPE (-1)
#define PCT_MF_NONE (-2)
/* One parsed value read as its type: the generated readers (op_args.h) use these; kernels read PCT_ARGS instead. */
static inline pct_tensor *pct_value_tensor(const pct_value *v) { return v->none ? NULL : v->t; }
static inline const pct_scalar *pct_value_scalar_opt(const pct_value *v) { return v->none ? NULL : &v->s; }
static inline pct_int_opt pct_value_int_opt(const pct_value *v) { return (pct_int_opt){v->none, v->none ? 0 : v->i}; }
static inline pct_float_opt pct_value_float_opt(const pct_value *v)
{
    return (pct_float_opt){v->none, v->none ? 0 : v->d};
}
static inline pct_bool_opt pct_value_bool_opt(const pct_value *v) { return (pct_bool_opt){v->none, !v->none && v->b}; }
static inline pct_int_list pct_value_int_list(const pct_value *v)
{
    return (pct_int_list){v->none ? NULL : v->list, v->none ? 0 : v->n, v->none};
}
static inline pct_float_list pct_value_float_list(const pct_value *v)
{
    return (pct_float_list){v->none ? NULL : v->flist, v->none ? 0 : v->n, v->none};
}
static inline pct_tensor_list pct_value_tensor_list(const pct_value *v)
{
    return (pct_tensor_list){v->none ? NULL : v->items, v->none ? 0 : v->n, v->none, v->none ? NULL : v->obj};
}
static inline int pct_value_dtype(const pct_value *v) { return v->none ? PCT_NO_DTYPE : v->dtype; }
static inline pct_device_arg pct_value_device(const pct_value *v)
{
    return (pct_device_arg){v->none, v->none ? 0 : v->dev.type, v->none ? 0 : v->dev.index};
}
static inline const char *pct_value_str(const pct_value *v) { return v->none ? NULL : v->str; }
static inline int pct_value_memory_format(const pct_value *v) { return v->none ? PCT_MF_NONE : v->code; }
static inline pct_object *pct_value_object(const pct_value *v) { return v->none ? NULL : v->obj; }
/* The two operands of a PCT_BINARY op, whatever its schema names them (input/other, x/n, input/exponent), and its
 * alpha (add, sub, subtract, rsub; has_alpha false elsewhere): op_args.h has a pct_binary_args_read_<id> per binary
 * op, so one implementation serves them all through typed entries (cpu/pointwise.c). */
typedef struct pct_binary_args {
    pct_tensor *a, *b;
    bool has_alpha;
    pct_scalar alpha;
} pct_binary_args;
#include "op_args.h"
#define PCT_ARGS(op_id) const pct_args_##op_id arg = pct_args_read_##op_id(c)

/* Helpers for kernels. */
/* The value of the parameter called `name` (for kernels shared by several schemas). */
const pct_value *pct_arg(const pct_call *c, const char *name);
static inline double pct_scalar_to_double(const pct_scalar *s) { return s->d; }
/* Note [uint64 scalars]: torch keeps a Python int in [2^63, 2^64) as a uint64 Scalar. pyctorch's scalars are int64
 * or double (the uint64 dtype is for tensors, Note [Barebones unsigned dtypes] in dispatch.c); such an int is a
 * PCT_SCALAR_INT whose i holds its bits (negative) and d its value (positive), and as a wrapped
 * number an int64 0-d tensor flagged PCT_FLAG_UINT64_NUMBER. Its dtype in promotion is PCT_UINT64_SCALAR: with a
 * floating operand it becomes that float (by value), with an integral one that type (wrapping, as in torch), and
 * with only bools (or another int number) torch's "Promotion for uint16, uint32, uint64 types is not supported". */
static inline bool pct_scalar_is_uint64(const pct_scalar *s) { return s->kind == PCT_SCALAR_INT && s->i < 0 && s->d > 0; }
/* The value of a one-element tensor as a Scalar (from_tensor unless it is a wrapped Python number). */
void pct_tensor_item_scalar(const pct_tensor *t, pct_scalar *s);
/* A 0-d tensor of dtype holding s converted as torch converts a Scalar (a uint64 one by value into floats). */
pct_tensor *pct_scalar_tensor_of(int dtype, const pct_scalar *s);
/* The dtype a Python scalar has on its own (bool, int64, double). */
static inline int pct_scalar_dtype(const pct_scalar *s)
{
    return s->kind == PCT_SCALAR_BOOL ? PCT_BOOL : s->kind == PCT_SCALAR_INT ? PCT_INT64
         : s->kind == PCT_SCALAR_COMPLEX ? PCT_COMPLEX128 : PCT_FLOAT64;
}
/* torch's checked conversion of a Scalar argument to dtype (c10::checked_convert): -1 with "value cannot be
 * converted to type <T> without overflow" where s does not fit (negative ints wrap into unsigned types). */
int pct_scalar_check_fits(const pct_scalar *s, int dtype);
/* The same check against dtype's compute type (torch's opmath: float for float16/bfloat16/float32, none for
 * double), as torch's kernels convert alpha/beta/value Scalars (addmm, baddbmm, addcmul, addcdiv). */
int pct_scalar_check_opmath(const pct_scalar *s, int dtype);

/* A Device argument given as a negative ordinal: it matches the overload, as in torch, and is refused here. */
#define PCT_DEVICE_NEGATIVE_INDEX INT8_MIN
/* The device check of CPU kernels: -1 with torch's error unless `dev` is None or the CPU. */
static inline int pct_check_cpu_device_arg(pct_device_arg dev)
{
    if (dev.none || dev.type == PCT_CPU) return 0;
    if (dev.index == PCT_DEVICE_NEGATIVE_INDEX) pct_error_str(PCT_ERR_RUNTIME, "Device index must not be negative");
    else pct_error_str(PCT_ERR_ASSERTION, "Torch not compiled with CUDA enabled");
    return -1;
}
/* The same on the device argument of a factory's keywords (pct_arg(c, "device")). */
static inline int pct_check_cpu_device(const pct_value *dev) { return pct_check_cpu_device_arg(pct_value_device(dev)); }

#endif
