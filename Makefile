# The two commands of the README, plus a few conveniences. The real work is in scripts/.
.PHONY: run run-configure test build bench clean

# Builds the optimised server and runs it on port 6379 with every in-tree module loaded.
run: run-configure
	cmake --build --preset release --target vessel-server vessel_modules
	./build/bin/vessel-server

# `make run`'s configure step alone (CI runs it before `make test` to check that the test command
# still builds and runs every test in a tree `make run` configured).
run-configure:
	scripts/deps.sh build
	cmake --preset release -DVESSEL_TESTS=OFF -DVESSEL_BENCH=OFF

# Builds everything (release, ASan+UBSan, TSan, libFuzzer) and runs the whole test suite.
test:
	scripts/test.sh

build:
	scripts/deps.sh build
	cmake --preset release
	cmake --build --preset release

# Side by side with redis-server (see bench/README.md); the charts land in docs/img/.
bench:
	scripts/deps.sh bench
	cmake --preset release -DVESSEL_TESTS=OFF -DVESSEL_BENCH=ON
	cmake --build --preset release
	bench/compare.sh

clean:
	rm -rf build build-asan build-tsan build-fuzz
