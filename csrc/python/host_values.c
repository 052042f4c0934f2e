/* host_values.c: a tensor's values where the host can read them (item(), tolist(), int(), bool(), torch.tensor of
 * tensors): CPU memory as it is, a device's copied over, a meta tensor's refused. */
#include "pyobjects.h"
#include "../aten/iter.h"
#include <string.h>

pct_tensor *pct_host_values(pct_tensor *t)
{
    if (pct_check_has_data(t) < 0) return NULL;
    if (t->device_type == PCT_CPU) {
        Py_INCREF(t);
        return t;
    }
    pct_tensor *h = pct_tensor_empty(t->ndim, t->sizes, t->dtype, PCT_CPU, -1);
    if (h && pct_copy_(h, t) < 0) Py_CLEAR(h);
    return h;
}

const void *pct_element_ptr(pct_tensor *t, pct_element_buf *buf)
{
    if (pct_check_has_data(t) < 0) return NULL;
    if (t->device_type == PCT_CPU) return pct_tensor_data(t);
    int64_t one = 1;
    pct_tensor *first = pct_tensor_new_alias(t, false); /* t's first element alone: a 1-element view */
    pct_tensor *h = first && pct_tensor_set_shape(first, 1, &one, &one) == 0 ? pct_host_values(first) : NULL;
    Py_XDECREF(first);
    if (!h) return NULL;
    memcpy(buf->bytes, pct_tensor_data(h), (size_t)pct_dtype_itemsize[h->dtype]);
    Py_DECREF(h);
    return buf->bytes;
}
