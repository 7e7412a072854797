#!/usr/bin/env bash
# Renders a `tune report` page in headless Chromium and checks what a reader would see: a screenshot that is
# a real, non-trivial PNG of the window's size, and a DOM (after parsing, as the browser built it) holding
# the three charts and their bars and cells.
#
#   report_screenshot.sh REPORT.html OUTDIR               check an existing report
#   report_screenshot.sh COMMAND... -- OUTDIR             run COMMAND (which writes OUTDIR/report.html) first
#
# Leaves OUTDIR/report.png and OUTDIR/report.dom.html. Exits 77 (CTest: skipped) without Chromium.
set -euo pipefail

usage() {
  echo "usage: $0 REPORT.html OUTDIR | $0 WRITE_REPORT_COMMAND... -- OUTDIR" >&2
  exit 2
}

readonly chromium=${CHROMIUM:-/usr/bin/chromium}
readonly width=1400 height=2400
# The H200 report draws 49 rectangles (26 bars, 10 funnel bars, 9 heatmap cells, legends); a page that lost
# a chart's bars draws far fewer.
readonly min_png_bytes=20000 min_rects=${MIN_RECTS:-40}

if [[ " $* " == *" -- "* ]]; then
  command=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    command+=("$1")
    shift
  done
  [[ $# -eq 2 ]] || usage
  outdir=$2
  report=$outdir/report.html
  mkdir -p "$outdir"
  "${command[@]}"
else
  [[ $# -eq 2 ]] || usage
  report=$1
  outdir=$2
  mkdir -p "$outdir"
fi

if [[ ! -x $chromium ]]; then
  echo "SKIPPED: chromium is not installed ($chromium)"
  exit 77
fi
[[ -s $report ]] || { echo "FAIL: no report at $report" >&2; exit 1; }

report=$(realpath "$report")
outdir=$(realpath "$outdir")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

# No network, no GPU, no first-run or background traffic; a fresh profile each time.
browser() {
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --window-size=$width,$height "$@" "file://$report"
}

browser --screenshot="$outdir/report.png" >"$outdir/chromium.log" 2>&1
browser --dump-dom >"$outdir/report.dom.html" 2>>"$outdir/chromium.log"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

png=$outdir/report.png
if [[ ! -f $png ]]; then
  fail "no screenshot (chromium log: $outdir/chromium.log)"
else
  description=$(file -b "$png")
  [[ $description == "PNG image data, $width x $height,"* ]] || fail "screenshot is not a ${width}x$height PNG: $description"
  bytes=$(stat -c %s "$png")
  ((bytes > min_png_bytes)) || fail "screenshot is $bytes bytes (at most $min_png_bytes: a blank page?)"
fi

dom=$outdir/report.dom.html
for id in chart-tflops chart-funnel chart-heatmap; do
  grep -q "id=\"$id\"" "$dom" || fail "the rendered page has no #$id"
done
rects=$(grep -o '<rect' "$dom" | wc -l)
((rects >= min_rects)) || fail "the rendered page has $rects <rect> elements (expected at least $min_rects)"
if grep -Eq '(src|href)="(https?:)?//' "$dom"; then fail "the page references a network resource"; fi

if ((failures > 0)); then
  echo "$failures check(s) failed; screenshot: $png" >&2
  exit 1
fi
echo "OK: $png (${bytes} bytes, $description), $rects <rect> elements, three charts"
