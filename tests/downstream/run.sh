#!/usr/bin/env bash
# The downstream project (tests/downstream) against tunefuzz as a downstream build meets it. CTest runs it as
# downstream.example.
#   1. the tables alone: results/h200.yaml exported as a header and as a CMake package installed into a prefix;
#      lookup_header and lookup_package check the lookup rule on both;
#   2. the runtime without embedded kernels: tunefuzz installed (cmake --install BUILD_DIR) into a prefix, the
#      runtime examples built against it (they compile kernels on first use);
#   3. the runtime with embedded kernels: the same, with tests/downstream/small_table.yaml exported with
#      --embed-kernels and installed into that prefix over the shipped tables.
# Each runtime example runs: with a GPU it computes (exit 0); without one it must load, say so and exit 3
# (where the NVIDIA driver is missing, the toolkit's stub of libcuda.so.1 stands in, and answers "stub").
# The embedded table is small_table.yaml with its template hashes set to the tree's (CURRENT_TABLE writes it):
# the committed tables predate the tree's templates, and an export refuses to embed untested code.
# Usage: run.sh TUNE SCRATCH_DIR SOURCE_ROOT BUILD_DIR CUDA_DRIVER_LIBRARY CURRENT_TABLE
set -euo pipefail

usage="usage: run.sh TUNE SCRATCH_DIR SOURCE_ROOT BUILD_DIR CUDA_DRIVER_LIBRARY CURRENT_TABLE"
tune=${1:?$usage}
scratch=${2:?$usage}
root=${3:?$usage}
build=${4:?$usage}
driver=${5:?$usage}
current_table=${6:?$usage}

# Only what this script creates is removed, never the scratch directory itself.
mkdir -p "$scratch"
rm -rf "$scratch/tables.hpp" "$scratch/package" "$scratch/package-build" "$scratch/prefix" "$scratch/build" \
  "$scratch/jit-prefix" "$scratch/jit-build" "$scratch/aot-prefix" "$scratch/aot-package" "$scratch/aot-package-build" \
  "$scratch/aot-build" "$scratch/stub" "$scratch/cache" "$scratch/small_table.yaml"

# 1. The tables alone.
"$tune" export "$root/results/h200.yaml" --format header -o "$scratch/tables.hpp"
"$tune" export "$root/results/h200.yaml" --format cmake -o "$scratch/package"
cmake -S "$scratch/package" -B "$scratch/package-build" -DCMAKE_INSTALL_PREFIX="$scratch/prefix"
cmake --build "$scratch/package-build"
cmake --install "$scratch/package-build"
cmake -S "$root/tests/downstream" -B "$scratch/build" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DTUNEFUZZ_HEADER="$scratch/tables.hpp"
cmake --build "$scratch/build"
"$scratch/build/lookup_header"
"$scratch/build/lookup_package"

# Without the NVIDIA driver, the stub stands in for libcuda.so.1 so the programs load.
if ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
  mkdir -p "$scratch/stub"
  ln -s "$driver" "$scratch/stub/libcuda.so.1"
  export LD_LIBRARY_PATH="$scratch/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export TUNEFUZZ_CACHE_DIR="$scratch/cache"

# run_example DIR IMAGES: runs DIR's examples; the C++ one must report IMAGES embedded images.
run_example() {
  local out status=0
  out=$("$1/runtime_example" 2>&1) || status=$?
  echo "$out"
  grep -q "embedded images" <<<"$out" && grep -q ", $2 embedded images" <<<"$out" ||
    { echo "runtime_example: expected $2 embedded images"; exit 1; }
  if [ "$status" -eq 3 ]; then
    grep -q "no usable CUDA device" <<<"$out" || { echo "runtime_example: exit 3 without saying why"; exit 1; }
  elif [ "$status" -ne 0 ]; then
    echo "runtime_example failed (exit $status)"; exit 1
  fi
  status=0
  out=$("$1/gemm_ex_example" "$root/results/h200.yaml" 2>&1) || status=$?
  echo "$out"
  [ "$status" -eq 0 ] || { [ "$status" -eq 3 ] && grep -q "TUNEFUZZ_STATUS_NO_DEVICE" <<<"$out"; } ||
    { echo "gemm_ex_example failed (exit $status)"; exit 1; }
}

# 2. The runtime, kernels compiled on first use.
cmake --install "$build" --prefix "$scratch/jit-prefix"
cmake -S "$root/tests/downstream" -B "$scratch/jit-build" -DCMAKE_PREFIX_PATH="$scratch/jit-prefix"
cmake --build "$scratch/jit-build"
run_example "$scratch/jit-build" 0

# 3. The runtime with kernels compiled ahead of time into the tables.
cmake --install "$build" --prefix "$scratch/aot-prefix"
"$current_table" "$root/tests/downstream/small_table.yaml" "$build/share/tunefuzz/templates" "$scratch/small_table.yaml"
"$tune" export "$scratch/small_table.yaml" --format cmake --embed-kernels -o "$scratch/aot-package"
cmake -S "$scratch/aot-package" -B "$scratch/aot-package-build" -DCMAKE_INSTALL_PREFIX="$scratch/aot-prefix"
cmake --build "$scratch/aot-package-build"
# The prefix's shipped headers carry the export's time stamps (as copies on some machines did): the install
# must replace them all the same (cmake --install skips a file whose destination has the source's time).
for h in tables.hpp kernels.hpp; do
  touch -r "$scratch/aot-package/include/tunefuzz/$h" "$scratch/aot-prefix/include/tunefuzz/$h"
done
cmake --install "$scratch/aot-package-build"
for h in tables.hpp kernels.hpp; do
  cmp "$scratch/aot-package/include/tunefuzz/$h" "$scratch/aot-prefix/include/tunefuzz/$h" ||
    { echo "cmake --install left the prefix's own $h in place of the exported one"; exit 1; }
done
cmake -S "$root/tests/downstream" -B "$scratch/aot-build" -DCMAKE_PREFIX_PATH="$scratch/aot-prefix"
cmake --build "$scratch/aot-build"
run_example "$scratch/aot-build" 2

# The installed package names no build-tree path.
if grep -rlF "$build" "$scratch/jit-prefix/share/cmake" "$scratch/aot-prefix/share/cmake"; then
  echo "the installed CMake files name the build tree"; exit 1
fi
echo "downstream example: the tables answer as expected, and the runtime builds and links against the installed" \
  "package with embedded kernels and without"
