# The two commands of README.md: `make demo` and `make test`.
# Both install missing Debian packages first, then build Release with CMake.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# Compiles go through ccache when it is there (install-deps.sh installs it).
# The launcher is decided when a recipe runs, after `deps` has installed the
# packages: deciding it when make parses this file would configure the first
# build of a fresh machine without ccache and the next one with it, which
# rebuilds everything. Paths are taken relative to the checkout's parent, so
# two checkouts (a clone for CI beside a working tree) share cached objects.
LAUNCHER = $$(command -v ccache >/dev/null 2>&1 && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR := $(abspath $(CURDIR)/..)
# The sanitizer and fuzzer builds carry debug information, for which ccache
# hashes the build directory by default: a clone elsewhere would miss every
# object. The debug information's directory is the only thing that differs.
export CCACHE_NOHASHDIR := 1

.PHONY: all deps build demo test bench test-sanitize fuzz clean gpu-characterize

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./$(BUILD_DIR)/acesim run
	./$(BUILD_DIR)/acesim collective

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

bench: build
	./bench/run.sh $(BUILD_DIR)

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer (CI runs it).
test-sanitize: deps
	@cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACESIM_SANITIZE=ON -DACESIM_BUILD_BENCH=OFF $(LAUNCHER) >/dev/null
	@cmake --build build-sanitize -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-sanitize --output-on-failure -j $(JOBS)

# Every input reader under libFuzzer for FUZZ_SECONDS each (CI runs it).
FUZZ_SECONDS ?= 20
fuzz: deps
	@cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DACESIM_FUZZ=ON -DACESIM_BUILD_TESTS=OFF -DACESIM_BUILD_BENCH=OFF $(LAUNCHER) >/dev/null
	@cmake --build build-fuzz -j $(JOBS)
	./fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# The CUDA microbenchmarks (tools/gpu-characterize), only where nvcc is.
gpu-characterize: deps
	@if command -v nvcc >/dev/null 2>&1; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) >/dev/null && \
	  cmake --build $(BUILD_DIR) --target gpu-characterize; \
	else \
	  echo "gpu-characterize: skipped (no nvcc)"; \
	fi

clean:
	rm -rf $(BUILD_DIR) build-sanitize build-fuzz
