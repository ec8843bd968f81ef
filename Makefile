# Aether — every set-up step lives here, so a fresh Debian machine needs only `make demo` or `make test`.
SHELL := /bin/bash
SWIFT ?= swift

.PHONY: all deps venv build release test torture lint format layering unsafe-check readme-examples phases bench demo \
	fuzz clean

all: build

deps:
	@scripts/install-deps.sh

venv: deps
	@scripts/setup-venv.sh

build: deps
	$(SWIFT) build --explicit-target-dependency-import-check error

release: deps
	$(SWIFT) build -c release

layering: deps
	@python3 scripts/check-layering.py

unsafe-check:
	@scripts/check-unsafe.sh

# Every ```swift block of README.md is verbatim in Tests/ReadmeExamplesTests/Examples.swift (compiled and run by tests).
readme-examples:
	@python3 scripts/check-readme-examples.py

lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests
	@echo "format: swift format lint --strict is clean"

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests

# Each library alone, in layer order (the list: scripts/check-layering.py --phases): proves no module needs a
# higher one to build. CI runs `scripts/build-phases.sh --clean` (the first phase from an empty .build).
phases: deps
	@scripts/build-phases.sh

test: deps venv build layering unsafe-check readme-examples lint
	@scripts/run-tests.sh

# The long crash, fault, trace and memory tests (1 GiB crash torture, a whole 10 GiB upload, 384 MiB over the LTE
# trace); `make test` runs shorter seeded versions of the same tests.
torture: deps venv build
	AETHER_TORTURE=1 $(SWIFT) test --filter 'ClientCrashTortureTests|UploadMemoryLiveTests|LTETraceLiveTests'

bench: release
	$(SWIFT) run -c release aether-bench $(BENCH)

demo: deps release
	@scripts/demo.sh

fuzz: deps
	@scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf .build .build-fuzz
