#!/bin/bash
# The time stage's cost before and after a change, on one GPU (issues 19 and 20): the same small campaign
# (six aligned bf16 problems of the shipped config over its first gemm_wgmma block) run by two builds in
# turn, gpu-carry/old/ (bin/ and lib/ of the build before) and gpu-carry/ (the build after), each with an
# empty verdict store and the same kernel cache, sanitizers off. The gpu section is the shipped config's for
# the card found. Logs, tables and stage reports (with the time stage's phases) come back in one archive.
set -u
C=$PWD/gpu-carry L=$OUT/ab W=/tmp/ab
mkdir -p $L $W
[ -d /tmp/tpl ] || cp -r $C/share/tunefuzz/templates /tmp/tpl
export TUNEFUZZ_CACHE_DIR=/tmp/tf-cache TUNEFUZZ_TEMPLATE_DIR=/tmp/tpl
card=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
case "$card" in *H200*) shipped=configs/h200.yaml;; *) shipped=configs/h100.yaml;; esac
{ sed -n '1,/^problems:/p' $shipped
  cat <<'PROBLEMS'
  - {name: square_4096, m: 4096, n: 4096, k: 4096, precision: bf16}
  - {name: square_8192, m: 8192, n: 8192, k: 8192, precision: bf16}
  - {name: llm_mlp_up, m: 8192, n: 28672, k: 4096, precision: bf16}
  - {name: llm_mlp_down, m: 8192, n: 4096, k: 14336, precision: bf16}
  - {name: llm_4096x14336x4096, m: 4096, n: 14336, k: 4096, precision: bf16}
  - {name: large_k_512x512x65536, m: 512, n: 512, k: 65536, precision: bf16}
templates:
PROBLEMS
  awk '/^templates:/{t=1; next} t && /^  - name:/{n++} t && n==1' $shipped
  sed -n '/^budgets:/,$p' $shipped
} > $W/ab.yaml
cp $W/ab.yaml $L/
echo "card: $card" > $L/times.txt
LD_LIBRARY_PATH=$C/lib $C/bin/tune compile $W/ab.yaml > $L/compile.txt 2>&1
for build in old new; do
  [ $build = old ] && B=$C/old || B=$C
  t0=$(date +%s%N)
  TUNEFUZZ_VERDICT_DIR=$W/v-$build LD_LIBRARY_PATH=$B/lib timeout ${LIMIT:-200} $B/bin/tune run $W/ab.yaml \
    -o $L/$build.yaml --work-dir $W/w-$build --no-sanitize > $L/$build.txt 2>&1
  echo "$build rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> $L/times.txt
done
cat $L/times.txt; grep -h "\] [0-9]*/[0-9]* in" $L/old.txt $L/new.txt
tar czf $OUT/ab-$(date +%s).tgz -C $OUT ab && rm -rf $L
