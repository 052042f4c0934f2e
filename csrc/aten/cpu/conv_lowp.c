/* conv_lowp.c: bfloat16 convolution forward on CPUs with AVX512-BF16.
 *
 * The float32 engine (conv_engine.c) runs bfloat16 convolutions widened to float32; with the
 * bfloat16 GEMM (Note [bfloat16 GEMM] in gemm_lowp.c) the forward is twice as fast kept in
 * bfloat16: per sample and group, blocks of CONV_JB output positions are lowered with im2col
 * (2-byte elements; a 1x1 stride-1 convolution reads the input directly) and multiplied by the
 * group's weight, out = W (cs x K) @ col (K x positions), the bias entering as beta * C with C
 * prefilled, so each output is rounded once from its float32 sum, as oneDNN's are. */
#include "../iter.h"
#include "conv_lowp.h"
#include "gemm_lowp.h"
#include "im2col.h"
#include <stdlib.h>
#include <string.h>

#define CONV_JB 1024 /* output positions per GEMM: the column block (K x CONV_JB) stays in L2/L3 */

PyObject *pct_conv_bf16_forward(const pct_conv_plan *p, pct_tensor *input, pct_tensor *weight, pct_tensor *bias,
                                const int64_t *osz)
{
    /* depthwise and tiny-channel products do not fill the 6 x 64 tiles: the float32 engine */
    if (!pct_gemm_bf16_available() || p->cs < 8 || p->K < 8) return NULL;
    pct_tensor *x = NULL, *w = NULL, *b = NULL, *out = NULL;
    uint16_t *col = NULL;
    int rc = 0;
    if (!(x = pct_contiguous(input)) || !(w = pct_contiguous(weight)) || (bias && !(b = pct_contiguous(bias))))
        goto fail;
    if (!(out = pct_tensor_empty(input->ndim, osz, PCT_BFLOAT16, PCT_CPU, -1))) goto fail;
    const int64_t N = p->N, G = p->G, cb = p->cb, cs = p->cs, K = p->K, bvol = p->bvol, svol = p->svol;
    const int64_t jb = svol < CONV_JB ? svol : CONV_JB;
    if (!p->direct && out->numel && !(col = malloc(sizeof(uint16_t) * (size_t)(K * jb)))) {
        PyErr_NoMemory();
        goto fail;
    }
    const uint16_t *xd = (const uint16_t *)pct_tensor_data(x), *wd = (const uint16_t *)pct_tensor_data(w);
    const uint16_t *bd = b ? (const uint16_t *)pct_tensor_data(b) : NULL;
    uint16_t *od = (uint16_t *)pct_tensor_data(out);
    const int nt = pct_conv_threads();
    if (out->numel) {
        Py_BEGIN_ALLOW_THREADS
        for (int64_t n = 0; n < N && rc == 0; n++)
            for (int64_t g = 0; g < G && rc == 0; g++) {
                const uint16_t *big = xd + (n * G + g) * cb * bvol, *wg = wd + g * cs * K;
                uint16_t *c = od + (n * G + g) * cs * svol;
                for (int64_t j0 = 0; j0 < svol && rc == 0; j0 += jb) {
                    const int64_t jn = svol - j0 < jb ? svol - j0 : jb;
                    const uint16_t *src = big + j0;
                    int64_t ld = bvol;
                    if (!p->direct) {
                        pct_im2col(&p->geo, 2, big, col, jn, 0, cb, j0, j0 + jn);
                        src = col;
                        ld = jn;
                    }
                    if (bd)
                        for (int64_t r = 0; r < cs; r++)
                            for (int64_t j = 0; j < jn; j++) c[r * svol + j0 + j] = bd[g * cs + r];
                    rc = pct_gemm_bf16_native(cs, jn, K, 1.0f, bd ? 1.0f : 0.0f, !bd, wg, K, 1, src, ld, 1, c + j0, svol, 1,
                                              nt);
                }
            }
        Py_END_ALLOW_THREADS
    }
    if (rc < 0) {
        PyErr_NoMemory();
        goto fail;
    }
    free(col);
    Py_DECREF(x);
    Py_DECREF(w);
    Py_XDECREF(b);
    return (PyObject *)out;
fail:
    free(col);
    Py_XDECREF(x);
    Py_XDECREF(w);
    Py_XDECREF(b);
    Py_XDECREF(out);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "pyctorch internal error in the bfloat16 convolution; please report");
    return NULL;
}
