/* optim_avx2_impl.h: the AVX2 + FMA loops of the fused optimizers (Adam/AdamW, SGD, Adagrad chunks) for float32 or
 * float64 (OPT_N: the dtype's name, OPT_T: its C type, OPT_VT: the vector type, OPT_X: the intrinsics' suffix, ps or
 * pd, OPT_W: the lanes); the scalar tails use the *_ELEM macros of optim.c.
 * Included by optim.c once per instantiation, with
 *   OPT_N, OPT_T, OPT_VT, OPT_X, OPT_W defined
 * (undefined at the end). No include guard: by design. */
#include "template.h"
/* OPT_MM256(add): _mm256_add_ps or _mm256_add_pd; OPT_AVX2_CHUNK(adam): adam_chunk_Float_avx2 or
 * adam_chunk_Double_avx2 */
#define OPT_MM256(op) PCT_TPL_CAT(_mm256_##op##_, OPT_X)
#define OPT_AVX2_CHUNK(kind) PCT_TPL_CAT(kind##_chunk_, PCT_TPL_CAT(OPT_N, _avx2))
/* The vector form of OPT_LOAD_GRAD_PARAM (vscale = the grad scale, sign = -0.0 in every lane). */
#define OPT_V_LOAD_GRAD_PARAM()                                                                \
    OPT_VT g = OPT_MM256(loadu)(gp + i);                                                       \
    if (has_scale) { g = OPT_MM256(div)(g, vscale); OPT_MM256(storeu)(gp + i, g); }            \
    if (maximize) g = OPT_MM256(xor)(g, sign);                                                 \
    OPT_VT p = OPT_MM256(loadu)(pp + i)

__attribute__((target("avx2,fma"))) static void OPT_AVX2_CHUNK(adam)(
    const opt_hyper *h, const opt_tensor *t, int64_t lo, int64_t hi)
{
    OPT_T *pp = (OPT_T *)t->p, *gp = (OPT_T *)t->g, *mp = (OPT_T *)t->s1, *vp = (OPT_T *)t->s2, *xp = (OPT_T *)t->s3;
    ADAM_SCALARS(OPT_T, OPT_ID)
    const OPT_VT vw = OPT_MM256(set1)(small ? w1 : w1m1), vb2 = OPT_MM256(set1)(b2),
             vc2 = OPT_MM256(set1)(c2), vwd = OPT_MM256(set1)(wdc), vdecay = OPT_MM256(set1)(decay),
             veps = OPT_MM256(set1)(epsc), vss = OPT_MM256(set1)(ssn), vbc = OPT_MM256(set1)(bc2s),
             vscale = OPT_MM256(set1)(scale), sign = OPT_MM256(set1)((OPT_T)-0.0);
    int64_t i = lo;
    for (; i + OPT_W <= hi; i += OPT_W) {
        OPT_V_LOAD_GRAD_PARAM();
        if (wd_on) {
            if (decoupled) p = OPT_MM256(mul)(p, vdecay);
            else g = OPT_MM256(fmadd)(p, vwd, g);
        }
        OPT_VT m = OPT_MM256(loadu)(mp + i);
        m = OPT_MM256(fmadd)(vw, OPT_MM256(sub)(g, m), small ? m : g);
        OPT_MM256(storeu)(mp + i, m);
        OPT_VT v = OPT_MM256(mul)(OPT_MM256(loadu)(vp + i), vb2);
        v = OPT_MM256(fmadd)(OPT_MM256(mul)(vc2, g), g, v);
        OPT_MM256(storeu)(vp + i, v);
        if (amsgrad) {
            OPT_VT x = OPT_MM256(loadu)(xp + i);
            v = OPT_MM256(blendv)(OPT_MM256(max)(x, v), x, OPT_MM256(cmp)(x, x, _CMP_UNORD_Q));
            OPT_MM256(storeu)(xp + i, v);
        }
        OPT_VT den = OPT_MM256(add)(OPT_MM256(div)(OPT_MM256(sqrt)(v), vbc), veps);
        p = OPT_MM256(add)(p, OPT_MM256(div)(OPT_MM256(mul)(vss, m), den));
        OPT_MM256(storeu)(pp + i, p);
    }
    for (; i < hi; i++) ADAM_ELEM(i, OPT_T, OPT_ID, OPT_ID, OPT_ID);
}
__attribute__((target("avx2,fma"))) static void OPT_AVX2_CHUNK(sgd)(
    const opt_hyper *h, const opt_tensor *t, int64_t lo, int64_t hi)
{
    OPT_T *pp = (OPT_T *)t->p, *gp = (OPT_T *)t->g, *bp = (OPT_T *)t->s1;
    SGD_SCALARS(OPT_T, OPT_ID)
    const OPT_VT vwd = OPT_MM256(set1)(wdc), vmom = OPT_MM256(set1)(mom), vdamp = OPT_MM256(set1)(damp1),
             vnlr = OPT_MM256(set1)(nlr), vscale = OPT_MM256(set1)(scale), sign = OPT_MM256(set1)((OPT_T)-0.0);
    int64_t i = lo;
    for (; i + OPT_W <= hi; i += OPT_W) {
        OPT_V_LOAD_GRAD_PARAM();
        if (wd_on) g = OPT_MM256(fmadd)(p, vwd, g);
        if (has_buf) {
            OPT_VT b = first ? g : OPT_MM256(fmadd)(g, vdamp, OPT_MM256(mul)(OPT_MM256(loadu)(bp + i), vmom));
            OPT_MM256(storeu)(bp + i, b);
            g = nesterov ? OPT_MM256(fmadd)(b, vmom, g) : b;
        }
        OPT_MM256(storeu)(pp + i, OPT_MM256(fmadd)(g, vnlr, p));
    }
    for (; i < hi; i++) SGD_ELEM(i, OPT_T, OPT_ID, OPT_ID, OPT_ID);
}
__attribute__((target("avx2,fma"))) static void OPT_AVX2_CHUNK(adagrad)(
    const opt_hyper *h, const opt_tensor *t, int64_t lo, int64_t hi)
{
    OPT_T *pp = (OPT_T *)t->p, *gp = (OPT_T *)t->g, *sp = (OPT_T *)t->s1;
    ADAGRAD_SCALARS(OPT_T, OPT_ID)
    const OPT_VT vwd = OPT_MM256(set1)(wdc), veps = OPT_MM256(set1)(epsc), vclr = OPT_MM256(set1)(nclr),
             vscale = OPT_MM256(set1)(scale), sign = OPT_MM256(set1)((OPT_T)-0.0);
    int64_t i = lo;
    for (; i + OPT_W <= hi; i += OPT_W) {
        OPT_V_LOAD_GRAD_PARAM();
        if (wd_on) g = OPT_MM256(fmadd)(p, vwd, g);
        OPT_VT s = OPT_MM256(fmadd)(g, g, OPT_MM256(loadu)(sp + i));
        OPT_MM256(storeu)(sp + i, s);
        OPT_VT std = OPT_MM256(add)(OPT_MM256(sqrt)(s), veps);
        OPT_MM256(storeu)(pp + i, OPT_MM256(add)(p, OPT_MM256(div)(OPT_MM256(mul)(vclr, g), std)));
    }
    for (; i < hi; i++) ADAGRAD_ELEM(i, OPT_T, OPT_ID, OPT_ID, OPT_ID);
}

#undef OPT_MM256
#undef OPT_AVX2_CHUNK
#undef OPT_V_LOAD_GRAD_PARAM
#undef OPT_N
#undef OPT_T
#undef OPT_VT
#undef OPT_X
#undef OPT_W
