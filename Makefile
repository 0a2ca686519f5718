# make demo        install what is missing, build, summarize dgx-h100 and sweep an AllReduce on it
# make test        install what is missing, build, run every test
# make build       configure and build only (BUILD_TYPE, BUILD_DIR, JOBS and CMAKE_ARGS override)
# make test-asan   every test again under AddressSanitizer + UndefinedBehaviorSanitizer (clang)
# make fuzz        each libFuzzer target for FUZZ_SECONDS (default 60) from seeds in the repo
# make validation  regenerate docs/validation.md (calibrate + validate on the published tables)
# make docs        rewrite the output of every `$ collsim` example in README.md and docs/*.md
BUILD_DIR  ?= build
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
COLLSIM    := $(BUILD_DIR)/cli/collsim
SAN_DIR    ?= build-san
FUZZ_SECONDS ?= 60

# The sanitizer run: OpenMPI's own allocations are still live at exit (lsan.supp names them);
# everything of collsim's must be freed. It leaves out the Python module (an instrumented
# extension cannot load into an uninstrumented python3) and the docs tests (they rerun the same
# commands on the docs' inputs, minutes of simulation that make test already checks).
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/cmake/lsan.supp:print_suppressions=0 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: all deps configure build demo test san-configure test-asan fuzz validation docs clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	$(COLLSIM) topo dgx-h100
	$(COLLSIM) sweep dgx-h100 --op allreduce -b 8 -e 1G -f 4

test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) --label-exclude gpu

san-configure: deps
	@CC=clang CXX=clang++ cmake -S . -B $(SAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCOLLSIM_SANITIZE=address,undefined -DCOLLSIM_FUZZ=ON -DCOLLSIM_WITH_CUDA=OFF \
	  -DCOLLSIM_BUILD_BENCH=OFF -DCOLLSIM_WITH_PYTHON=OFF $(CMAKE_ARGS)

test-asan: san-configure
	@cmake --build $(SAN_DIR) -j $(JOBS)
	@$(SAN_ENV) ctest --test-dir $(SAN_DIR) --output-on-failure -j $(JOBS) --label-exclude 'gpu|docs'

fuzz: san-configure
	@cmake --build $(SAN_DIR) -j $(JOBS) --target fuzz_config fuzz_measurements fuzz_units fuzz_schedule
	@$(SAN_ENV) scripts/fuzz.sh $(SAN_DIR) $(FUZZ_SECONDS)

validation: build
	@scripts/validation-report.sh $(COLLSIM)

docs: build
	@python3 scripts/docs-examples.py update $(COLLSIM)

clean:
	rm -rf $(BUILD_DIR) $(SAN_DIR)
