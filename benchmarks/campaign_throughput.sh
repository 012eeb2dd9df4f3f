#!/usr/bin/env bash
# Campaign throughput against ONNX Runtime, end to end (generate, reference,
# run both ORT configurations, compare), for 10-node graphs on one core:
# persistent workers vs a process per case, side by side in one run.
#   benchmarks/campaign_throughput.sh [TENSORACLE_EXE] [COUNT]
set -euo pipefail
exe="${1:-build/release/cli/tensoracle}"
count="${2:-200}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
rate() {  # prints cases/s of one campaign
  local start end
  start=$(date +%s.%N)
  "$exe" campaign --quiet --backend onnxruntime --backend onnxruntime-noopt --count "$count" --seed 77 \
    --jobs 1 --out "$tmp/$1" "${@:2}" >/dev/null
  end=$(date +%s.%N)
  python3 -c "print(f'{$count / ($end - $start):.2f}')"
}
gen_rate() {
  local start end
  start=$(date +%s.%N)
  "$exe" gen --quiet --count "$count" --seed 77 --out "$tmp/gen" >/dev/null
  end=$(date +%s.%N)
  python3 -c "print(f'{$count / ($end - $start):.2f}')"
}
g=$(gen_rate)
w=$(rate worker)
p=$(rate per-case --process-per-case)
echo "cases/s on one core, $count 10-node cases, 2 ORT configurations per case:"
echo "  generation alone (gen + input search + reference):  $g"
echo "  campaign, persistent workers:                      $w"
echo "  campaign, a process per case:                      $p"
python3 -c "print(f'  worker / process-per-case: {$w / $p:.2f}x')"
