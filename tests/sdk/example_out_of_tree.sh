#!/usr/bin/env bash
# Builds sdk/examples the way a third party would, against an installed SDK, and tests the result.
#
#   example_out_of_tree.sh CMAKE SDK_BUILD_DIR EXAMPLE_SRC WORK_DIR TEST_BIN SERVER_BIN
#       1. cmake --install SDK_BUILD_DIR --prefix WORK_DIR/prefix   (the SDK alone)
#       2. the example with CMake: find_package(VesselSDK 1) via CMAKE_PREFIX_PATH; and the
#          same find_package asking for major 2 must fail
#       3. the example with pkg-config and a plain compiler command
#       4. each .so exports exactly vsl_module_init and vsl_module_manifest
#       5. TEST_BIN (example_module_test) on each build, the second with module arguments
#       6. SERVER_BIN refuses to start when the example gets a bad argument
#   example_out_of_tree.sh --pkgconfig-only CMAKE SDK_BUILD_DIR EXAMPLE_SRC WORK_DIR
#       checks only that the installed vessel-sdk.pc points into the install prefix and carries
#       the version module.h declares.
set -euo pipefail

pkgconfig_only=0
if [[ "${1:-}" == "--pkgconfig-only" ]]; then
  pkgconfig_only=1
  shift
fi
cmake_bin=$1 sdk_build=$2 example_src=$3 work=$4
prefix=$work/prefix

step() { printf '\n=== %s\n' "$*"; }
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}

rm -rf "$work"
mkdir -p "$work"

step "install the SDK into $prefix"
"$cmake_bin" --install "$sdk_build" --prefix "$prefix"
pcfile=$(find "$prefix" -name vessel-sdk.pc | head -n 1)
[[ -n "$pcfile" ]] || fail "vessel-sdk.pc was not installed"
pcdir=$(dirname "$pcfile")
[[ -f "$prefix/include/vessel/module.h" && -f "$prefix/include/vessel/module.hpp" ]] ||
  fail "the headers were not installed"

# The flags pkg-config gives from the installed .pc, as a user with only the prefix would run it.
cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags vessel-sdk)
echo "pkg-config --cflags vessel-sdk: $cflags"

# The version pkg-config reports is the ABI the installed header declares.
header=$prefix/include/vessel/module.h
abi_major=$(sed -n 's/^#define VSL_ABI_MAJOR \([0-9]*\)$/\1/p' "$header")
abi_minor=$(sed -n 's/^#define VSL_ABI_MINOR \([0-9]*\)$/\1/p' "$header")
pc_version=$(PKG_CONFIG_PATH=$pcdir pkg-config --modversion vessel-sdk)
echo "pkg-config --modversion vessel-sdk: $pc_version (module.h: $abi_major.$abi_minor)"
[[ -n "$abi_major" && "$pc_version" == "$abi_major.$abi_minor.0" ]] ||
  fail "vessel-sdk.pc says version $pc_version, module.h declares ABI $abi_major.$abi_minor"
PKG_CONFIG_PATH=$pcdir pkg-config --atleast-version="$abi_major.$abi_minor" vessel-sdk ||
  fail "pkg-config --atleast-version=$abi_major.$abi_minor refuses the installed SDK"

if ((pkgconfig_only)); then
  # The include directory pkg-config names must be the installed one (it may be spelled through
  # the .pc file's own location, e.g. <prefix>/lib/pkgconfig/../../include).
  incdir=$(sed -n 's/.*-I\([^ ]*\).*/\1/p' <<<"$cflags")
  [[ -n "$incdir" && "$(realpath "$incdir")" == "$(realpath "$prefix/include")" ]] ||
    fail "vessel-sdk.pc is not relocatable: after 'cmake --install --prefix $prefix' it gives" \
      "'$cflags'. Fix: in sdk/cmake/vessel-sdk.pc.in, derive prefix from \${pcfiledir}."
  rm -rf "$work"
  echo "PASS"
  exit 0
fi

test_bin=$5 server_bin=$6
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi

step "build the example with CMake (find_package(VesselSDK 1))"
"$cmake_bin" -S "$example_src" -B "$work/cmake" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-Werror
grep -q "^VesselSDK_DIR:PATH=$prefix/" "$work/cmake/CMakeCache.txt" ||
  fail "find_package(VesselSDK) did not find the SDK installed in $prefix"
"$cmake_bin" --build "$work/cmake" --verbose
cmake_so=$work/cmake/bitset.so
[[ -f "$cmake_so" ]] || fail "$cmake_so was not built"

step "find_package(VesselSDK 2) must refuse SDK 1.x"
mkdir -p "$work/major2"
cat > "$work/major2/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.16)
project(major2 LANGUAGES NONE)
find_package(VesselSDK 2 REQUIRED)
EOF
if "$cmake_bin" -S "$work/major2" -B "$work/major2/build" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/major2/log" 2>&1; then
  fail "find_package(VesselSDK 2) accepted the 1.x SDK"
fi
grep -q "VesselSDK" "$work/major2/log" || fail "unexpected find_package failure: $(cat "$work/major2/log")"

step "build the example with pkg-config"
pc_cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags vessel-sdk)
mkdir -p "$work/pkgconfig"
pc_so=$work/pkgconfig/bitset.so
# shellcheck disable=SC2086  # pkg-config output is a list of flags
(
  set -x
  ${CC:-cc} -std=c99 -Wall -Wextra -pedantic -Werror -O2 -shared -fPIC $pc_cflags \
    -Wl,--no-undefined -o "$pc_so" "$example_src/bitset.c"
)

step "only the entry points are exported"
for so in "$cmake_so" "$pc_so"; do
  exported=$(nm -D --defined-only "$so" | awk '{print $3}' | sort | tr '\n' ' ')
  [[ "$exported" == "vsl_module_init vsl_module_manifest " ]] ||
    fail "$so exports '$exported', want only vsl_module_init and vsl_module_manifest"
done

step "run example_module_test on the CMake build"
VSL_EXAMPLE_MODULE=$cmake_so "$test_bin"

step "run example_module_test on the pkg-config build, with module arguments"
VSL_EXAMPLE_MODULE=$pc_so VSL_EXAMPLE_ARGS="max-bits 1000001" "$test_bin"

step "vessel-server refuses a bad module argument"
echo "modules = []" > "$work/empty.toml"
set +e
out=$(timeout 30 "$server_bin" --config "$work/empty.toml" --port 0 --loadmodule "$cmake_so" \
  max-bits 0 2>&1)
status=$?
set -e
echo "$out"
[[ $status -eq 1 ]] || fail "vessel-server exited with $status, want 1"
want="module bitset: init failed: max-bits must be an integer from 1 to 4294967296"
[[ "$out" == *"[critical] $want"* ]] || fail "no log line '$want'"

rm -rf "$work"
echo "PASS"
