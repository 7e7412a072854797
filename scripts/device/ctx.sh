#!/bin/bash
# Contexts made by many processes at once (issue 20): scripts/context_probe.cpp, built, carried as
# gpu-carry/context_probe. Each line of the output is one process's step ends (context_probe's comment);
# scripts/context_timeline.py reads them. Variants: the default environment, CUDA_DEVICE_MAX_CONNECTIONS=1,
# and one process per GPU holding its context while the others start.
P=${P:-gpu-carry/context_probe}
G=$(nvidia-smi -L | wc -l)
nvidia-smi -q | grep -iE "persistence|MIG Mode" -A0 | sort | uniq -c
burst() {  # LABEL N: N probes at once, round-robin over the GPUs
  echo "== $1 n=$2 start $(date +%s%6N)"
  for i in $(seq 0 $(( $2 - 1 ))); do CUDA_VISIBLE_DEVICES=$(( i % G )) $P & done; wait
}
for n in 1 8 16 32; do burst default $n; done
for n in 8 16; do CUDA_DEVICE_MAX_CONNECTIONS=1 burst connections1 $n; done
for g in $(seq 0 $(( G - 1 ))); do CUDA_VISIBLE_DEVICES=$g $P 20 > /dev/null & done; sleep 3
for n in 8 16; do burst held $n; done
wait
# The worker itself (its libraries' load included): N probe jobs at once, the burst's wall time.
W=${W:-gpu-carry/bin/tunefuzz-worker}
if [ -x $W ]; then
  mkdir -p /tmp/ctxw && echo "kind: probe" > /tmp/ctxw/job.yaml
  for n in 1 8 16; do
    t0=$(date +%s%6N)
    for i in $(seq 0 $(( n - 1 ))); do LD_LIBRARY_PATH=gpu-carry/lib CUDA_VISIBLE_DEVICES=$(( i % G )) $W /tmp/ctxw/job.yaml /tmp/ctxw/r$i.yaml & done; wait
    echo "worker probe jobs n=$n: burst $(( ($(date +%s%6N) - t0) / 1000 )) ms"
  done
fi
