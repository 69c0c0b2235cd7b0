# The README's commands: `make demo` and `make test` (plus `make bench`). Each installs what it needs.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_FLAGS ?= -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHATIF_WERROR=ON

.PHONY: all deps build build-asan test unit-test viewer-test demo bench clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The sanitizer configuration: unit tests of the pure components under ASan+UBSan.
build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) $(CMAKE_FLAGS) -DWHATIF_SANITIZE="address;undefined" \
		-DWHATIF_BUILD_INTEGRATION=OFF -DWHATIF_BUILD_BENCHMARKS=OFF >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

unit-test: build build-asan
	@cd $(ASAN_BUILD) && ctest -L unit --output-on-failure -j $(JOBS)

# Integration tests measure statistics of real runs on a shared machine (sample rates, prediction
# bands); one that fails is run once more, and a failure must repeat to count. Unit tests get no
# second chance. The retried tests stay in ctest's output ("Test Failed" before "Passed").
test: build build-asan
	@cd $(ASAN_BUILD) && ctest -L unit --output-on-failure -j $(JOBS)
	@cd $(BUILD) && ctest -L unit --output-on-failure -j $(JOBS)
	@cd $(BUILD) && ctest -L integration --output-on-failure --repeat until-pass:2 -j $(JOBS)
	@if [ -f viewer/package.json ]; then $(MAKE) --no-print-directory viewer-test; fi

viewer-test: deps
	@cd viewer && npm ci --no-audit --no-fund --loglevel=error && npm test

demo: build
	@scripts/demo.sh $(BUILD)

bench: build
	@benchmarks/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
