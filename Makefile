# pyctorch: set up, build, test, demo. Every target installs what a fresh machine lacks.
PYTHON ?= python3
PIP = $(PYTHON) -m pip install -q --disable-pip-version-check
ASAN_LIB = $(shell gcc -print-file-name=libasan.so)

.PHONY: deps pocketfft test-deps build compile test demo demo-cnn asan bench fuzz leak clean

# What building needs: the C libraries, numpy's headers, setuptools.
deps:
	@if command -v apt-get >/dev/null 2>&1 && ! dpkg -s libopenblas-openmp-dev >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas-openmp-dev >/dev/null; fi
	@if command -v apt-get >/dev/null 2>&1 && ! dpkg -s libgloo-dev >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgloo-dev >/dev/null \
		|| echo "libgloo-dev unavailable: torch.distributed will have no backend (its tests skip)"; fi
	@$(PIP) "numpy>=1.24" "setuptools>=77" wheel
	@$(MAKE) --no-print-directory pocketfft

# pocketfft (BSD-3; the FFT library of NumPy, SciPy and torch's CPU backend) is a single C++ header. It is not kept in
# this repository: it is taken from one pinned NumPy source archive (checked by its sha256) into build/third_party.
POCKETFFT_DIR = build/third_party/pocketfft
POCKETFFT_SDIST = https://files.pythonhosted.org/packages/76/65/21b3bc86aac7b8f2862db1e808f1ea22b028e30a225a34a5ede9bf8678f2/numpy-2.3.5.tar.gz
POCKETFFT_SHA256 = 784db1dcdab56bf0517743e746dfb0f885fc68d948aba86eeec2cba234bdf1c0
pocketfft:
	@if [ ! -f $(POCKETFFT_DIR)/pocketfft_hdronly.h ]; then \
		mkdir -p $(POCKETFFT_DIR) && tmp=$$(mktemp -d) && \
		{ curl -sSfL --retry 2 -o $$tmp/numpy.tar.gz $(POCKETFFT_SDIST) \
		  && echo "$(POCKETFFT_SHA256)  $$tmp/numpy.tar.gz" | sha256sum -c --quiet - \
		  && tar -xzf $$tmp/numpy.tar.gz -C $$tmp --strip-components=4 numpy-2.3.5/numpy/fft/pocketfft/pocketfft_hdronly.h \
		     numpy-2.3.5/numpy/fft/pocketfft/LICENSE.md \
		  && mv $$tmp/pocketfft_hdronly.h $$tmp/LICENSE.md $(POCKETFFT_DIR)/; } \
		|| echo "pocketfft unavailable (download or checksum of numpy-2.3.5's sdist failed): torch.fft raises, its tests skip"; \
		rm -rf $$tmp; fi
	@# cuBLAS's headers for the CUDA backend's products, where nvcc builds it (the library is opened on first use)
	@if [ -x "$${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || command -v nvcc >/dev/null 2>&1; then \
		$(PYTHON) -c "import nvidia.cu13, os, sys; sys.exit(not os.path.exists(os.path.join(nvidia.cu13.__path__[0], 'include', 'cublas_v2.h')))" 2>/dev/null \
		|| $(PIP) nvidia-cublas || echo "nvidia-cublas unavailable: CUDA matrix products take the CPU fallback"; fi

# What testing needs besides: pytest, hypothesis, the oracles (torch, safetensors, onnx/onnxruntime/onnxscript for the
# ONNX tests), which only tests import, and the
# packages users expect beside torch (tensorboard: SummaryWriter's event files; matplotlib: the demo's loss curve).
test-deps:
	@$(PIP) pytest hypothesis tqdm
	@$(PYTHON) -c "import xdist" 2>/dev/null || $(PIP) pytest-xdist || echo "pytest-xdist unavailable: the suite runs in one process"
	@$(PYTHON) -c "import tensorboard, matplotlib" 2>/dev/null || $(PIP) tensorboard matplotlib || echo "tensorboard/matplotlib unavailable: their tests skip"
	@$(PIP) -r tests/libraries/requirements.txt || echo "the libraries of tests/libraries/requirements.txt are unavailable: their tests skip"
	@$(PIP) --no-deps -r tests/libraries/requirements-nodeps.txt || echo "the libraries of tests/libraries/requirements-nodeps.txt are unavailable: their tests skip"
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PIP) torch==2.13.0 || echo "torch 2.13.0 unavailable: oracle comparisons will skip"
	@$(PYTHON) -c "import safetensors" 2>/dev/null || $(PIP) safetensors || echo "safetensors unavailable: its cross-checks will skip"
	@$(PYTHON) -c "import onnx, onnxruntime, onnxscript" 2>/dev/null || $(PIP) onnx onnxruntime onnxscript || echo "onnx/onnxruntime/onnxscript unavailable: their tests skip"

build: deps
	@$(MAKE) --no-print-directory compile

# The extension alone (the C files compile in parallel, one compiler per core: setup.py).
compile:
	$(PYTHON) setup.py -q build_ext --inplace

# pytest-xdist's options where it is installed: one worker per core; a test module, or a group (xdist_group mark), stays
# in one worker (tests/xdist_scheduling.py).
XDIST = $$($(PYTHON) -c "import xdist" 2>/dev/null && echo "-n auto --dist loadgroup")

# The whole suite (the README's test command; CI runs it). The oracles install while the C compiles. The CUDA backend
# is compiled for this machine's GPUs, or where it has none only checked: PTX alone, unoptimised host code (setup.py's
# PYCTORCH_CUDA_ARCH_LIST; `make build` compiles the full list).
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): the suite starts hundreds of
# Python children that import pyctorch and the test helpers, and pytest's rewritten test modules are cached the same
# way (__pycache__ is ignored by git).
test: deps
	@PYCTORCH_CUDA_ARCH_LIST=$${PYCTORCH_CUDA_ARCH_LIST:-native} $(MAKE) --no-print-directory -j2 compile test-deps
	env -u PYTHONDONTWRITEBYTECODE $(PYTHON) -m pytest tests -q -p no:cacheprovider $(XDIST)

# A short real training run with a progress bar: a character-level GPT on the standard library's source
# (checkpoint, loss curve PNG and metrics in examples/out/; --framework torch runs it on torch).
demo: build
	@$(PIP) tqdm
	@$(PYTHON) -c "import matplotlib" 2>/dev/null || $(PIP) matplotlib || echo "matplotlib unavailable: the demo runs without its loss-curve picture"
	PYTHONPATH=$(CURDIR) $(PYTHON) examples/train_gpt.py

# A small CNN on generated images through the multi-process DataLoader.
demo-cnn: build
	@$(PIP) tqdm
	@$(PYTHON) -c "import matplotlib" 2>/dev/null || $(PIP) matplotlib || echo "matplotlib unavailable: the demo runs without its loss-curve picture"
	PYTHONPATH=$(CURDIR) $(PYTHON) examples/train_cnn.py

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer. The instrumented extension is built into
# build/asan (objects in build/asan-tmp) next to copies of the Python package, tests/ and csrc/ (the distributed tests
# compile a C harness from it), so the in-place
# build is untouched and `python -m pytest`, run from build/asan, puts that directory first on sys.path and imports
# the instrumented copy. CPython is not instrumented, so libasan is preloaded, with libstdc++ (without it ASan's
# __cxa_throw interceptor aborts at torch's first C++ exception); PYTHONMALLOC=malloc routes Python objects
# (tensors included) through ASan's allocator; detect_leaks=0 because CPython leaks at exit by design;
# allocator_may_return_null=1 because the fuzzer asks for impossible sizes on purpose (they must raise);
# UBSan errors halt (the build also uses -fno-sanitize-recover). ASan reports go to build/asan/sanitizer.<pid>
# (pytest would swallow them), and those with an ERROR (not the warnings about refused impossible allocations)
# are printed at the end and fail the target; UBSan ignores log_path here, so
# pytest captures at the sys level only (--capture=sys) and UBSan's report reaches the terminal before it aborts.
# ASAN_ARGS passes pytest arguments (e.g. ASAN_ARGS="-x -k fuzz").
asan: deps test-deps
	rm -rf build/asan && mkdir -p build/asan/pyctorch
	PYCTORCH_SANITIZE=1 PYCTORCH_CUDA_ARCH_LIST=$${PYCTORCH_CUDA_ARCH_LIST:-native} $(PYTHON) setup.py -q build_ext --build-lib build/asan --build-temp build/asan-tmp
	tar -C pyctorch --exclude='*.so' --exclude=__pycache__ -cf - . | tar -C build/asan/pyctorch -xf -
	tar --exclude=__pycache__ -cf - tests examples csrc pyproject.toml | tar -C build/asan -xf -
	cd build/asan && export LD_PRELOAD="$(ASAN_LIB) $$(gcc -print-file-name=libstdc++.so.6)" PYTHONMALLOC=malloc \
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1:log_path=$(CURDIR)/build/asan/sanitizer \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$(CURDIR)/build/asan/sanitizer && \
		$(PYTHON) -c "import sys; sys.path.insert(0, '.'); import pyctorch._C as c; \
			assert '/build/asan/' in c.__file__, c.__file__; print('asan: testing', c.__file__)" && \
		{ $(PYTHON) -m pytest tests -q -p no:cacheprovider --capture=sys $(XDIST) $(ASAN_ARGS); status=$$?; \
		  for f in sanitizer.*; do [ -e "$$f" ] && grep -q "ERROR" "$$f" && \
			{ echo "== sanitizer report $$f"; cat "$$f"; status=1; }; done; \
		  exit $$status; }

# Benchmarks against torch (opt-in; prints ratio tables and JSON).
bench: build test-deps
	$(PYTHON) benchmarks/run_all.py

# Long hypothesis fuzzing (opt-in).
fuzz: build test-deps
	PYCTORCH_FUZZ_EXAMPLES=20000 $(PYTHON) -m pytest tests/test_fuzz.py tests/test_autograd_fuzz.py -q -p no:cacheprovider

# The leak test at a million calls (opt-in; the suite runs it at 250,000).
leak: build test-deps
	PYCTORCH_LEAK_OPS=1000000 $(PYTHON) -m pytest tests/test_leak.py -q -p no:cacheprovider

clean:
	rm -rf build pyctorch/*.so
