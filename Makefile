# make demo   install what is missing, build, summarize dgx-h100 and sweep an AllReduce on it
# make test   install what is missing, build, run every test
# make build  configure and build only (BUILD_TYPE, BUILD_DIR, JOBS and CMAKE_ARGS override)
BUILD_DIR  ?= build
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
COLLSIM    := $(BUILD_DIR)/cli/collsim

.PHONY: all deps configure build demo test clean

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

clean:
	rm -rf $(BUILD_DIR)
