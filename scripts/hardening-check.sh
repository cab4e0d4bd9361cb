#!/usr/bin/env bash
# Runs every input of the hardening findings (docs/reliability.md) with the release binary and
# prints, per input, the exit code, the wall time and the peak memory: the goal is an answer
# (refused or bounded) in ≤ 2 s and ≤ 200 MB. Generated inputs go to a temporary folder.
#
#   scripts/hardening-check.sh            # after `cargo build --release`
set -u
cd "$(dirname "$0")/.."
bin=target/release/coplan
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
V=tests/fixtures/valid
I=tests/fixtures/invalid
printf '| input | exit | wall s | max RSS MB |\n|---|---|---|---|\n'
check() { # label, args...
  local label=$1; shift
  local out
  out=$( { /usr/bin/time -f "%e %M" "$bin" "$@" >/dev/null 2>"$tmp/err"; } 2>&1 )
  local code
  code=$(grep -oE "^Command exited with non-zero status [0-9]+" "$tmp/err" | grep -oE "[0-9]+$" || true)
  local tail
  tail=$(tail -1 "$tmp/err")
  read -r wall rss <<<"$tail"
  printf '| %s | %s | %s | %.0f |\n' "$label" "${code:-0}" "$wall" "$(echo "$rss / 1024" | bc -l)"
}
pool() { printf 'kind = "cluster"\n[[pool]]\nserver_type = "a100-8g"\ncount = %s\nname_prefix = "n-"\n' "$1" > "$tmp/pool-$1.toml"; echo "$tmp/pool-$1.toml"; }
check "pool count 2^63 − 1" validate "$(pool 9223372036854775807)"
check "1e9 servers" validate "$(pool 1000000000)"
check "1e7 servers" validate "$(pool 10000000)"
check "ilp_time_limit_s = 1e19" validate $I/ilp-time-limit-above-limit.toml
check "weights 1e308" plan $V/tiny-cluster.toml $I/objective-weight-above-limit.toml
check "simulate --seeds 2^64 − 1" simulate $V/tiny-cluster.toml $V/sim-small.toml --seeds 18446744073709551615
check "simulate --seeds 2^32 − 1" simulate $V/tiny-cluster.toml $V/sim-small.toml --seeds 4294967295
check "simulate --seeds 1e9" simulate $V/tiny-cluster.toml $V/sim-small.toml --seeds 1000000000
check "simulate --seeds 0" simulate $V/tiny-cluster.toml $V/sim-small.toml --seeds 0
check "simulate --cycles 0" simulate $V/tiny-cluster.toml $V/sim-small.toml --cycles 0
check "seeds = [-1, 2]" validate $I/seeds-negative.toml
check "eta_forward = 1e300" plan examples/clusters/a100-x16.toml $I/coloc-eta-forward-huge.toml
check "batch_size = 1e8" plan examples/clusters/a100-x16.toml $I/coloc-batch-size-above-limit.toml
check "4e9-token prompt (spec)" plan examples/clusters/a100-x16.toml $I/coloc-prompt-tokens-above-limit.toml
check "4e9-token prompt (trace)" plan examples/clusters/a100-x16.toml $I/coloc-trace-tokens-above-limit.toml
check "4e9-token prompt (import)" import azure-llm $I/trace-huge-prompt.csv --out "$tmp/w.toml"
check "inference count 1e8" plan examples/clusters/a100-x16.toml $I/coloc-count-above-limit.toml
check "1e9 preemptors" plan $V/tiny-cluster.toml $I/preemptors-above-limit.toml
python3 - "$tmp/pods.toml" <<'PY'
import sys
with open(sys.argv[1], 'w') as f:
    f.write('kind = "preemption"\n[[workload]]\nname = "b"\npriority = 1\ngpus = 1\ncores = 1\n')
    for i in range(1_000_000):
        f.write(f'[[running]]\nworkload = "b"\nnode = "r4090-{i % 6000:04d}"\n')
PY
check "1e6 running pods (48 MB file)" plan examples/clusters/mixed-10k.toml "$tmp/pods.toml"
check "spec from /dev/zero" validate /dev/zero
set_values() { seq -s, 1 "$1"; }
check "sweep of 1e9 scenarios" sweep $V/tiny-cluster.toml $V/sim-small.toml \
  --set "fill.seed=$(set_values 1000)" --set "fill.churn_rounds=$(set_values 1000)" --set "objective.topology=$(set_values 1000)"
check "empty trace" plan examples/clusters/a100-x16.toml $I/coloc-empty-trace.toml
check "profile fit stage_s = 1e300" profile fit $I/samples-huge-stage.csv
check "vidur num_tokens = 0" import vidur-profile $I/vidur-zero-tokens.csv --layers-per-stage 16 --out "$tmp/s.csv"
check "churn_rounds above limit" plan $V/tiny-cluster.toml $I/churn-rounds-above-limit.toml
for case in $I/merge-*.case; do
  args=$(grep -m1 '^# coplan: ' "$case" | sed 's/^# coplan: //')
  # shellcheck disable=SC2086
  check "$(basename "$case" .case)" $args
done
# Bounded rather than refused: the paths that were superlinear, at the sizes they were found at.
check "ilp_window = 13" plan examples/clusters/a100-x16.toml $I/ilp-window-above-limit.toml
check "topology --format json, mixed-10k" topology examples/clusters/mixed-10k.toml --format json
check "plan, 20 000 servers (fill, 3 planners, verify)" plan benches/inputs/mixed-20k.toml benches/inputs/paper-preemption-unpinned.toml --format json
sed 's/^churn_rounds = 3$/churn_rounds = 1000/' examples/workloads/paper-preemption.toml > "$tmp/churn-1000.toml"
check "churn_rounds = 1000 (the limit), paper cluster" plan examples/clusters/paper-4090-x100.toml "$tmp/churn-1000.toml" --planners k8s-default
