/* runtime.c: the core's side of the runtime table (Note [The runtime table] in runtime.h): formatting errors and
 * warnings, and the small tuple helpers built on the table's entries. */
#include "runtime.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

pct_runtime_table pct_runtime;

/* Format into a stack buffer, or a heap one when the message is longer (torch's messages can name long shapes). */
static void format_and_call(void (*deliver)(int kind, const char *msg, void *ctx), int kind, void *ctx, const char *fmt,
                            va_list ap)
{
    char small[512];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        deliver(kind, fmt, ctx); /* an encoding error in the format: the format itself still says what failed */
    } else if ((size_t)n < sizeof small) {
        deliver(kind, small, ctx);
    } else {
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            deliver(kind, big, ctx);
            free(big);
        } else {
            deliver(kind, small, ctx); /* truncated rather than lost */
        }
    }
    va_end(again);
}

static void deliver_error(int kind, const char *msg, void *ctx)
{
    (void)ctx;
    pct_runtime.set_error((pct_error_kind)kind, msg);
}

static void deliver_warning(int kind, const char *msg, void *ctx)
{
    *(int *)ctx = pct_runtime.warn((pct_warning_kind)kind, msg);
}

void *pct_error(pct_error_kind kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format_and_call(deliver_error, (int)kind, NULL, fmt, ap);
    va_end(ap);
    return NULL;
}

void *pct_error_str(pct_error_kind kind, const char *message)
{
    pct_runtime.set_error(kind, message);
    return NULL;
}

int pct_warn(pct_warning_kind kind, const char *fmt, ...)
{
    int status = 0;
    va_list ap;
    va_start(ap, fmt);
    format_and_call(deliver_warning, (int)kind, &status, fmt, ap);
    va_end(ap);
    return status;
}

pct_object *pct_tuple_pack2(void *a, void *b)
{
    pct_object *items[2] = {pct_newref(a), pct_newref(b)};
    return pct_tuple_steal(2, items);
}

pct_object *pct_tuple_pack3(void *a, void *b, void *c)
{
    pct_object *items[3] = {pct_newref(a), pct_newref(b), pct_newref(c)};
    return pct_tuple_steal(3, items);
}

pct_object *pct_result_tuple(int n, struct pct_tensor *const *items)
{
    pct_object *objs[PCT_MAX_RESULTS];
    if (n > PCT_MAX_RESULTS) {
        for (int i = 0; i < n; i++) PCT_XDECREF(items[i]);
        return pct_error(PCT_ERR_RUNTIME, "pyctorch internal error: a result of %d tensors (at most %d)", n,
                         PCT_MAX_RESULTS);
    }
    for (int i = 0; i < n; i++) objs[i] = (pct_object *)items[i];
    return pct_tuple_steal(n, objs);
}
