#!/usr/bin/env bash
# Runs kiln's libFuzzer targets (fuzz/) for a bounded time each, with ASan and UBSan.
#   scripts/fuzz.sh                      every target, 60 s each
#   scripts/fuzz.sh 300 json_rpc         one target, 5 minutes
#   scripts/fuzz.sh --merge 60           also add new interesting inputs to fuzz/corpus/
# Builds in ./build-fuzz with clang and KILN_FUZZ=ON (installs clang when missing). Each target
# runs on a copy of its seed corpus in build-fuzz/fuzz-work/NAME/corpus, so what it finds stays
# out of the repository unless --merge is given; then only inputs that add coverage are merged.
# A crash is saved as build-fuzz/fuzz-work/NAME/crash-* (libFuzzer's reproducer: run the
# target on that file), and the script exits non-zero. KILN_JOBS sets the build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(json_rpc http_request task_json ptx_parser synccheck job_request)
merge=0
seconds=60
targets=()
for arg in "$@"; do
  case "$arg" in
    --merge) merge=1 ;;
    -h | --help)
      sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
      echo "targets: ${all_targets[*]}"
      exit 0
      ;;
    *[!0-9]*) targets+=("$arg") ;;
    *) seconds=$arg ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  if [[ " ${all_targets[*]} " != *" $t "* ]]; then
    echo "kiln: no fuzz target '$t'; the targets are: ${all_targets[*]}" >&2
    exit 2
  fi
done

if ! command -v clang++ >/dev/null; then
  echo "kiln: installing clang (libFuzzer)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq clang
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  -DCMAKE_C_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKILN_FUZZ=ON -DKILN_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
ninja -C build-fuzz -j "${KILN_JOBS:-$(nproc)}" "${targets[@]/#/kiln_fuzz_}"

work=build-fuzz/fuzz-work
files() { find "$1" -maxdepth 1 -type f | wc -l; }
crashed=()
summary=()
for t in "${targets[@]}"; do
  dir=$work/$t
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  cp fuzz/corpus/"$t"/* "$dir/corpus/"
  echo "kiln: fuzzing $t for ${seconds}s"
  status=0
  start=$SECONDS
  dict=fuzz/json.dict
  [[ $t == ptx_parser || $t == synccheck ]] && dict=fuzz/ptx.dict
  # -timeout: one input running 10 s is a hang; -rss_limit_mb: one using 2 GB is a leak.
  build-fuzz/bin/kiln_fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -dict="$dict" -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" >"$dir/log" 2>&1 ||
    status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  line="$t: ${runs:-?} executions in $((SECONDS - start))s,"
  line+=" corpus $(files fuzz/corpus/"$t") -> $(files "$dir/corpus")"
  if ((status != 0)); then
    reproducers=$(ls "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* 2>/dev/null || true)
    line+=", FAILED (exit $status): ${reproducers:-see $dir/log}"
    crashed+=("$t")
    grep -m 3 -E '^(==[0-9]+==ERROR|SUMMARY|kiln fuzz: property)' "$dir/log" >&2 || true
  elif ((merge)); then
    build-fuzz/bin/kiln_fuzz_"$t" -merge=1 fuzz/corpus/"$t" "$dir/corpus" >"$dir/merge.log" 2>&1
    line+=", merged: fuzz/corpus/$t now $(files fuzz/corpus/"$t") files"
  fi
  summary+=("$line")
done

echo
echo "kiln fuzz summary (logs in $work/NAME/log):"
printf '  %s\n' "${summary[@]}"
if ((${#crashed[@]})); then
  echo "kiln: ${crashed[*]} crashed; reproduce with build-fuzz/bin/kiln_fuzz_NAME FILE, fix the" \
    "code, and add FILE to fuzz/corpus/NAME/ so the replay test guards it" >&2
  exit 1
fi
