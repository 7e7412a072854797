#!/usr/bin/env bash
# The runtime on a GPU, built the way a downstream build meets it: tunefuzz installed into a prefix, TABLE
# exported with its winners compiled ahead of time and installed over the shipped tables, tests/downstream
# built against that prefix, then gpu_check (tests/downstream/gpu_check.cpp) run. Its report goes to
# OUT_DIR/runtime-check-<card>.yaml with the card, driver, commit and command, for results/.
# TABLE must be current for the tree (`tune check TABLE`): export refuses to embed untested code.
# Usage (from the repository root, on the GPU machine): scripts/runtime_gpu_check.sh TABLE OUT_DIR
set -euo pipefail

table=${1:?usage: runtime_gpu_check.sh TABLE OUT_DIR}
out=${2:?usage: runtime_gpu_check.sh TABLE OUT_DIR}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build build -j "$(nproc)" > "$work/build.log"
build/bin/tune check "$table"
cmake --install build --prefix "$work/prefix" > /dev/null
build/bin/tune export "$table" --format cmake --embed-kernels -o "$work/tables"
cmake -S "$work/tables" -B "$work/tables-build" -DCMAKE_INSTALL_PREFIX="$work/prefix" > /dev/null
cmake --build "$work/tables-build" -j "$(nproc)" > /dev/null
cmake --install "$work/tables-build" > /dev/null
cmake -S tests/downstream -B "$work/downstream" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release \
  > /dev/null
cmake --build "$work/downstream" -j "$(nproc)" > /dev/null

card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
report="$out/runtime-check-$(tr ' ' '-' <<<"$card" | tr -cd 'A-Za-z0-9-').yaml"
{
  echo "# tunefuzz runtime GPU check (tests/downstream/gpu_check.cpp)"
  echo "# card: $card, driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  echo "# commit: $(git rev-parse HEAD)$(git diff --quiet HEAD || echo -dirty), table: $table"
  echo "# command: scripts/runtime_gpu_check.sh $*"
  status=0
  "$work/downstream/gpu_check" "$table" || status=$?
  echo "# exit: $status"
} | tee "$report"
grep -q "^# exit: 0$" "$report"
