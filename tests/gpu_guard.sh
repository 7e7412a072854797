#!/usr/bin/env bash
# Runs a GPU test only where a worker process can see a GPU; otherwise prints why and exits 77 (skipped).
#   gpu_guard.sh WORKER COMMAND [ARGS...]
set -u
worker=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "kind: probe" > "$dir/job.yaml"
if ! "$worker" "$dir/job.yaml" "$dir/result.yaml" > "$dir/log" 2>&1; then
  reason=$(grep -h "message:" "$dir/result.yaml" 2>/dev/null | head -1 | sed 's/^ *message: *//')
  [ -n "$reason" ] || reason=$(tail -1 "$dir/log")
  echo "SKIPPED: no usable GPU: $reason"
  exit 77
fi
exec "$@"
