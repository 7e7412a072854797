#!/bin/bash
# Makes gpu-carry/, the folder a device call carries (scripts/device/README.md), from build-gpu/ as
# ../shared/gpu/bundle.sh leaves it (`bundle.sh build-gpu -- -DTUNEFUZZ_HIP=OFF`). Run from the repository root.
# It says how much the call will send: the working tree (tracked files and untracked ones git does not ignore)
# and the carry count together against 64 MiB. LEAN=1 leaves out test_gpu and reduce_probe (3 MB), which only
# camp.sh's gputest: and reduce steps need, for a call that would not fit with them.
set -euo pipefail
[ -x build-gpu/bin/tune ] || { echo "carry.sh: no build-gpu/bin/tune; run ../shared/gpu/bundle.sh build-gpu -- -DTUNEFUZZ_HIP=OFF first" >&2; exit 1; }
grep -qx '/gpu-carry/' .git/info/exclude 2>/dev/null || echo /gpu-carry/ >> .git/info/exclude  # carry takes ignored paths only
rm -rf gpu-carry && mkdir -p gpu-carry/bin
lean=${LEAN:-0}
for b in tune fuzz tunefuzz-worker test_gpu strip_debug; do
  [ $b = test_gpu ] && [ "$lean" = 1 ] && continue
  [ -x build-gpu/bin/$b ] || { [ $b = strip_debug ] && continue; echo "carry.sh: build-gpu/bin/$b is missing" >&2; exit 1; }
  cp build-gpu/bin/$b gpu-carry/bin/ && strip gpu-carry/bin/$b
done
[ "$lean" = 1 ] ||
  /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -I. -Itemplates scripts/reduce_probe.cu -o gpu-carry/bin/reduce_probe \
    -L/usr/local/cuda/lib64/stubs -lcuda  # the driver API from the stub here, the real libcuda.so.1 on the device
cp -r build-gpu/lib gpu-carry/lib
# The GPU machine has its own OpenSSL 3 (Ubuntu 24.04.3: /lib/x86_64-linux-gnu/libcrypto.so.3, which tune and the
# worker load there without this copy, checked on 2026-12-04): 4.7 MB a call need not send.
rm -f gpu-carry/lib/libcrypto.so.3
[ -d build-gpu/share ] && cp -r build-gpu/share gpu-carry/share
cmake --install build-gpu --prefix gpu-carry/prefix > /dev/null
rm -rf gpu-carry/prefix/bin  # the stripped bin/ above serves; unstripped copies would cost about 10 MB
cp scripts/device/camp.sh scripts/device/multi.sh gpu-carry/
# Counted as the disk holds them (whole blocks): by their bytes alone, 66.2 MB once passed here and the device
# call refused it as over 64 MiB.
tracked=$(( $(git ls-files -z --cached --others --exclude-standard | xargs -0 du -ck | tail -1 | cut -f1) * 1024 ))
carried=$(( $(du -sk gpu-carry | cut -f1) * 1024 ))
total=$(( tracked + carried ))
printf 'gpu-carry: %d MB; the working tree %d MB; a call sends %d of %d MB\n' \
  $(( carried / 1000000 )) $(( tracked / 1000000 )) $(( total / 1000000 )) $(( 64 * 1048576 / 1000000 ))
[ $total -le $(( 64 * 1048576 )) ] || { echo "carry.sh: over the 64 MiB a call may send" >&2; exit 1; }
