#!/usr/bin/env bash
# The SDK configured and installed on its own, without the server's build: then the example module
# is built against that install and tested exactly as example_out_of_tree.sh does.
#   sdk_standalone.sh CMAKE SDK_SRC EXAMPLE_SRC WORK_DIR TEST_BIN SERVER_BIN
set -euo pipefail
cmake_bin=$1 sdk_src=$2 example_src=$3 work=$4 test_bin=$5 server_bin=$6
rm -rf "$work"
mkdir -p "$work"
"$cmake_bin" -S "$sdk_src" -B "$work/sdk-build" >/dev/null
exec "$(dirname "$0")/example_out_of_tree.sh" "$cmake_bin" "$work/sdk-build" "$example_src" \
  "$work/example" "$test_bin" "$server_bin"
