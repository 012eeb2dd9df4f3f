#!/usr/bin/env bash
# Campaign throughput against ONNX Runtime, end to end (generate, reference,
# run both ORT configurations, compare), for 10-node graphs on one core:
# persistent workers on several seeds (a few heavy cases dominate any one
# seed's figure), and a process per case on the first seed, side by side.
# The campaign column runs with --no-reduce (generate, reference, run,
# compare); the last column is the default campaign, which also reduces each
# new signature to a bundle (a cost per signature, not per case).
#   benchmarks/campaign_throughput.sh [TENSORACLE_EXE] [COUNT] [SEED...]
set -euo pipefail
exe="${1:-build/release/cli/tensoracle}"
count="${2:-200}"
shift $(( $# > 2 ? 2 : $# ))
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(77 78 79 80)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The campaign's own configuration against ORT (the default without bfloat16, which
# onnxruntime-node cannot pass), so that "generation alone" makes the same cases.
echo '{"dtypes": ["f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool"]}' >"$tmp/config.json"
seconds() {  # runs a command, prints its wall seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
campaign() {  # seed, folder, extra options
  seconds "$exe" campaign --quiet --backend onnxruntime --backend onnxruntime-noopt --count "$count" --seed "$1" \
    --jobs 1 --out "$tmp/$2" "${@:3}"
}
echo "cases/s on one core, $count 10-node cases per seed, 2 ORT configurations per case:"
echo "  seed   generation alone   campaign (persistent workers)   campaign + reductions (default)"
gen_total=0
camp_total=0
red_total=0
for s in "${seeds[@]}"; do
  g=$(seconds "$exe" gen --quiet --count "$count" --seed "$s" --config "$tmp/config.json" --out "$tmp/gen$s")
  w=$(campaign "$s" "worker$s" --no-reduce)
  r=$(campaign "$s" "reduce$s")
  gen_total=$(python3 -c "print($gen_total + $g)")
  camp_total=$(python3 -c "print($camp_total + $w)")
  red_total=$(python3 -c "print($red_total + $r)")
  python3 -c "print(f'  {$s:<6} {$count / $g:>16.2f}   {$count / $w:>29.2f}   {$count / $r:>31.2f}')"
done
n=${#seeds[@]}
python3 -c "print(f'  all    {$n * $count / $gen_total:>16.2f}   {$n * $count / $camp_total:>29.2f}   {$n * $count / $red_total:>31.2f}')"
w=$(campaign "${seeds[0]}" "worker-again" --no-reduce)
p=$(campaign "${seeds[0]}" "per-case" --no-reduce --process-per-case)
python3 -c "print(f'seed ${seeds[0]}: persistent workers {$count / $w:.2f} cases/s, a process per case {$count / $p:.2f}: {$p / $w:.2f}x')"
