#!/usr/bin/env bash
# Sets up and builds tunefuzz on Debian 12, then optionally runs the tests or a campaign.
#
#   ./setup.sh              install what is missing, build into build/
#   ./setup.sh test         ... then run every test (GPU tests report SKIPPED with the reason when there is no GPU)
#   ./setup.sh run [ARGS]   ... then `tune run ARGS` (e.g. configs/h100.yaml; no ARGS: the config for the detected GPU)
#
# Idempotent: packages already installed are not touched and the build is incremental, so a second run
# takes seconds. The CUDA toolkit is not a Debian package: it is looked for under $CUDA_HOME, then
# /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")"

packages=(build-essential cmake git pkg-config libyaml-cpp-dev libeigen3-dev libboost-dev librapidcheck-dev
          libcli11-dev libgtest-dev libssl-dev)
# ROCm 5.2's HIP from Debian: hiprtc and comgr (libamdhip64-dev) compile gfx* targets, hipcc brings the device
# libraries; the HIP backend is optional (CMake builds without it), but CI builds and tests it.
packages+=(hipcc libamdhip64-dev)
# Open MPI: `mpirun -n N tune run CONFIG` splits a campaign over ranks (tuner/cluster); without mpirun the
# tools never start MPI. The tests run two ranks on this machine.
packages+=(libopenmpi-dev openmpi-bin)
# The tests also render the HTML report in headless Chromium (tests/report_screenshot.sh) and check the
# generated wgmma wrappers with scripts/gen_wgmma_ops.py (Python 3).
[[ ${1:-} == test ]] && packages+=(chromium file python3)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -f $cuda/include/nvrtc.h || ! -f $cuda/include/cuda.h ]]; then
  echo "setup: the CUDA toolkit was not found under '$cuda' (need include/nvrtc.h and include/cuda.h)." >&2
  echo "       Install the CUDA toolkit (12.x or 13.x) there, or set CUDA_HOME to its location." >&2
  exit 1
fi

build=build
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTUNEFUZZ_MPI=ON -DCUDAToolkit_ROOT="$cuda" >/dev/null
fi
cmake --build "$build" -j"$(nproc)"

case "${1:-}" in
  test)
    status=0
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)" || status=$?
    # CTest only says "Skipped"; show why.
    grep -h "^SKIPPED:" "$build/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u | sed 's/^/setup: /' || true
    # The readers of user files (configs, tables, reproducers, journals) again, under ASan and UBSan, and the
    # hostile-input harness (10,000 generated inputs through tune's and fuzz's command lines in-process).
    sanitize=build-sanitize
    [[ -f $sanitize/CMakeCache.txt ]] ||
      cmake -S . -B "$sanitize" -DCMAKE_BUILD_TYPE=Debug -DTUNEFUZZ_SANITIZE=ON -DCUDAToolkit_ROOT="$cuda" >/dev/null
    sanitized=(test_config test_tables test_journal test_oracle test_hostile test_runtime)
    cmake --build "$sanitize" -j"$(nproc)" --target "${sanitized[@]}" >/dev/null
    for t in "${sanitized[@]}"; do
      ASAN_OPTIONS=detect_leaks=1 "$sanitize/bin/$t" --gtest_brief=1 > "$sanitize/$t.log" 2>&1 ||
        { status=1; echo "setup: $t failed under the sanitizers:"; tail -40 "$sanitize/$t.log"; }
    done
    grep -h "^hostile inputs:" "$sanitize/test_hostile.log" | sed 's/^/setup: under the sanitizers, /' || true
    ((status)) || echo "setup: readers' tests passed under AddressSanitizer and UndefinedBehaviorSanitizer"
    exit $status
    ;;
  run)
    shift
    exec "$build/bin/tune" run "$@"
    ;;
  "") ;;
  *)
    echo "usage: ./setup.sh [test | run [CONFIG] [tune run options]]" >&2
    exit 2
    ;;
esac
