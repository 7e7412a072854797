#!/bin/bash
# Device calls for the H200 campaign timings (issue 19) and a fresh table (issue 16).
# Steps (arguments, in order): cold | rerun | added | tpl:NAME | code:NAME | codefresh:NAME | cfg:NAME | gpucheck:NAME | loadab |
#   profile:TABLE:PROBLEM,PROBLEM,... (ncu --set full of those rows' winners and cuBLAS; details page and
#   the warp-stall breakdown) |
#   mutant:TEMPLATE:NAME,NAME,...[:CONFIG] (the base point from CONFIG, default configs/h200.yaml; with
#   MUTANT_JOURNAL=FILE, an earlier call's journal of the same run, it resumes that run) |
#   gputest:FILTER (test_gpu's cases matching the gtest filter) |
#   sass:CONFIG[:LABEL] (CONFIG's images compiled and disassembled; SASS_TPL=DIR for another template tree) |
#   reduce (split-K's second pass timed alone, single, shipped and grouped, and profiled unless REDUCE_NCU=0:
#   scripts/reduce_probe.cu)
#   tw:N (the campaign steps after it run with --time-workers N) |
#   ab:N (the time stage of h200.yaml again with N time workers per GPU, after `cold`: the verdict store
#   copied without its timings and screens, so every problem is timed again as after a code change)
# GPUS=0,1 runs the cold and cfg: campaigns on those GPUs. Each step appends "step rc seconds" to times.txt; logs and tables come back in one archive.
# RESUME=1 lets `cold` and `cfg:` resume from their journal in /tmp/camp (a campaign split over calls on one
# machine); without it they start from an empty work folder, since a machine may come back with an earlier
# call's /tmp/camp. Only files this call wrote in /tmp/camp come back.
set -u -o pipefail  # a step's status is its command's, through the time stamps' pipe
# Each line of a campaign's log prefixed with the time it was written (seconds since the epoch), so that the
# gaps between stages show.
stamp() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }
root=$PWD C=$PWD/gpu-carry L=$OUT/logs W=/tmp/camp
rm -rf $L  # logs of an earlier call left in $OUT on a reused machine would go into this call's archive
mkdir -p $L $W
[ -e /work/main ] || { mkdir -p /work && ln -s "$root" /work/main; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader > $L/card.txt
nproc > $L/nproc.txt
[ -d /tmp/tpl ] || cp -r $C/share/tunefuzz/templates /tmp/tpl
export LD_LIBRARY_PATH=$C/lib TUNEFUZZ_CACHE_DIR=/tmp/tf-cache TUNEFUZZ_VERDICT_DIR=${TUNEFUZZ_VERDICT_DIR:-/tmp/tf-verdicts} TUNEFUZZ_TEMPLATE_DIR=/tmp/tpl
start=$(date +%s)
limit=${LIMIT:-575}
# The card's clocks, power and temperature every second through the call (issue 18: timings that differ
# between a campaign and a later run of the same kernels).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -l 1 > $L/clocks-$(date +%s).csv 2>/dev/null & clocks=$!
# The host's CPU twice a second (/proc/stat's first line: jiffies busy and idle over every core), to see which
# stages keep the cores busy (issue 19: compile, fuzz and the checks are host work).
lscpu > $L/lscpu.txt 2>&1
{ while :; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 0.5; done; } > $L/cpu-$(date +%s).txt & cpu=$!
for step in "$@"; do
  left=$(( limit - ($(date +%s) - start) ))
  [ $left -gt 20 ] || { echo "$step skipped: no time left" >> $L/times.txt; continue; }
  t0=$(date +%s%N); d=$(date -u +%FT%TZ)
  case $step in
    cold)   if [ "${RESUME:-0}" = 1 ] && [ -f $W/h200.journal ]; then r=--resume; else r=; rm -rf $W/h200.* $W/work; fi
            timeout $left $C/bin/tune run configs/h200.yaml -o $W/h200.yaml --work-dir $W/work $r ${GPUS:+--gpus $GPUS} ${EXTRA:-} 2>&1 | stamp > $L/cold-$(date +%s).txt ;;
    tw:*)   EXTRA="${EXTRA:-} --time-workers ${step#tw:}" ;;  # the later campaign steps with N time workers per GPU
    rerun)  timeout $left $C/bin/tune run configs/h200.yaml -o $W/rerun.yaml --work-dir $W/work-rerun ${EXTRA:-} > $L/rerun.txt 2>&1 ;;
    added)  cp configs/h200.yaml $W/h200-added.yaml
            sed -i '/^problems:/a\  - {name: added_3000x5000x700, m: 3000, n: 5000, k: 700, precision: bf16}' $W/h200-added.yaml
            cp $W/h200-added.yaml $L/
            timeout $left $C/bin/tune run $W/h200-added.yaml -o $W/added.yaml --work-dir $W/work-added ${EXTRA:-} > $L/added.txt 2>&1 ;;
    tpl:*)  t=${step#tpl:}
            sed -i "1i // $d: a line added to change this template's source (campaign timing after a template change)" /tmp/tpl/$t.cu
            timeout $left $C/bin/tune run configs/h200.yaml -o $W/tpl-$t.yaml --work-dir $W/work-tpl-$t ${EXTRA:-} > $L/tpl-$t.txt 2>&1
            rc=$?; rm -rf /tmp/tpl && cp -r $C/share/tunefuzz/templates /tmp/tpl; (exit $rc) ;;  # later steps see the shipped templates
    code:*|codefresh:*) t=${step#*:}  # a change to the code of every image of the template's file: a branch in its split-K reduce
            codes=$(( ${codes:-0} + 1 ))  # each code step of a call changes it another way: no image is cached
            sed -i 's|^extern "C" __global__ void tf_reduce(const TfGemmParams p) {$|&\n  if (p.n < -'$codes') __trap();  // campaign timing: a change to the code|' /tmp/tpl/$t.cu
            grep -q 'campaign timing: a change to the code' /tmp/tpl/$t.cu || { echo "no tf_reduce in $t.cu" > $L/code-$t.txt; false; } &&
            # as a user runs it again: over the table the cold step wrote, which the campaign replaces
            # (codefresh: with no table at its output, as a first run to a new output)
            { [ ! -f $W/h200.yaml ] || [ ${step%%:*} = codefresh ] || cp $W/h200.yaml $W/code-$t-$codes.yaml; } &&
            timeout $left $C/bin/tune run configs/h200.yaml -o $W/code-$t-$codes.yaml --work-dir $W/work-code-$t-$codes ${EXTRA:-} 2>&1 | stamp > $L/code-$t-$codes.txt
            rc=$?; rm -rf /tmp/tpl && cp -r $C/share/tunefuzz/templates /tmp/tpl; (exit $rc) ;;
    ab:*)   n=${step#ab:}; A=/tmp/tf-verdicts-ab
            rm -rf $A && cp -r $TUNEFUZZ_VERDICT_DIR $A && rm -rf $A/timing $A/screen
            TUNEFUZZ_VERDICT_DIR=$A timeout $left $C/bin/tune run configs/h200.yaml -o $W/ab-$n.yaml --work-dir $W/work-ab-$n \
              --time-workers $n ${EXTRA:-} 2>&1 | stamp > $L/ab-$n.txt ;;
    cfg:*)  n=${step#cfg:}; f=configs/$n.yaml; case $n in */*) f=$n n=$(basename $n .yaml) ;; esac  # a name or a path
            if [ "${RESUME:-0}" = 1 ] && [ -f $W/$n.journal ]; then r=--resume; else r=; rm -rf $W/$n.* $W/work-$n; fi
            timeout $left $C/bin/tune run $f -o $W/$n.yaml --work-dir $W/work-$n $r ${GPUS:+--gpus $GPUS} > $L/cfg-$n-$(date +%s).txt 2>&1 ;;
    gpucheck:*) n=${step#gpucheck:}; P=/tmp/prefix G=$L/gpucheck-$n.txt; rm -rf $P /tmp/tables /tmp/tables-build /tmp/ds; cp -r $C/prefix $P
            [ -f $W/$n.yaml ] || cp results/$n.yaml $W/$n.yaml  # no campaign in this call: the committed table
            { $C/bin/tune check $W/$n.yaml && $C/bin/tune export $W/$n.yaml --format cmake --embed-kernels -o /tmp/tables &&
              cmake -S /tmp/tables -B /tmp/tables-build -DCMAKE_INSTALL_PREFIX=$P && cmake --build /tmp/tables-build -j 16 &&
              cmake --install /tmp/tables-build &&
              cmake -S tests/downstream -B /tmp/ds -DCMAKE_PREFIX_PATH=$P -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/ds -j 16 --target gpu_check; } > $L/gpucheck-build.txt 2>&1
            { echo "# card: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
              echo "# date: $(date -u +%FT%TZ)"
              echo "# command: LD_LIBRARY_PATH=PREFIX/lib gpu_check $n.yaml ($(cmp -s $W/$n.yaml results/$n.yaml && echo "results/$n.yaml as committed" || echo "the table this call's campaign wrote"))"
              LD_LIBRARY_PATH=$P/lib:$C/lib timeout $(( left - 5 )) /tmp/ds/gpu_check $W/$n.yaml; echo "# exit: $?"; } > $G 2>&1 ;;
    profile:*) IFS=: read -r _ table names <<< "$step"; P=/tmp/prefix-profile n=$(basename $table .yaml)
            { [ -d /tmp/ds-profile ] || { rm -rf $P && cp -r $C/prefix $P &&
                $C/bin/tune export $table --format cmake -o /tmp/tables-profile &&
                cmake -S /tmp/tables-profile -B /tmp/tables-profile-build -DCMAKE_INSTALL_PREFIX=$P &&
                cmake --build /tmp/tables-profile-build -j 16 && cmake --install /tmp/tables-profile-build &&
                cmake -S tests/downstream -B /tmp/ds-profile -DCMAKE_PREFIX_PATH=$P -DCMAKE_BUILD_TYPE=Release &&
                cmake --build /tmp/ds-profile -j 16 --target profile_rows; }; } > $L/profile-build-$n.txt 2>&1
            LD_LIBRARY_PATH=$P/lib:$C/lib timeout $(( left - 5 )) /usr/local/cuda/bin/ncu --profile-from-start off \
              --set full -f -o /tmp/profile-$n /tmp/ds-profile/profile_rows $table ${names//,/ } > $L/profile-$n.txt 2>&1
            /usr/local/cuda/bin/ncu --import /tmp/profile-$n.ncu-rep --page details --csv > $L/profile-$n-details.csv 2>&1
            # the warp-state breakdown (every stall reason's share) the details page names only the top of
            /usr/local/cuda/bin/ncu --import /tmp/profile-$n.ncu-rep --page raw --csv \
              --metrics 'regex:smsp__average_warp(s_issue_stalled|_latency_issue_stalled)_.*_per_issue_active\.ratio$' \
              2>&1 | gzip > $L/profile-$n-stalls.csv.gz ;;
    sass:*) IFS=: read -r _ cfg label <<< "$step"; label=${label:-shipped}  # every image of CONFIG, disassembled
            # (SASS_TPL=DIR compiles another template tree); read here with scripts/sass_mix.py
            TUNEFUZZ_CACHE_DIR=/tmp/sass-$label TUNEFUZZ_TEMPLATE_DIR=${SASS_TPL:-/tmp/tpl} timeout $left $C/bin/tune compile $cfg > $L/sass-$label-compile.txt 2>&1 &&
            for f in /tmp/sass-$label/*.cubin; do /usr/local/cuda/bin/cuobjdump -sass $f; done | gzip > $L/sass-$label.txt.gz ;;
    reduce) # split-K's second pass alone, the shipped one against 15f42fe's grouped one at each group size
            # (gpu-carry/bin/reduce_probe, scripts/reduce_probe.cu), then ncu of both on two shapes
            { echo "# card: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
              echo "# date: $(date -u +%FT%TZ)"
              echo "# command: reduce_probe"
              timeout $(( left / 2 )) $C/bin/reduce_probe; } > $L/reduce-probe.txt 2>&1
            [ "${REDUCE_NCU:-1}" = 0 ] ||  # REDUCE_NCU=0: the timings alone
            { REDUCE_PROBE_REPEATS=1 timeout $(( left / 2 )) /usr/local/cuda/bin/ncu --set full -k 'regex:shipped|grouped' -f -o /tmp/reduce \
                $C/bin/reduce_probe 256 256 16 4096 4096 4 > $L/reduce-ncu.txt 2>&1
              /usr/local/cuda/bin/ncu --import /tmp/reduce.ncu-rep --page details --csv > $L/reduce-ncu-details.csv 2>&1; } ;;
    loadab) # module loads of the largest cached cubins as compiled and without debug sections
            # (gpu-carry/bin/strip_debug: without_debug_sections), each fresh process in turn, three rounds
            g++ -O2 -std=c++17 scripts/load_probe.cpp -I/usr/local/cuda/include -lcuda -o /tmp/load_probe > $L/loadab-build.txt 2>&1
            { echo "# card: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
              echo "# date: $(date -u +%FT%TZ)"
              echo "# command: CUDA_MODULE_LOADING=LAZY load_probe IMAGE 1048576 tf_gemm_rr tf_gemm_rc tf_gemm_cr tf_gemm_cc tf_gemm tf_scale_c tf_reduce tf_pack tf_pack_transposed"
              for f in $(ls -S $TUNEFUZZ_CACHE_DIR/*.cubin | head -${LOADAB_IMAGES:-4}); do
                $C/bin/strip_debug $f /tmp/stripped.cubin > /dev/null || continue
                for round in 1 2 3; do for img in $f /tmp/stripped.cubin; do
                  echo "# round $round: $(basename $f)$([ $img = $f ] || echo ' stripped')"
                  CUDA_MODULE_LOADING=LAZY /tmp/load_probe $img 1048576 tf_gemm_rr tf_gemm_rc tf_gemm_cr tf_gemm_cc tf_gemm tf_scale_c tf_reduce tf_pack tf_pack_transposed
                done; done
              done; } > $L/loadab.txt 2>&1 ;;
    gputest:*) f=${step#gputest:}  # test_gpu's cases whose names match the gtest filter F (e.g. '*Swapped*')
            timeout $left tests/gpu_guard.sh $C/bin/tunefuzz-worker $C/bin/test_gpu --gtest_filter="$f" \
              > $L/gputest-$(echo "$f" | tr -c 'A-Za-z0-9\n' _).txt 2>&1 ;;
    mutant:*) IFS=: read -r _ t m cfg <<< "$step"
            # The report and its journal in $W (they come back with the logs); MUTANT_JOURNAL=FILE (an earlier
            # call's journal, carried in the tree) resumes that run: its verdicts are kept, the rest fuzzed.
            out=$W/mutants-$t-${m//,/+}.yaml r=
            if [ -n "${MUTANT_JOURNAL:-}" ]; then cp "$MUTANT_JOURNAL" "${out%.yaml}.journal"; r=--resume; fi
            timeout $left $C/bin/fuzz mutants ${cfg:-configs/h200.yaml} --template $t $(for x in ${m//,/ }; do echo --mutant $x; done) --cases 100 --timeout $(( left - 10 )) \
              --sanitize none -o $out $r --work-dir /tmp/m-$t > $L/mutants-$t-${m//,/+}.txt 2>&1 ;;
  esac
  rc=$?
  echo "$step started $d rc=$rc $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> $L/times.txt
done
kill $clocks $cpu 2>/dev/null
find $W -maxdepth 1 -type f \( -name '*.yaml' -o -name '*.journal' -o -name '*.html' \) -newer $L/card.txt \
  -exec cp {} $L/ \;  # this call's tables and journals, not those an earlier call left on the machine
cat $L/card.txt $L/times.txt
for f in $L/*.txt; do case $f in *card.txt|*times.txt|*nproc.txt|*cpu-*.txt|*lscpu.txt) ;; *) echo "== $f"; grep -v '^\([0-9.]* \)\?\[compile\]' $f | tail -n 25;; esac; done
tar czf $OUT/logs-$(date +%s).tgz -C $OUT logs && rm -rf $L
