#!/usr/bin/env bash
# The four campaign figures of issue 19, in one GPU session: the shipped config (default configs/h200.yaml)
# cold (empty kernel cache and verdict store), the identical campaign again, the campaign with one more
# problem, and the campaign after one template's source changed (a kernel added to gemm_simt.cu, in a copy
# of the templates folder, so its images change). Each goes to its own table under $OUT; the wall times, the
# card, the driver, the commit and the commands go to $OUT/campaign-timings.yaml.
#   scripts/campaign_timings.sh [CONFIG]      (needs a GPU and a build in build/)
set -euo pipefail
config=${1:-configs/h200.yaml}
out=${OUT:-campaign-timings}
mkdir -p "$out"
tune=$(pwd)/build/bin/tune
export TUNEFUZZ_CACHE_DIR=$out/cache TUNEFUZZ_VERDICT_DIR=$out/verdicts
rm -rf "$TUNEFUZZ_CACHE_DIR" "$TUNEFUZZ_VERDICT_DIR"
record=$out/campaign-timings.yaml
{
  echo "card: \"$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)\""
  echo "driver: \"$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)\""
  echo "commit: $(git rev-parse HEAD)$(git diff --quiet || echo -dirty)"
  echo "config: $config"
  echo "campaigns:"
} > "$record"
campaign() {  # name config [tune run options...]
  local name=$1 cfg=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  "$tune" run "$cfg" -o "$out/$name/table.yaml" "$@" > "$out/$name.log" 2>&1 || echo "  # $name exited $?" >> "$record"
  end=$(date +%s.%N)
  echo "  - {name: $name, seconds: $(echo "$end - $start" | bc), command: \"tune run $cfg -o $out/$name/table.yaml $*\"}" >> "$record"
}
campaign cold "$config"
campaign rerun "$config"
plus_one=$out/plus-one.yaml
sed 's/^problems:$/problems:\n  - {name: square_3072, m: 3072, n: 3072, k: 3072, precision: bf16}/' "$config" > "$plus_one"
campaign plus-one-problem "$plus_one"
cp -r build/share/tunefuzz/templates "$out/templates"
printf '\nextern "C" __global__ void tf_campaign_probe(float* x) { if (x) x[0] = 1.0f; }\n' >> "$out/templates/gemm_simt.cu"
TUNEFUZZ_TEMPLATE_DIR=$out/templates campaign changed-template "$config"
cat "$record"
