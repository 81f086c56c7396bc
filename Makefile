# Top-level wrapper around CMake. `make` builds into build/, `make test` installs what is
# missing (scripts/deps.sh), builds the release and sanitizer trees side by side, runs the whole
# suite, then the fast part again under AddressSanitizer + UBSan; `make demo` runs the main job;
# `make bench` the benchmarks.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# 1: `make test` first checks that the C/C++/CUDA sources are formatted (scripts/format-check.sh)
# and fails, naming the files, when one is not. 0: the check is skipped.
FORMAT_CHECK ?= 1

.PHONY: all deps build build-release build-asan test test-fast test-asan test-asan-run demo demo-web bench fuzz clean format format-check

all: build

deps:
	@scripts/deps.sh

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

# Both trees are configured and built by one make run with $(JOBS) slots, so each build's long
# compiles fill the slots the other leaves idle (its configure step, its links, the last nvcc
# objects of the release tree) instead of every phase waiting for the previous one's tail. Then
# the two ctest runs, one after the other.
test: deps
	@if [ "$(FORMAT_CHECK)" = 1 ]; then scripts/format-check.sh; fi
	@$(MAKE) --no-print-directory -j $(JOBS) build-release build-asan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory test-asan-run

# One tree each, for the make run above: `+` hands its jobserver to cmake's make, which takes
# its jobs from the shared slots (alone, without -j, they build one file at a time).
build-release:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	+cmake --build $(BUILD)

# The fast part of the suite, built with sanitizers (tests labelled `slow` are skipped).
# Without the CUDA backend: its kernels are device code the sanitizers do not see, its GPU tests
# skip where there is no GPU, and its host-side math is tested in the release build.
build-asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFFN_SANITIZE=ON -DFFN_CUDA=OFF
	+cmake --build $(ASAN_BUILD)

test-asan:
	@$(MAKE) --no-print-directory -j $(JOBS) build-asan
	@$(MAKE) --no-print-directory test-asan-run

test-asan-run:
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j $(JOBS) -LE slow

demo: deps build
	@scripts/demo.sh $(BUILD)

# The WebGPU demo page (webgpu/demo/): every WGSL kernel's max ulp error against the C reference,
# its throughput, and the activation curves; served on http://127.0.0.1:$(WEB_PORT)/demo/ until
# Ctrl-C. Open it in a browser with WebGPU.
WEB_PORT ?= 8123
demo-web: deps build
	@scripts/web-deps.sh
	@mkdir -p $(BUILD)/webgpu-golden
	@$(BUILD)/tests/backends/wgsl_golden $(BUILD)/webgpu-golden
	@node webgpu/test/server.mjs --golden $(BUILD)/webgpu-golden --port $(WEB_PORT)

bench: deps build
	@scripts/bench.sh $(BUILD)

# A short libFuzzer run of the io readers and the tool's argument edges (safetensors, GGUF,
# config.json, model directories with their index, arguments): fuzz/README.md.
fuzz:
	@fuzz/run.sh 20

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

# clang-format over the tracked C/C++/CUDA sources (scripts/format-files.sh lists them); the
# check alone, as `make test` runs it with FORMAT_CHECK=1.
format:
	@scripts/format.sh

format-check:
	@scripts/format-check.sh
