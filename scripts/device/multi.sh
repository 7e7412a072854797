#!/bin/bash
# Device calls on a machine of several GPUs: every template's mutants (issue 15), split over the GPUs, and the fuzz
# stage's parallel efficiency on one GPU against two (issue 20). Logs and reports come back in one archive.
set -u
root=$PWD C=$PWD/gpu-carry L=$OUT/logs
rm -rf $L  # logs of an earlier call left in $OUT on a reused machine would go into this call's archive
mkdir -p $L
[ -e /work/main ] || { mkdir -p /work && ln -s "$root" /work/main; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader > $L/card.txt
nproc > $L/nproc.txt
[ -d /tmp/tpl ] || cp -r $C/share/tunefuzz/templates /tmp/tpl
export LD_LIBRARY_PATH=$C/lib TUNEFUZZ_CACHE_DIR=/tmp/tf-cache TUNEFUZZ_VERDICT_DIR=/tmp/tf-verdicts TUNEFUZZ_TEMPLATE_DIR=/tmp/tpl
CFG=${CONFIG:-configs/h200.yaml}  # the campaign's config (CONFIG=configs/h100.yaml on H100 cards)
start=$(date +%s); limit=${LIMIT:-570}
left() { echo $(( limit - ($(date +%s) - start) )); }
mut() {  # GPU TEMPLATE[:M1,M2,...]...: each template's mutants (or the named ones) in turn on that GPU
  local gpu=$1; shift
  for spec in "$@"; do
    local t=${spec%%:*} sel="" tag=${spec%%:*}-gpu$gpu
    [ "$t" != "$spec" ] && sel=$(echo ${spec#*:} | tr , '\n' | sed 's/^/--mutant /' | tr '\n' ' ')
    local l=$(( $(left) - 5 )); [ $l -gt 30 ] || { echo "$t skipped: no time left" >> $L/times.txt; continue; }
    local t0=$(date +%s) d=$(date -u +%FT%TZ)
    CUDA_VISIBLE_DEVICES=$gpu timeout $l $C/bin/fuzz mutants $CFG --template $t --cases 100 \
      --timeout $(( l - 10 )) --sanitize none $sel -o $L/mutants-$tag.yaml --work-dir /tmp/m-$tag > $L/mutants-$tag.txt 2>&1
    echo "mutants $spec gpu $gpu started $d rc=$? $(( $(date +%s) - t0 )) s" >> $L/times.txt
  done
}
fuzzrun() {  # NAME GPUS BUDGET
  local l=$(( $(left) - 5 )); [ $l -gt 30 ] || { echo "$1 skipped: no time left" >> $L/times.txt; return; }
  local t0=$(date +%s) d=$(date -u +%FT%TZ)
  TIMEFORMAT="fuzz $1: wall %R s, user %U s, sys %S s (the tool and its workers)"
  { time timeout $l $C/bin/fuzz run $CFG --gpus $2 --budget $3 --seed 7 -o $L/fuzz-$1.yaml --work-dir /tmp/f-$1 > $L/fuzz-$1.txt 2>&1 ; } 2>> $L/cpu.txt
  echo "fuzz $1 gpus $2 budget $3 host_threads ${TUNEFUZZ_HOST_THREADS:-share} started $d rc=$? $(( $(date +%s) - t0 )) s" >> $L/times.txt
}
tunerun() {  # NAME GPUS: the shipped campaign ($CFG) on those GPUs, its own verdict store; resumes from a
  # journal carried back in as gpu-carry/NAME.journal (this call's limit may cut it; the journal comes back in $L)
  local l=$(( $(left) - 5 )) r=; [ $l -gt 30 ] || { echo "tune $1 skipped: no time left" >> $L/times.txt; return; }
  [ -f $C/$1.journal ] && { cp $C/$1.journal $L/$1.journal; r=--resume; }
  local t0=$(date +%s) d=$(date -u +%FT%TZ)
  TIMEFORMAT="tune $1: wall %R s, user %U s, sys %S s (the tool and its workers)"
  { time TUNEFUZZ_VERDICT_DIR=/tmp/v-$1 timeout $l $C/bin/tune run $CFG --gpus $2 -o $L/$1.yaml \
      --work-dir /tmp/w-$1 $r > $L/tune-$1-$t0.txt 2>&1 ; } 2>> $L/cpu.txt
  echo "tune $1 gpus $2 ${r:-fresh} started $d rc=$? $(( $(date +%s) - t0 )) s" >> $L/times.txt
}
for step in "$@"; do
case $step in
  mutants) mut 0 gemm_wgmma & mut 1 gemm_mma gemm_skinny gemm_simt & wait ;;
  wg) mut 0 gemm_wgmma:store_not_drained,init_in_role,wrong_parity,arrival_count,skips_advance,release_local,no_exit_sync &
      mut 1 gemm_simt:no_k_guard & mut 1 gemm_wgmma:k_tile_mismatch,no_acc_init,beta0_reads_c,multicast_self,store_before_slab_sync,release_before_mma,split_slot_wraps & wait ;;
  probe) bash $C/probe/run.sh > $L/probe.txt 2>&1 ;;  # scripts/device/probe.sh, carried as gpu-carry/probe/run.sh
  scale) fuzzrun warm 0 5s; fuzzrun one 0 $BUDGET; fuzzrun two 0,1 $BUDGET; fuzzrun four 0,1,2,3 $BUDGET ;;
  fuzzeff) fuzzrun warm 0 ${WARM:-5s}; fuzzrun one 0 ${BUDGET:-120s}; fuzzrun two 0,1 ${BUDGET:-120s} ;;
  camp4) tunerun four 0,1,2,3 ;;  # run `scale` (or `warm`) first in the same call: the images come from its cache
  camp2) tunerun two 0,1 ;;
  camp1) tunerun one 0  # the one-GPU table and its store, where a later camp.sh call on this machine finds them
         mkdir -p /tmp/camp && cp $L/one.yaml /tmp/camp/h200.yaml 2>/dev/null ;;
  compile) t0=$(date +%s); $C/bin/tune compile $CFG > $L/compile.txt 2>&1; echo "compile $CFG rc=$? $(( $(date +%s) - t0 )) s" >> $L/times.txt ;;
  warm) fuzzrun warm 0 5s ;;
esac
done
cat $L/card.txt $L/nproc.txt $L/probe.txt $L/times.txt $L/cpu.txt 2>/dev/null
for f in $L/*.txt; do case $f in *card.txt|*times.txt|*nproc.txt|*cpu.txt|*probe.txt) ;; *) echo "== $f"; tail -n 14 $f;; esac; done
tar czf $OUT/logs-$(date +%s).tgz -C $OUT logs && rm -rf $L
