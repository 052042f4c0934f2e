/* cuda_device.c: the driver in use, the devices, torch's errors for CUDA calls, and the current device. */
#include "cuda_internal.h"
#include "aten/error.h"
#include <stdio.h>

const pct_cuda_driver *pct_cuda_drv;
static int device_count;          /* set once by pct_cuda_devices_init */
static int count_error;           /* the code cudaGetDeviceCount gave when it failed, else 0 */
static char unavailable[512];     /* why there is no device, for is_available's warning */
static int initialized;           /* a device was used */

static const char no_driver[] = "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
                                "installed a driver from http://www.nvidia.com/Download/index.aspx";
static const char no_device[] = "No CUDA GPUs are available";

void pct_cuda_devices_init(void)
{
    pct_cuda_drv = pct_cuda_sim_requested() ? &pct_cuda_driver_sim : &pct_cuda_driver_real;
    int n = 0;
    int rc = pct_cuda_drv->device_count(&n);
    if (rc) { /* no driver, no device, a broken install: CUDA is unavailable, not an error at load */
        count_error = rc;
        n = 0;
        snprintf(unavailable, sizeof unavailable, "CUDA initialization: %s (error %d)",
                 rc == PCT_CUDA_ERROR_INSUFFICIENT_DRIVER ? no_driver : pct_cuda_drv->error_string(rc), rc);
        (void)pct_cuda_drv->last_error(); /* the runtime keeps the failure as its last error: clear it */
    } else if (n == 0) {
        count_error = PCT_CUDA_ERROR_NO_DEVICE;
        snprintf(unavailable, sizeof unavailable, "%s", no_device);
    }
    device_count = n > PCT_CUDA_MAX_DEVICES ? PCT_CUDA_MAX_DEVICES : n;
}

int pct_cuda_device_count(void) { return device_count; }
const char *pct_cuda_unavailable_reason(void) { return device_count ? NULL : unavailable; }
int pct_cuda_is_initialized(void) { return initialized; }

int pct_cuda_raise(int code, const char *what)
{
    if (code == PCT_CUDA_ERROR_INSUFFICIENT_DRIVER) pct_error_str(PCT_ERR_RUNTIME, no_driver);
    else if (code == PCT_CUDA_ERROR_NO_DEVICE) pct_error_str(PCT_ERR_RUNTIME, no_device);
    else
        pct_error(PCT_ERR_RUNTIME,
                  "CUDA error: %s\nCUDA kernel errors might be asynchronously reported at some other API call, so the "
                  "stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                  "(raised by %s)",
                  pct_cuda_drv->error_string(code), what);
    return -1;
}

void *pct_cuda_raise_ptr(int code, const char *what)
{
    pct_cuda_raise(code, what);
    return NULL;
}

int pct_cuda_resolve_device(int index)
{
    if (device_count == 0) return pct_cuda_raise(count_error, "cudaGetDeviceCount");
    if (index < 0) {
        int d = 0;
        int rc = pct_cuda_drv->get_device(&d);
        if (rc) return pct_cuda_raise(rc, "cudaGetDevice");
        index = d;
    }
    if (index >= device_count) return pct_cuda_raise(PCT_CUDA_ERROR_INVALID_DEVICE, "a device index");
    initialized = 1;
    return index;
}

int pct_cuda_current_device(void) { return pct_cuda_resolve_device(-1); }

int pct_cuda_set_device(int device)
{
    int d = pct_cuda_resolve_device(device);
    if (d < 0) return -1;
    int rc = pct_cuda_drv->set_device(d);
    return rc ? pct_cuda_raise(rc, "cudaSetDevice") : 0;
}

int pct_cuda_device_enter(int device, int *previous)
{
    int now = pct_cuda_resolve_device(-1);
    if (now < 0) return -1;
    *previous = now;
    if (device < 0 || device == now) return 0;
    return pct_cuda_set_device(device);
}

void pct_cuda_device_restore(int previous)
{
    int now = -1;
    if (pct_cuda_drv->get_device(&now) == 0 && now != previous) (void)pct_cuda_drv->set_device(previous);
}

int pct_cuda_get_device_properties(int device, pct_cuda_device_properties *out)
{
    int d = pct_cuda_resolve_device(device);
    if (d < 0) return -1;
    int rc = pct_cuda_drv->properties(d, out);
    return rc ? pct_cuda_raise(rc, "cudaGetDeviceProperties") : 0;
}

int pct_cuda_mem_get_info(int device, size_t *free_bytes, size_t *total_bytes)
{
    int previous;
    if (pct_cuda_device_enter(device, &previous) < 0) return -1;
    int rc = pct_cuda_drv->mem_get_info(free_bytes, total_bytes);
    pct_cuda_device_restore(previous);
    return rc ? pct_cuda_raise(rc, "cudaMemGetInfo") : 0;
}
