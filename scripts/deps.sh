#!/usr/bin/env bash
# Installs the Debian packages Vessel needs to build, test and benchmark. Idempotent: does
# nothing when every package is already present. Uses sudo when not run as root.
set -euo pipefail

# `deps.sh build` installs what building and running the server needs; `deps.sh test` (the
# default) adds the compilers, test frameworks and reference tools the test suite uses;
# `deps.sh bench` adds to the build packages what bench/ needs: google-benchmark, the reference
# server and its tools, valgrind (instructions.sh) and gnuplot, which draws the scripts' charts.
build_packages=(
  build-essential cmake ninja-build pkg-config ccache
  libasio-dev libabsl-dev libjemalloc-dev libtomlplusplus-dev libspdlog-dev libfmt-dev
  liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libssl-dev liblzf-dev
)
test_packages=(
  clang libclang-rt-14-dev libgtest-dev libgmock-dev libbenchmark-dev
  redis-server redis-sentinel redis-tools python3 python3-redis python3-pytest openssl
)
bench_packages=(
  libbenchmark-dev redis-server redis-tools openssl bc valgrind gnuplot-nox
)
packages=("${build_packages[@]}")
case "${1:-test}" in
  build) ;;
  bench) packages+=("${bench_packages[@]}") ;;
  *) packages+=("${test_packages[@]}") ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
