"""Builds pyctorch._C from csrc/ (C11).

Optional components are detected and reported one line each; every one can be
turned off with an environment variable (PYCTORCH_NO_OPENMP, PYCTORCH_NO_OPENBLAS,
PYCTORCH_NO_CUDA, PYCTORCH_NO_NCCL, PYCTORCH_NO_GLOO,
PYCTORCH_NO_POCKETFFT). PYCTORCH_SANITIZE=1 builds
with AddressSanitizer and UndefinedBehaviorSanitizer; PYCTORCH_NO_AVX512=1 keeps
AVX-512 code out of the binary (for valgrind).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def off(name):
    return os.environ.get(f"PYCTORCH_NO_{name}", "") not in ("", "0")


def compiles(code, flags=(), libs=(), cxx=False):
    """True when a small C (or, with cxx, C++) program compiles and links with these flags."""
    cc = "g++" if cxx else (sysconfig.get_config_var("CC").split()[0] or "cc")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.cc" if cxx else "t.c")
        with open(src, "w") as f:
            f.write(code)
        cmd = [cc, src, "-o", os.path.join(d, "t"), *flags, *libs]
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def report(component, found, detail=""):
    state = "found" if found else "not found"
    print(f"-- pyctorch: {component:<9} {state}{(': ' + detail) if detail else ''}", flush=True)


define_macros = []
extra_compile = ["-std=c11", "-O3", "-Wall", "-Wextra", "-fno-strict-aliasing",
                 # sqrt becomes an instruction the vectorizer can use (nothing reads errno after math), and so do floor,
                 # ceil and trunc (nothing here reads or traps on the floating-point exception flags): the values are IEEE's
                 "-fno-math-errno", "-fno-trapping-math",
                 "-D_GNU_SOURCE",  # what Python.h's pyconfig.h gave every file when the core included it
                 "-g0"]  # Python's CFLAGS ask for debug info: a third of the build's time, which torch's wheels lack too
extra_link = []
libraries = ["m"]

# OpenMP: threads for elementwise loops and reductions.
if off("OPENMP"):
    report("OpenMP", False, "disabled by PYCTORCH_NO_OPENMP")
elif compiles("#include <omp.h>\nint main(void){return omp_get_max_threads() < 0;}", ["-fopenmp"]):
    extra_compile.append("-fopenmp")
    extra_link.append("-fopenmp")
    report("OpenMP", True, "-fopenmp")
else:
    report("OpenMP", False)

# OpenBLAS (Debian's libopenblas-openmp-dev shares libgomp's thread pool with our loops).
if off("OPENBLAS"):
    report("OpenBLAS", False, "disabled by PYCTORCH_NO_OPENBLAS")
elif compiles("#include <cblas.h>\nint main(void){float a=1,b=1,c=0;"
              "cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,1,1,1,1.f,&a,1,&b,1,0.f,&c,1);return c!=1;}",
              libs=["-lopenblas"]):
    define_macros.append(("PCT_HAVE_OPENBLAS", "1"))
    libraries.append("openblas")
    report("OpenBLAS", True, "-lopenblas")
else:
    report("OpenBLAS", False, "GEMM uses the built-in blocked kernel (apt-get install libopenblas-openmp-dev)")

# glibc's vector math library (part of the C library since 2.22; the AVX2/AVX-512
# forms of tanh, erf, log1p... since 2.35): SIMD transcendental functions.
if compiles("#include <immintrin.h>\n__m256 _ZGVdN8v_tanhf(__m256);\n__attribute__((target(\"avx2\"))) int main(void)"
            "{__m256 x = _ZGVdN8v_tanhf(_mm256_set1_ps(0.5f)); return _mm256_cvtss_f32(x) < 0;}", ["-Wno-psabi"], ["-lmvec"]):
    define_macros.append(("PCT_HAVE_LIBMVEC", "1"))
    libraries.append("mvec")
    report("libmvec", True, "SIMD exp/log/tanh/erf...")
else:
    report("libmvec", False, "transcendental ops use scalar libm")

# CUDA: found through CUDA_HOME, /usr/local/cuda or nvcc on the PATH; never required. The backend (csrc/cuda/: C
# files by the C compiler, .cu files by nvcc) becomes its own library, pyctorch/_C_cuda.so, linked with the static
# CUDA runtime and loaded by _C on first CUDA use (Note [Lazy CUDA] in csrc/aten/cuda_api.h), so importing pyctorch
# never loads CUDA.
def find_cuda_home():
    if os.environ.get("CUDA_HOME"):
        return os.environ["CUDA_HOME"]
    if os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda"
    nvcc = shutil.which("nvcc")
    return os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else None


def find_cublas(cuda_home):
    """(include dir, library dir, library file name) of cuBLAS: the toolkit's, else the nvidia-cublas wheel's."""
    for inc, lib in [(os.path.join(cuda_home, "include"), os.path.join(cuda_home, "lib64"))] + [
            (os.path.join(site, "nvidia", sub, "include"), os.path.join(site, "nvidia", sub, "lib"))
            for site in sorted(set(sys.path)) if os.path.isdir(os.path.join(site, "nvidia"))
            for sub in ("cu13", "cublas")]:
        libs = sorted(glob.glob(os.path.join(lib, "libcublas.so*")))
        if os.path.exists(os.path.join(inc, "cublas_v2.h")) and libs:
            return inc, lib, os.path.basename(libs[0])
    return None


cuda_home = None if off("CUDA") else find_cuda_home()
cuda_sources = sorted(glob.glob(os.path.join("csrc", "cuda", "*.cu")))
cuda_c_sources = sorted(glob.glob(os.path.join("csrc", "cuda", "*.c")))
cublas = None
if off("CUDA"):
    report("CUDA", False, "disabled by PYCTORCH_NO_CUDA")
elif cuda_home and os.path.exists(os.path.join(cuda_home, "bin", "nvcc")) and (cuda_sources or cuda_c_sources):
    report("CUDA", True, f"{cuda_home}: the backend builds into pyctorch/_C_cuda.so")
    cublas = find_cublas(cuda_home)
    report("cuBLAS", bool(cublas), cublas[1] if cublas else "(pip install nvidia-cublas; CUDA matmul is unavailable)")
else:
    cuda_home = None
    report("CUDA", False, "(no nvcc: CPU-only build)")

nccl = cuda_home and os.path.exists(os.path.join(cuda_home, "include", "nccl.h"))
report("NCCL", bool(nccl) and not off("NCCL"), "" if nccl else "(needs CUDA and nccl.h)")
# Gloo (Debian's libgloo-dev): CPU collectives for torch.distributed, called through one C++ shim
# (csrc/distributed/gloo_shim.cc, compiled apart by g++ and linked with -lgloo -lstdc++).
GLOO_SHIM = os.path.join("csrc", "distributed", "gloo_shim.cc")
gloo_test = ("#include <gloo/rendezvous/context.h>\n#include <gloo/transport/tcp/device.h>\n"
             "int main(){auto d = gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr(\"127.0.0.1\"));"
             "return d ? 0 : 1;}")
if off("GLOO"):
    gloo = False
    report("Gloo", False, "disabled by PYCTORCH_NO_GLOO")
else:
    gloo = bool(shutil.which("g++")) and compiles(gloo_test, ["-std=c++17"], ["-lgloo"], cxx=True)
    report("Gloo", gloo, "-lgloo -lstdc++" if gloo else "(apt-get install libgloo-dev; torch.distributed has no backend)")
if gloo:
    define_macros.append(("PCT_HAVE_GLOO", "1"))
    libraries += ["gloo", "stdc++"]

# pocketfft (torch.fft): a C++ header-only library the Makefile's `pocketfft` target fetches (it is not committed),
# called through one C++ shim (csrc/aten/cpu/fft_pocketfft.cc, compiled apart by g++ and linked with -lstdc++).
POCKETFFT_DIR = os.path.join(ROOT, "build", "third_party", "pocketfft")
POCKETFFT_SHIM = os.path.join("csrc", "aten", "cpu", "fft_pocketfft.cc")
if off("POCKETFFT"):
    pocketfft = False
    report("pocketfft", False, "disabled by PYCTORCH_NO_POCKETFFT")
else:
    pocketfft = bool(shutil.which("g++")) and compiles(
        "#include <pocketfft_hdronly.h>\nint main(){return 0;}", ["-std=c++17", "-I" + POCKETFFT_DIR], cxx=True)
    report("pocketfft", pocketfft, POCKETFFT_DIR if pocketfft else "(make pocketfft; torch.fft raises)")
if pocketfft:
    define_macros.append(("PCT_HAVE_POCKETFFT", "1"))
    if "stdc++" not in libraries:
        libraries.append("stdc++")

if os.environ.get("PYCTORCH_SANITIZE", "") not in ("", "0"):
    san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
    extra_compile = [f for f in extra_compile if f != "-O3"] + ["-O1", "-g"] + san
    extra_link += san
    report("sanitizer", True, "ASan + UBSan")

# The GPU architectures the CUDA backend is compiled for, in torch's TORCH_CUDA_ARCH_LIST form ("8.0;9.0+PTX": machine
# code for each, and PTX of those marked +PTX, which newer chips compile at load). PYCTORCH_CUDA_ARCH_LIST chooses;
# the default is sm_80 (A100) and sm_90 (H100/H200) with PTX of sm_90. "native" builds for the GPUs this machine has
# (nvcc's device query). Where it has none, "native" is a compile check, as `make test` wants on a machine that cannot
# run device code: every .cu file goes through nvcc's front end, the device compiler (to PTX of sm_90) and the host
# compiler, but ptxas (PTX to machine code) is left out and the host and device code are compiled at -O0 (nvcc's and
# cicc's). Nothing can launch those kernels there (the simulated device has none, Note [Simulated CUDA device]), and
# the check takes a fraction of the 9.0+PTX build's time (a pointwise shard: 53 s instead of 124 s with the host code
# at -O0, most of the rest was gcc optimising the launch stubs; 14 s instead of 32 s with the device code at -O0 too);
# a GPU that finds only PTX compiles it at load.
CUDA_DEFAULT_ARCHS = "8.0;9.0+PTX"
CUDA_CHECK_ARCH = "9.0"


def native_cuda_archs():
    """The compute capabilities of this machine's GPUs ("9.0;8.0"), from nvcc's device query; "" without one."""
    query = os.path.join(cuda_home, "bin", "__nvcc_device_query")
    try:
        out = subprocess.run([query], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    caps = sorted({c for c in re.split(r"[,;\s]+", out.strip()) if re.fullmatch(r"\d{2,3}", c)}, key=int)
    return ";".join(f"{int(c) // 10}.{int(c) % 10}" for c in caps)


def cuda_arch_flags(spec):
    """nvcc's -gencode and host -O flags for an arch list ("8.0;9.0+PTX"), and a tag naming it ("80_90ptx")."""
    if spec.strip() == "native":
        found = native_cuda_archs()
        if not found:  # the compile check: PTX only, host and device code unoptimised (cicc's -O0 halves its time)
            sm = CUDA_CHECK_ARCH.replace(".", "")
            return ["-gencode", f"arch=compute_{sm},code=compute_{sm}", "-O0", "-Xcicc", "-O0"], f"check{sm}"
        spec = found + "+PTX"
    flags, tags = ["-O3"], []
    for item in re.split(r"[;\s]+", spec.strip()):
        m = re.fullmatch(r"(\d+)\.(\d)(\+PTX)?", item)
        if not m:
            sys.exit(f"PYCTORCH_CUDA_ARCH_LIST: cannot read {item!r} (write it as 8.0;9.0+PTX)")
        sm = m.group(1) + m.group(2)
        code = f"[sm_{sm},compute_{sm}]" if m.group(3) else f"sm_{sm}"
        flags += ["-gencode", f"arch=compute_{sm},code={code}"]
        tags.append(sm + ("ptx" if m.group(3) else ""))
    if len(tags) > 1:
        flags += ["--threads", str(len(tags))]  # the architectures of one file compile side by side
    return flags, "_".join(tags)


CUDA_ARCH_FLAGS, CUDA_ARCH_TAG = cuda_arch_flags(os.environ.get("PYCTORCH_CUDA_ARCH_LIST") or CUDA_DEFAULT_ARCHS) \
    if cuda_home else ([], "")
if cuda_home:
    report("CUDA archs", True, CUDA_ARCH_TAG)


def cuda_units(sources):
    """(source, object name, extra nvcc flags) of each object of the CUDA backend: pointwise.cu once per shard (Note
    [Shards of the pointwise loops] in csrc/cuda/pointwise.cuh, which gives the count)."""
    units = []
    for src in sources:
        stem = os.path.splitext(os.path.basename(src))[0]
        if os.path.basename(src) == "pointwise.cu":
            with open(os.path.join(os.path.dirname(src), "pointwise.cuh")) as f:
                shards = int(re.search(r"#define PCT_CUDA_PW_SHARDS (\d+)", f.read()).group(1))
            units += [(src, f"{stem}_{k}", [f"-DPCT_CUDA_PW_SHARD={k}"]) for k in range(shards)]
        else:
            units.append((src, stem, []))
    return units

if off("AVX512"):
    define_macros.append(("PCT_NO_AVX512", "1"))

import numpy  # noqa: E402  (build requirement: headers for the interop layer)

# The typed argument structs of the operator table (Note [Typed arguments] in csrc/aten/op.h), generated from the
# schemas into build/generated/op_args.h (not committed; rewritten only when the table changed).
GENERATED = os.path.join(ROOT, "build", "generated")
subprocess.run([sys.executable, os.path.join(ROOT, "csrc", "codegen", "gen_op_args.py"), os.path.join(ROOT, "csrc", "aten"),
                os.path.join(GENERATED, "op_args.h")], check=True)

sources = sorted(p for p in glob.glob(os.path.join("csrc", "**", "*.c"), recursive=True)
                 if not p.startswith(os.path.join("csrc", "cuda", "")))  # csrc/cuda: the CUDA library
# headers and op tables: a change to one must reach build_extension (which then recompiles
# only the objects whose dependency files name it)
depends = sorted(glob.glob(os.path.join("csrc", "**", "*.h"), recursive=True)
                 + glob.glob(os.path.join("csrc", "**", "*.def"), recursive=True)
                 + [os.path.join("pyctorch", "include", "pyctorch", "extension.h")]  # extension_api.c includes it
                 + ([GLOO_SHIM] if gloo else [])  # the shims are linked in: a change to one must relink
                 + ([POCKETFFT_SHIM] if pocketfft else [])
                 + ["setup.py"])  # its flags: a change reaches build_extension, whose flags stamp then rebuilds all


def object_is_current(obj):
    """True when obj and its gcc dependency file (-MMD) are newer than every file it was built from."""
    dep = os.path.splitext(obj)[0] + ".d"
    if not (os.path.exists(obj) and os.path.exists(dep)):
        return False
    with open(dep) as f:
        inputs = f.read().replace("\\\n", " ").split(":", 1)[-1].split()
    built = os.path.getmtime(obj)
    return all(os.path.exists(p) and os.path.getmtime(p) <= built for p in inputs)


def build_jobs():
    """Compiler processes at once: PYCTORCH_BUILD_JOBS, else one per core."""
    jobs = os.environ.get("PYCTORCH_BUILD_JOBS", "")
    return max(1, int(jobs)) if jobs.isdigit() else (os.cpu_count() or 1)


class ParallelBuildExt(build_ext):
    """Compiles the C files of the extension in parallel, one compiler per core (setuptools'
    own --parallel only builds several extensions at once, and pyctorch has one), recompiling
    only the objects whose sources or included headers changed (distutils alone rebuilds
    every file). The largest sources start first so the last compiler to finish is not
    left alone with a big file."""

    def build_extension(self, ext):
        compiler = self.compiler
        compile_serial = compiler.compile

        def compile_parallel(sources, output_dir=None, macros=None, include_dirs=None, debug=0, extra_preargs=None,
                             extra_postargs=None, depends=None):
            macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)
            # the command line every object was built with: another one (a flag added to setup.py, the sanitizer
            # build's) makes every object stale, which the sources' dates alone would not
            flags = " ".join([compiler.compiler_so[0]] + list(cc_args) + list(extra_postargs) + list(pp_opts))
            stamp = os.path.join(self.build_temp, "compile_flags.txt")
            same_flags = os.path.exists(stamp) and open(stamp).read() == flags
            stale = [obj for obj in objects if self.force or not same_flags or not object_is_current(obj)]
            stale.sort(key=lambda obj: -os.path.getsize(build[obj][0]))

            def compile_object(obj):
                src, ext_ = build[obj]
                dep = os.path.splitext(obj)[0] + ".d"
                compiler._compile(obj, src, ext_, cc_args, list(extra_postargs) + ["-MMD", "-MF", dep], pp_opts)

            with ThreadPoolExecutor(build_jobs()) as pool:
                shims = ([pool.submit(self.build_cxx_shim, GLOO_SHIM, [])] if gloo else []) + (
                    [pool.submit(self.build_cxx_shim, POCKETFFT_SHIM, ["-I" + POCKETFFT_DIR])] if pocketfft else [])
                list(pool.map(compile_object, stale))  # re-raises the first compile error
                os.makedirs(self.build_temp, exist_ok=True)
                with open(stamp, "w") as f:
                    f.write(flags)
                ext.extra_objects = [shim.result() for shim in shims]
            return objects

        compiler.compile = compile_parallel
        try:
            super().build_extension(ext)
        finally:
            compiler.compile = compile_serial

    def run(self):
        super().run()
        if cuda_home:  # after _C (which setuptools skips when it is current): the CUDA backend's library
            with ThreadPoolExecutor(build_jobs()) as pool:
                # the .cu files first (nvcc takes longest), the pointwise shards first of all (minutes each)
                units = sorted(cuda_units(cuda_sources), key=lambda unit: not unit[2]) + cuda_units(cuda_c_sources)
                objects = list(pool.map(lambda unit: self.build_cuda_object(*unit), units))
            self.link_cuda_library(objects)

    def build_cuda_object(self, src, name, extra_flags):
        """Compiles one object of the CUDA backend (a .c by the C compiler, a .cu by nvcc), when it changed. The objects
        of each arch list have their own folder, so that changing the list recompiles and changing it back does not."""
        obj = os.path.join(self.build_temp, "cuda_" + CUDA_ARCH_TAG, name + ".o")
        if not self.force and object_is_current(obj):
            return obj
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        includes = ["-I" + os.path.join(ROOT, "csrc"), "-I" + GENERATED, "-I" + os.path.join(cuda_home, "include")]
        if cublas:
            includes.append("-I" + cublas[0])
        macros = ["-D%s=%s" % m for m in define_macros]
        if cublas:  # Note [cuBLAS table]: opened with dlopen on first use, not linked
            macros += ["-DPCT_HAVE_CUBLAS=1", '-DPCT_CUBLAS_PATH="%s"' % os.path.join(cublas[1], cublas[2])]
        dep = obj[:-2] + ".d"
        if src.endswith(".cu"):
            cmd = [os.path.join(cuda_home, "bin", "nvcc"), "-std=c++17", "-Xcompiler", "-fPIC,-Wall,-Wextra",
                   "--expt-relaxed-constexpr", *CUDA_ARCH_FLAGS, *includes, *macros, *extra_flags, "-MD", "-MF", dep,
                   "-c", src, "-o", obj]
        else:
            flags = [f for f in extra_compile if f != "-fopenmp"]
            cmd = [sysconfig.get_config_var("CC").split()[0] or "cc", "-fPIC", *flags, *includes,
                   "-I" + numpy.get_include(), *macros, "-MMD", "-MF", dep, "-c", src, "-o", obj]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        return obj

    def link_cuda_library(self, objects):
        """Links pyctorch/_C_cuda.so (beside _C) from the backend's objects and the static CUDA runtime. The core's
        symbols stay undefined here: _C provides them when it loads this library (Note [Lazy CUDA])."""
        target = os.path.join(ROOT if self.inplace else self.build_lib, "pyctorch", "_C_cuda.so")
        stamp = os.path.join(self.build_temp, "_C_cuda.objects")  # what the library was last linked from
        linked = open(stamp).read() if os.path.exists(stamp) else ""
        if (not self.force and os.path.exists(target) and linked == "\n".join(objects)
                and all(os.path.getmtime(o) <= os.path.getmtime(target) for o in objects)):
            return
        libs = ["-L" + os.path.join(cuda_home, "lib64"), "-lcudart_static", "-ldl", "-lrt", "-lpthread"]
        san = ["-fsanitize=address,undefined"] if os.environ.get("PYCTORCH_SANITIZE", "") not in ("", "0") else []
        cmd = ["g++", "-shared", "-o", target, *objects, *libs, *san]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        with open(stamp, "w") as f:
            f.write("\n".join(objects))

    def build_cxx_shim(self, src, includes):
        """Compiles one C++ shim (Gloo's, pocketfft's) with g++ (the C flags would not suit it), when it changed."""
        obj = os.path.join(self.build_temp, os.path.splitext(os.path.basename(src))[0] + ".o")
        if self.force or not object_is_current(obj):
            os.makedirs(self.build_temp, exist_ok=True)
            flags = ["-std=c++17", "-O2", "-fPIC", "-Wall", "-Wextra"]
            if os.environ.get("PYCTORCH_SANITIZE", "") not in ("", "0"):
                flags += ["-fsanitize=address,undefined", "-g"]
            cmd = ["g++", *flags, "-I" + os.path.join(ROOT, "csrc"), *includes, "-MMD", "-MF", obj[:-2] + ".d",
                   "-c", src, "-o", obj]
            print(" ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)
        return obj


setup(
    ext_modules=[
        Extension(
            "pyctorch._C",
            sources=sources,
            depends=depends,
            include_dirs=[numpy.get_include(), os.path.join(ROOT, "csrc"), GENERATED],
            define_macros=define_macros,
            extra_compile_args=extra_compile,
            extra_link_args=extra_link,
            libraries=libraries,
        )
    ],
    cmdclass={"build_ext": ParallelBuildExt},
)
