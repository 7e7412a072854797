#!/usr/bin/env bash
# Exports results/h200.yaml as a header and as a CMake package, installs the package into a prefix, then
# builds tests/downstream against both and runs its two programs. CTest runs it as downstream.example.
# Usage: run.sh TUNE SCRATCH_DIR [SOURCE_ROOT]
set -euo pipefail

tune=${1:?usage: run.sh TUNE SCRATCH_DIR [SOURCE_ROOT]}
scratch=${2:?usage: run.sh TUNE SCRATCH_DIR [SOURCE_ROOT]}
root=${3:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# Only what this script creates is removed, never the scratch directory itself.
mkdir -p "$scratch"
rm -rf "$scratch/tables.hpp" "$scratch/package" "$scratch/package-build" "$scratch/prefix" "$scratch/build"

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
echo "downstream example: the header and the installed package both answer as expected"
