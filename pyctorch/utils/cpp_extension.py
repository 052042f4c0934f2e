"""pyctorch.utils.cpp_extension: build C (and C++, CUDA) extensions of pyctorch, just in time or with setuptools.

Extensions are written against the public C header ``pyctorch/extension.h`` that the package installs
(``include_paths()`` gives its folder; Note [The extension C API] in csrc/python/extension_api.c says how it reaches
pyctorch's tensors). The names follow torch.utils.cpp_extension:

* ``load(name, sources, ...)`` compiles the sources with the system compiler, links a Python extension module,
  imports it and returns it. Builds are cached in the build directory (``build_directory``, else
  ``$TORCH_EXTENSIONS_DIR/<name>``, else ``~/.cache/pyctorch_extensions/py<ver>_cpu/<name>``) under a hash of the
  sources' contents, the flags, the header, the compilers and Python: loading the same thing again (in this process or
  a later one) compiles nothing.
* ``load_inline(name, cpp_sources, cuda_sources=None, functions=None, ...)`` writes the sources to files in the build
  directory and loads them. See its docstring for the C convention of ``functions``.
* ``CppExtension`` / ``CUDAExtension`` return ``setuptools.Extension`` objects with the include path set;
  ``BuildExtension`` is the ``build_ext`` command that compiles them (``.cu`` files with nvcc).

Languages, by file name: ``.c`` compiles as C11 with the C compiler, ``.cpp``/``.cc``/``.cxx`` as C++17 with the C++
compiler, ``.cu`` with nvcc (CUDA_HOME). The compilers are Python's own (sysconfig's CC and CXX, overridden by the CC
and CXX environment variables), with -O2 and -fPIC. pyctorch compiles directly (no ninja): ``use_ninja`` is accepted
and ignored, and ``is_ninja_available``/``verify_ninja_availability`` report on ninja as torch's do.
"""
import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension
from setuptools.command.build_ext import build_ext

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform.startswith("darwin")
IS_LINUX = sys.platform.startswith("linux")
LIB_EXT = ".pyd" if IS_WINDOWS else ".so"
SHARED_FLAG = "-shared"

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INCLUDE_DIR = os.path.join(_PACKAGE_DIR, "include")
_HEADER = os.path.join(_INCLUDE_DIR, "pyctorch", "extension.h")
_C_SUFFIXES = (".c",)
_CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".C")
_CUDA_SUFFIXES = (".cu",)
COMMON_NVCC_FLAGS = ["--expt-relaxed-constexpr"]


def _find_cuda_home():
    """The CUDA toolkit's folder: $CUDA_HOME or $CUDA_PATH, else /usr/local/cuda, else nvcc's on the PATH; or None."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        return home
    if os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda"
    nvcc = shutil.which("nvcc")
    return os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else None


CUDA_HOME = _find_cuda_home()
ROCM_HOME = None  # pyctorch has no ROCm backend
SYCL_HOME = None
IS_HIP_EXTENSION = False

CUDA_NOT_FOUND_MESSAGE = ("CUDA was not found: nvcc is needed to build CUDA sources (set CUDA_HOME to the toolkit's "
                          "folder, or put nvcc on the PATH)")


def _nvcc():
    nvcc = os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else None
    if not nvcc or not os.path.exists(nvcc):
        raise OSError(CUDA_NOT_FOUND_MESSAGE)
    return nvcc


def include_paths(device_type="cpu", torch_include_dirs=True):
    """The include folders an extension needs: pyctorch's (holding ``pyctorch/extension.h``), and CUDA's for
    device_type "cuda" (True also means CUDA, as torch's older ``cuda=True``)."""
    paths = [_INCLUDE_DIR] if torch_include_dirs else []
    if device_type in ("cuda", True):
        paths.append(os.path.join(_nvcc_home(), "include"))
    return paths


def library_paths(device_type="cpu", torch_include_dirs=True, cross_target_platform=None):
    """The library folders an extension links from. An extension of pyctorch links against no library of pyctorch's
    (it reaches pyctorch through the capsule pct_ext_import() reads), so this is empty on the CPU; for "cuda" it is the
    toolkit's library folder (cudart)."""
    if device_type in ("cuda", True):
        home = _nvcc_home()
        for sub in ("lib64", "lib"):
            if os.path.isdir(os.path.join(home, sub)):
                return [os.path.join(home, sub)]
        return [os.path.join(home, "lib64")]
    return []


def _nvcc_home():
    _nvcc()
    return CUDA_HOME


def is_ninja_available():
    """True when the ninja build system is on the PATH (pyctorch compiles without it either way)."""
    return shutil.which("ninja") is not None


def verify_ninja_availability():
    """Raise RuntimeError when ninja is not on the PATH, as torch's does."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja)")


def get_default_build_root():
    """The folder under which load() builds: $XDG_CACHE_HOME/pyctorch_extensions (~/.cache by default)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.realpath(os.path.join(cache, "pyctorch_extensions"))


def get_compiler_abi_compatibility_and_version(compiler=None):
    """(True, version string) for the C compiler: a C extension of pyctorch has no C++ ABI to match."""
    compiler = compiler or _c_compiler()[0]
    try:
        out = subprocess.run([compiler, "-dumpfullversion", "-dumpversion"], capture_output=True, text=True)
        return True, out.stdout.strip()
    except OSError:
        return False, ""


def _compiler(env, config, fallback):
    value = os.environ.get(env) or sysconfig.get_config_var(config) or fallback
    return shlex.split(value)


def _c_compiler():
    return _compiler("CC", "CC", "cc")


def _cxx_compiler():
    return _compiler("CXX", "CXX", "c++")


def _python_include():
    return sysconfig.get_paths()["include"]


def _language(path):
    if path.endswith(_CUDA_SUFFIXES):
        return "cuda"
    if path.endswith(_CXX_SUFFIXES):
        return "c++"
    if path.endswith(_C_SUFFIXES):
        return "c"
    raise ValueError(f"cpp_extension: cannot tell the language of source '{path}' (expected .c, .cpp/.cc/.cxx or .cu)")


def _includes(extra_include_paths, with_cuda):
    paths = include_paths("cuda" if with_cuda else "cpu") + [_python_include()] + list(extra_include_paths or [])
    return ["-I" + p for p in paths]


def _compile_command(src, obj, lang, cflags, cuda_cflags, includes):
    if lang == "cuda":
        return [_nvcc(), "-c", src, "-o", obj, "-O2", "-Xcompiler", "-fPIC", *COMMON_NVCC_FLAGS, *includes,
                *cuda_cflags]
    if lang == "c++":
        return [*_cxx_compiler(), "-c", src, "-o", obj, "-O2", "-fPIC", "-std=c++17", *includes, *cflags]
    return [*_c_compiler(), "-c", src, "-o", obj, "-O2", "-fPIC", "-std=c11", *includes, *cflags]


def _link_command(objects, output, langs, ldflags, with_cuda):
    linker = _cxx_compiler() if ("c++" in langs or "cuda" in langs) else _c_compiler()
    cuda = []
    if with_cuda:
        # rpath: the module finds the toolkit's cudart without LD_LIBRARY_PATH
        cuda = [*(f for p in library_paths("cuda") for f in ("-L" + p, "-Wl,-rpath," + p)), "-lcudart"]
    return [*linker, SHARED_FLAG, *objects, "-o", output, *cuda, *ldflags]


def _run(cmd, name, verbose):
    if verbose:
        print(" ".join(shlex.quote(c) for c in cmd), flush=True)
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        raise RuntimeError(f"Error building extension '{name}': cannot run {cmd[0]}: {e}") from e
    if verbose and done.stdout:
        print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        raise RuntimeError(f"Error building extension '{name}':\n$ {' '.join(shlex.quote(c) for c in cmd)}\n"
                           f"{done.stdout}")


def _build_hash(sources, langs, cflags, cuda_cflags, ldflags, includes, with_cuda, name):
    """A hash of everything that decides the binary: contents, flags, compilers, header, Python."""
    h = hashlib.sha256()

    def add(*parts):
        for p in parts:
            h.update(repr(p).encode())
            h.update(b"\0")

    add(name, sys.version, sysconfig.get_config_var("EXT_SUFFIX"), _c_compiler(), _cxx_compiler(), cflags,
        cuda_cflags, ldflags, includes, bool(with_cuda), langs)
    for path in [*sources, _HEADER]:
        add(os.path.abspath(path))
        with open(path, "rb") as f:
            h.update(f.read())
    for inc in includes:  # the user's headers beside the sources change the binary too
        folder = inc[2:]
        if folder in (_INCLUDE_DIR, _python_include()) or not os.path.isdir(folder):
            continue
        for entry in sorted(os.listdir(folder)):
            if entry.endswith((".h", ".hpp", ".cuh")):
                with open(os.path.join(folder, entry), "rb") as f:
                    add(entry)
                    h.update(f.read())
    return h.hexdigest()[:16]


def _check_name(name):
    # the name is the module's (PyInit_<name>) and part of file names
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise ValueError(f"cpp_extension: the extension's name must be an ASCII identifier, got {name!r}")


def _build_directory(name, build_directory, verbose):
    _check_name(name)
    if build_directory is None:
        root = os.environ.get("TORCH_EXTENSIONS_DIR")
        if root is None:
            root = os.path.join(get_default_build_root(), f"py{sys.version_info.major}{sys.version_info.minor}_cpu")
        build_directory = os.path.join(root, name)
    if verbose:
        print(f"Using {build_directory} as pyctorch extensions root...", flush=True)
    os.makedirs(build_directory, exist_ok=True)
    return build_directory


class _FileLock:
    """An exclusive lock on a file in the build directory, so processes building the same extension take turns."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.f = open(self.path, "a")
        if not IS_WINDOWS:
            import fcntl
            fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        self.f.close()  # releases the lock


def _build(name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths, build_directory,
           verbose, with_cuda):
    """Compile and link (unless the cached binary matches); the binary's path."""
    _check_name(name)
    if isinstance(sources, str):
        sources = [sources]
    sources = [os.path.abspath(s) for s in sources]
    if not sources:
        raise ValueError("cpp_extension: no sources given")
    for s in sources:
        if not os.path.exists(s):
            raise FileNotFoundError(f"cpp_extension: source file not found: {s}")
    langs = [_language(s) for s in sources]
    if with_cuda is None:
        with_cuda = "cuda" in langs
    cflags = list(extra_cflags or [])
    cuda_cflags = list(extra_cuda_cflags or [])
    ldflags = list(extra_ldflags or [])
    includes = _includes(extra_include_paths, with_cuda)
    directory = _build_directory(name, build_directory, verbose)
    digest = _build_hash(sources, langs, cflags, cuda_cflags, ldflags, includes, with_cuda, name)
    # Note [Extension binaries by hash]: the binary's file name carries the hash, so a changed source gives a new
    # file that a process which already imported the old one can still load (dlopen keys on the path), and an
    # unchanged one is found again without compiling.
    output = os.path.join(directory, f"{name}_{digest}{LIB_EXT}")
    with _FileLock(os.path.join(directory, "lock")):
        if os.path.exists(output):
            if verbose:
                print(f"No modifications detected for extension {name}: using {output}", flush=True)
            return output
        objects = []
        for src, lang in zip(sources, langs):
            stem = os.path.splitext(os.path.basename(src))[0]
            obj = os.path.join(directory, f"{stem}_{digest}{'.cuda' if lang == 'cuda' else ''}.o")
            _run(_compile_command(src, obj, lang, cflags, cuda_cflags, includes), name, verbose)
            objects.append(obj)
        partial = output + ".partial"
        _run(_link_command(objects, partial, langs, ldflags, with_cuda), name, verbose)
        os.replace(partial, output)  # whole or not at all: another process never sees half a binary
        for obj in objects:
            os.remove(obj)
        for entry in os.listdir(directory):  # the binaries of earlier versions of this extension
            if entry.startswith(name + "_") and entry.endswith(LIB_EXT) and entry != os.path.basename(output):
                try:
                    os.remove(os.path.join(directory, entry))
                except OSError:
                    pass
    return output


def _import_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None,
         extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None, with_sycl=None,
         is_python_module=True, is_standalone=False, keep_intermediates=True):
    """Compile ``sources`` into an extension module named ``name``, import it and return it.

    The sources must define ``PyInit_<name>`` (which calls ``pct_ext_import()``), unless the module is no Python
    module: with ``is_python_module=False`` the library is loaded into the process (global symbols) and its path is
    returned. ``with_cuda`` defaults to whether a source is a ``.cu`` file. A failing compiler or linker raises
    RuntimeError("Error building extension '<name>'...") holding the compiler's output. ``extra_sycl_cflags`` and
    ``with_sycl`` are refused (pyctorch has no SYCL backend); ``keep_intermediates`` is accepted (objects are not
    kept); ``is_standalone`` (an executable) is not supported.
    """
    if extra_sycl_cflags or with_sycl:
        raise RuntimeError("cpp_extension: pyctorch has no SYCL backend")
    if is_standalone:
        raise NotImplementedError("cpp_extension.load(is_standalone=True): pyctorch builds extension modules only")
    path = _build(name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
                  build_directory, verbose, with_cuda)
    if not is_python_module:
        import ctypes
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        return path
    return _import_module(name, path)


_INLINE_HEADER = "#include <pyctorch/extension.h>\n"


def _inline_bindings(name, functions):
    """The method table and module init for load_inline's functions= (see load_inline)."""
    if isinstance(functions, str):
        functions = [functions]
    docs = dict(functions) if isinstance(functions, dict) else {f: "" for f in functions}
    for fn in docs:
        if not isinstance(fn, str) or not fn.isidentifier():
            raise ValueError(f"load_inline: functions must be C identifiers, got {fn!r}")
    rows = "".join(f'    {{"{fn}", (PyCFunction){fn}, METH_VARARGS, {_c_string(doc)}}},\n' for fn, doc in docs.items())
    return (f"\n/* generated by pyctorch.utils.cpp_extension.load_inline */\n"
            f"static PyMethodDef pct_inline_methods[] = {{\n{rows}    {{NULL, NULL, 0, NULL}}\n}};\n"
            f"static struct PyModuleDef pct_inline_module = {{PyModuleDef_HEAD_INIT, \"{name}\", NULL, -1, "
            f"pct_inline_methods, NULL, NULL, NULL, NULL}};\n"
            f"PyMODINIT_FUNC PyInit_{name}(void)\n{{\n"
            f"    if (pct_ext_import() < 0) return NULL;\n"
            f"    return PyModule_Create(&pct_inline_module);\n}}\n")


def _c_string(text):
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _write_if_changed(path, text):
    """Leave an unchanged file alone, so its mtime (and the build cache) stays."""
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def load_inline(name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None, extra_cflags=None,
                extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None, extra_include_paths=None,
                build_directory=None, verbose=False, with_cuda=None, with_sycl=None, is_python_module=True,
                with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False, no_implicit_headers=False,
                source_language="c"):
    """Build an extension from source strings (each argument a string or a list of strings, joined by newlines).

    ``cpp_sources`` go into one file, compiled as C11 (``source_language="c"``, the default: pyctorch's API is a C
    header) or as C++17 (``source_language="c++"``); ``#include <pyctorch/extension.h>`` is put first unless
    ``no_implicit_headers``. ``cuda_sources`` go into a ``.cu`` file compiled by nvcc (and ``with_cuda`` then
    defaults to True); their host functions must be declared in ``cpp_sources`` to be bound.

    ``functions`` (a name, a list of names, or a dict name -> docstring) makes the module's method table and
    ``PyInit_<name>`` for you. Each named function has CPython's METH_VARARGS signature::

        PyObject *fn(PyObject *self, PyObject *args)   /* parse args with PyArg_ParseTuple */

    returning a new reference, or NULL with an exception set (pct_ext_error, PCT_EXT_CHECK). Without ``functions``
    the sources define ``PyInit_<name>`` themselves and call ``pct_ext_import()`` in it. ``with_pytorch_error_handling``
    and ``use_pch`` are accepted and have nothing to do: errors are Python exceptions already, and there is no
    precompiled header.
    """
    if sycl_sources:
        raise RuntimeError("cpp_extension: pyctorch has no SYCL backend")
    if source_language not in ("c", "c++"):
        raise ValueError(f"load_inline: source_language must be 'c' or 'c++', got {source_language!r}")
    directory = _build_directory(name, build_directory, verbose)

    def joined(parts):
        return parts if isinstance(parts, str) else "\n".join(parts)

    main = ("" if no_implicit_headers else _INLINE_HEADER) + joined(cpp_sources)
    if functions:
        main += _inline_bindings(name, functions)
    main_path = os.path.join(directory, "main.c" if source_language == "c" else "main.cpp")
    _write_if_changed(main_path, main)
    sources = [main_path]
    if cuda_sources:
        cuda_path = os.path.join(directory, "cuda.cu")
        _write_if_changed(cuda_path, ("" if no_implicit_headers else _INLINE_HEADER) + joined(cuda_sources))
        sources.append(cuda_path)
    return load(name, sources, extra_cflags=extra_cflags, extra_cuda_cflags=extra_cuda_cflags,
                extra_ldflags=extra_ldflags, extra_include_paths=extra_include_paths, build_directory=directory,
                verbose=verbose, with_cuda=with_cuda, is_python_module=is_python_module)


def CppExtension(name, sources, *args, **kwargs):
    """A setuptools.Extension for C or C++ sources with pyctorch's include folder; build it with BuildExtension.

    The language is C++ when a source is C++ (``language`` may be given), else C. ``extra_compile_args`` may be a
    list or torch's dict form ({"cxx": [...]}, used for every host source)."""
    kwargs["include_dirs"] = list(kwargs.get("include_dirs") or []) + include_paths("cpu")
    kwargs.setdefault("language", "c++" if any(str(s).endswith(_CXX_SUFFIXES) for s in sources) else "c")
    return Extension(name, sources, *args, **kwargs)


def CUDAExtension(name, sources, *args, **kwargs):
    """A setuptools.Extension with CUDA (.cu) sources as well, linked with cudart; OSError when nvcc is not found.

    ``extra_compile_args`` may be a dict {"cxx": [...], "nvcc": [...]} (nvcc's flags go to the .cu files)."""
    _nvcc()
    kwargs["include_dirs"] = list(kwargs.get("include_dirs") or []) + include_paths("cuda")
    kwargs["library_dirs"] = list(kwargs.get("library_dirs") or []) + library_paths("cuda")
    kwargs["libraries"] = list(kwargs.get("libraries") or []) + ["cudart"]
    kwargs.setdefault("language", "c++")
    return Extension(name, sources, *args, **kwargs)


class BuildExtension(build_ext):
    """setuptools' build_ext for CppExtension/CUDAExtension: .cu sources compile with nvcc, the dict form of
    extra_compile_args ({"cxx": [...], "nvcc": [...]}) is split per compiler, C sources get -std=c11 and C++ sources
    -std=c++17 unless the flags name a standard.

    Options (``BuildExtension.with_options(...)`` or keyword arguments): ``no_python_abi_suffix=True`` names the
    module ``<name>.so`` rather than ``<name>.cpython-3xx-<platform>.so``; ``use_ninja`` is accepted and ignored
    (setuptools' compiler runs directly)."""

    @classmethod
    def with_options(cls, **options):
        """A subclass whose constructor takes these keyword options, as setup(cmdclass=...) needs a class."""

        class BuildExtensionWithOptions(cls):
            def __init__(self, *args, **kwargs):
                kwargs.update(options)
                super().__init__(*args, **kwargs)

        return BuildExtensionWithOptions

    def __init__(self, *args, **kwargs):
        self.no_python_abi_suffix = kwargs.pop("no_python_abi_suffix", False)
        self.use_ninja = kwargs.pop("use_ninja", False)  # nothing to do: see the class docstring
        super().__init__(*args, **kwargs)

    def build_extensions(self):
        compiler = self.compiler
        if ".cu" not in compiler.src_extensions:
            compiler.src_extensions.append(".cu")
        original_compile = compiler._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            if isinstance(extra_postargs, dict):
                flags = extra_postargs.get("nvcc" if src.endswith(_CUDA_SUFFIXES) else "cxx", [])
            else:
                flags = list(extra_postargs or [])
            if src.endswith(_CUDA_SUFFIXES):
                cmd = [_nvcc(), "-c", src, "-o", obj, "-Xcompiler", "-fPIC", *COMMON_NVCC_FLAGS, *pp_opts, *flags]
                self.spawn(cmd)
                return
            if not any(f.startswith("-std=") for f in flags):
                flags = flags + (["-std=c11"] if src.endswith(_C_SUFFIXES) else ["-std=c++17"])
            original_compile(obj, src, ext, cc_args, flags, pp_opts)

        compiler._compile = compile_one
        try:
            super().build_extensions()
        finally:
            compiler._compile = original_compile

    def build_extension(self, ext):
        if isinstance(ext.extra_compile_args, dict):
            # setuptools passes extra_compile_args to every _compile call whole; compile_one picks the compiler's list
            flags = ext.extra_compile_args
            ext.extra_compile_args = []
            original = self.compiler.compile

            def compile_with_dict(sources, *args, **kwargs):
                kwargs["extra_postargs"] = flags
                return original(sources, *args, **kwargs)

            self.compiler.compile = compile_with_dict
            try:
                return super().build_extension(ext)
            finally:
                self.compiler.compile = original
                ext.extra_compile_args = flags
        return super().build_extension(ext)

    def get_ext_filename(self, ext_name):
        filename = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            suffix = sysconfig.get_config_var("EXT_SUFFIX") or LIB_EXT
            if filename.endswith(suffix):
                filename = filename[: -len(suffix)] + LIB_EXT
        return filename
