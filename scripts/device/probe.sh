#!/bin/bash
# Shared-resource probes of a multi-GPU host: page faults (fresh pages) and pageable copies, 1..N at once.
P=$(dirname $0)  # beside pf (scripts/page_fault_probe.c, built) and h2d.py (scripts/pageable_copy_probe.py)
for n in 1 4 16; do
  echo "page faults, $n processes at once (GB/s each):" $(for i in $(seq $n); do $P/pf 4 & done; wait)
  echo "reused pages, $n processes at once (GB/s each):" $(for i in $(seq $n); do $P/pf 2 1 & done; wait)
done
for g in 1 4; do
  echo "pageable copies, $g GPUs at once, one process each:" $(for i in $(seq 0 $((g-1))); do CUDA_VISIBLE_DEVICES=$i python3 $P/h2d.py 3 | tr '\n' ' ' & done; wait)
done
