# pyctorch: set up, build, test, demo. Every target installs what a fresh machine lacks.
PYTHON ?= python3
PIP = $(PYTHON) -m pip install -q --disable-pip-version-check
ASAN_LIB = $(shell gcc -print-file-name=libasan.so)

.PHONY: deps build test demo asan bench fuzz leak clean

deps:
	@if command -v apt-get >/dev/null 2>&1 && ! dpkg -s libopenblas-openmp-dev >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas-openmp-dev >/dev/null; fi
	@$(PIP) "numpy>=1.24" pytest hypothesis setuptools wheel
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PIP) torch==2.13.0 || echo "torch 2.13.0 unavailable: oracle comparisons will skip"

build: deps
	$(PYTHON) setup.py -q build_ext --inplace

# The whole suite (the README's test command; CI runs it).
test: build
	$(PYTHON) -m pytest tests -q -p no:cacheprovider

# A short real training run with a progress bar.
demo: build
	$(PYTHON) examples/train_mlp.py

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer, built into build/asan.
asan: deps
	rm -rf build/asan && mkdir -p build/asan
	PYCTORCH_SANITIZE=1 $(PYTHON) setup.py -q build_ext --build-lib build/asan --build-temp build/asan-tmp
	cp -r pyctorch/*.py build/asan/pyctorch/ && cp -r pyctorch/*/ build/asan/pyctorch/ 2>/dev/null || true
	cd build/asan && LD_PRELOAD=$(ASAN_LIB) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		PYTHONPATH=$(CURDIR)/build/asan $(PYTHON) -m pytest $(CURDIR)/tests -q -p no:cacheprovider -x

# Benchmarks against torch (opt-in; prints ratio tables and JSON).
bench: build
	$(PYTHON) benchmarks/run_all.py

# Long hypothesis fuzzing (opt-in).
fuzz: build
	PYCTORCH_FUZZ_EXAMPLES=20000 $(PYTHON) -m pytest tests/test_fuzz.py -q -p no:cacheprovider

clean:
	rm -rf build pyctorch/*.so
