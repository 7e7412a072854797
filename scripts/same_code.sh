#!/bin/bash
# Does this tree compile a table's winners to the same code as the commit that tuned them? A template's source
# can change (a comment, code under a switch the winners do not set) while every winner's image stays the same
# code; `tune check` compares source hashes only, so it calls such a table stale. This compiles the winners
# from OLD's templates and from the tree's with the built `tune` (NVRTC, no GPU) into two empty kernel caches,
# and compares the images' code digests: sha256 of each image without its debug sections (the code digest
# the verdict store keys on), as a sorted list per tree. Same lists: the same code, image for image.
# usage: scripts/same_code.sh OLD_COMMIT BUILD_DIR TABLE [TABLE...]   (from the repository root)
set -euo pipefail
old=$1 build=$2; shift 2
w=$(mktemp -d)
python3 scripts/winners_config.py configs/h200.yaml "$@" > $w/winners.yaml
mkdir -p $w/old && git archive "$old" templates | tar x -C $w/old
g++ -O2 -std=c++20 -I. -Iruntime/include scripts/strip_debug.cpp runtime/backend/elf_image.cpp \
  tuner/common/hash.cpp tuner/common/error.cpp -lcrypto -o $w/strip_debug
for side in old tree; do
  dir=$w/old/templates; [ $side = tree ] && dir=$build/share/tunefuzz/templates
  TUNEFUZZ_TEMPLATE_DIR=$dir TUNEFUZZ_CACHE_DIR=$w/cache-$side $build/bin/tune compile $w/winners.yaml 2>/dev/null | grep '^compile'
  for f in $w/cache-$side/*.cubin; do $w/strip_debug $f $w/s.cubin > /dev/null && sha256sum < $w/s.cubin | cut -c1-64; done |
    sort > $w/$side.digests
  echo "$side: $(wc -l < $w/$side.digests) images"
done
if diff $w/old.digests $w/tree.digests > $w/diff.txt; then
  echo "same code: every image of the winners compiled at $old and in this tree"; rc=0
else
  echo "different code: $(grep -c '^<' $w/diff.txt) of $(wc -l < $w/old.digests) images at $old are not in this tree"; rc=1
fi
rm -rf $w
exit $rc
