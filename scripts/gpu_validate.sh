#!/usr/bin/env bash
# One GPU-machine session's worth of checks, on a build folder made by ../shared/gpu/bundle.sh (build-gpu):
# the GPU tests, the smoke campaign, the mutant campaign (report under $OUT) and compute-sanitizer replays of
# what the mutants left behind. Usage on the GPU machine, from the repository root:
#   OUT=/some/dir scripts/gpu_validate.sh [build-gpu]
set -uo pipefail
build=${1:-build-gpu}
out=${OUT:?set OUT to a directory for logs and reports}
export LD_LIBRARY_PATH=$PWD/$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TUNEFUZZ_CACHE_DIR=${TUNEFUZZ_CACHE_DIR:-/tmp/tunefuzz-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
card=$(head -1 "$out/gpu.txt" | cut -d, -f1)
case "$card" in *H200*) config=configs/h200.yaml ;; *) config=configs/h100.yaml ;; esac

echo "== GPU tests"
tests/gpu_guard.sh "$build/bin/tunefuzz-worker" "$build/bin/test_gpu" > "$out/test_gpu.log" 2>&1
echo "test_gpu exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED" "$out/test_gpu.log" | head -20

echo "== smoke campaign"
timeout 300 "$build/bin/tune" run configs/smoke.yaml -o /tmp/smoke.yaml --work-dir /tmp/smoke.work > "$out/smoke.log" 2>&1
echo "smoke exit $?"; grep -A4 "^problem" "$out/smoke.log"; grep -E "^(fuzz|time) " "$out/smoke.log"

echo "== mutants ($config, gemm_mma)"
timeout 420 "$build/bin/fuzz" mutants "$config" --template gemm_mma --cases 200 -o "$out/mutants.yaml" \
  --work-dir /tmp/mutants.work > "$out/mutants.log" 2>&1
echo "mutants exit $?"; sed -n '/^base /,$p' "$out/mutants.log"

echo "== mutants ($config, gemm_wgmma: half of its bugs deadlock; the 30 s kernel deadline ends those)"
timeout 300 "$build/bin/fuzz" mutants "$config" --template gemm_wgmma --cases 100 --timeout 240 \
  -o "$out/mutants-wgmma.yaml" --work-dir /tmp/mutants-wgmma.work > "$out/mutants-wgmma.log" 2>&1
echo "mutants exit $?"; sed -n '/^base /,$p' "$out/mutants-wgmma.log"

for template in gemm_simt gemm_skinny; do
  echo "== mutants ($config, $template)"
  timeout 300 "$build/bin/fuzz" mutants "$config" --template "$template" --cases 100 --timeout 240 \
    -o "$out/mutants-$template.yaml" --work-dir "/tmp/mutants-$template.work" > "$out/mutants-$template.log" 2>&1
  echo "mutants exit $?"; sed -n '/^base /,$p' "$out/mutants-$template.log"
done

echo "== replays under compute-sanitizer"
for name in drop_tail no_stage_barrier; do
  repro=$(grep -A12 "mutant: $name" "$out/mutants.yaml" | grep -m1 "reproducer:" | sed 's/.*reproducer: *//')
  [ -n "$repro" ] || { echo "$name: no reproducer"; continue; }
  tool=memcheck; [ "$name" = no_stage_barrier ] && tool=racecheck
  timeout 240 "$build/bin/fuzz" replay "$repro" --sanitize "$tool" --work-dir /tmp/replay.work > "$out/replay-$name.log" 2>&1
  echo "replay $name ($tool) exit $?"; grep -E "^result:|ERROR SUMMARY|Race reported|Invalid" "$out/replay-$name.log" | head -5
done
