# The two commands of README.md: `make demo` and `make test`.
# Both install missing Debian packages first, then build Release with CMake.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build demo test bench clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./$(BUILD_DIR)/acesim run
	./$(BUILD_DIR)/acesim collective

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

bench: build
	./bench/run.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
