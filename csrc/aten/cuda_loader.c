/* cuda_loader.c: opening the CUDA backend's library on first use (Note [Lazy CUDA] in cuda_api.h). */
#include "cuda_api.h"
#include "error.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char not_compiled[] = "Torch not compiled with CUDA enabled";

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const pct_cuda_api *loaded_api;  /* set once, by load_library */
static char load_failure[9216];          /* why the library could not be opened: "" when it was, or was never built */
static int library_missing;              /* the build made no library */

/* The path of pyctorch/_C_cuda.so: the folder of the library this function lives in (_C). 0, or -1 when unknown. */
static int library_path(char *path, size_t cap, char *self, size_t self_cap)
{
    Dl_info info;
    if (!dladdr((void *)library_path, &info) || !info.dli_fname) return -1;
    snprintf(self, self_cap, "%s", info.dli_fname);
    const char *slash = strrchr(info.dli_fname, '/');
    int dir_len = slash ? (int)(slash - info.dli_fname) : 1;
    snprintf(path, cap, "%.*s/_C_cuda.so", dir_len, slash ? info.dli_fname : ".");
    return 0;
}

static void load_library(void)
{
    char path[4096], self[4096];
    struct stat st;
    if (library_path(path, sizeof path, self, sizeof self) < 0 || stat(path, &st) != 0) {
        library_missing = 1;
        return;
    }
    /* _C was opened by Python with RTLD_LOCAL: made global, its symbols resolve the library's references */
    if (!dlopen(self, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)) {
        snprintf(load_failure, sizeof load_failure, "could not make %s global: %s", self, dlerror());
        return;
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_failure, sizeof load_failure, "could not load %s: %s", path, dlerror());
        return;
    }
    pct_cuda_entry_fn entry;
    *(void **)&entry = dlsym(lib, PCT_CUDA_ENTRY); /* a data pointer to a function pointer: POSIX's way */
    if (!entry) {
        snprintf(load_failure, sizeof load_failure, "%s has no %s", path, PCT_CUDA_ENTRY);
        return;
    }
    loaded_api = entry();
    if (!loaded_api) snprintf(load_failure, sizeof load_failure, "the CUDA backend of %s did not start", path);
}

const pct_cuda_api *pct_cuda(void)
{
    pthread_once(&load_once, load_library);
    if (loaded_api) return loaded_api;
    if (library_missing) return pct_error_str(PCT_ERR_ASSERTION, not_compiled);
    return pct_error(PCT_ERR_RUNTIME, "pyctorch's CUDA backend failed to load: %s", load_failure);
}

int pct_cuda_built(void)
{
    char path[4096], self[4096];
    struct stat st;
    return library_path(path, sizeof path, self, sizeof self) == 0 && stat(path, &st) == 0;
}

int pct_cuda_loaded(void) { return loaded_api != NULL; }
