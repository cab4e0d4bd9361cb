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

# The second pass (docs/reliability.md, "Second pass"): every absurd input of the probe that
# panicked, exited 1, answered wrongly or ran superlinearly, at the size it was found at.
A=tests/fixtures/import/valid
python3 - "$tmp" <<'PY'
import sys, os
t = sys.argv[1]
cl = open('tests/fixtures/valid/tiny-cluster.toml').read()
head = 'kind = "preemption"\n[[workload]]\nname = "b"\npriority = 1\ngpus = 1\ncores = 1\n'
open(f'{t}/line-70kb.toml', 'w').write('kind = "cluster"\nname = "' + 'a' * 70000 + '" junk\n')
open(f'{t}/value-70kb.toml', 'w').write(cl.replace('gpu_numa = [0, 1, 2, 3]', 'gpu_numa = [' + ' ' * 70000 + '0, 1, 2, 9]'))
open(f'{t}/row-70kb.csv', 'w').write('TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,' + '1' * 70000 + ',x\n')
open(f'{t}/one-line.json', 'w').write('{"kind":"List","items":[' + '{"kind":"Node","metadata":{"name":"n"}},' * 3000 + '{"kind":"Node"}')
for n in (4000, 20000):
    open(f'{t}/errors-{n}.toml', 'w').write(head + ''.join(f'[[running]]\nworkload = "nope{i}"\nnode = "tiny-0"\n' for i in range(n)))
open(f'{t}/repeated-ids.toml', 'w').write(head + '[[running]]\nworkload = "b"\nnode = "tiny-0"\ncores = [' + '0, ' * 8000 + '0]\n')
with open(f'{t}/nodes-100001.csv', 'w') as f:
    f.write('sn,cpu_milli,memory_mib,gpu,model\n')
    for i in range(100001):
        f.write(f'node-{i},96000,786432,8,G2\n')
co = open('examples/workloads/colocation-small.toml').read()
open(f'{t}/rate-1e5.toml', 'w').write(co.replace('rate_rps = 12', 'rate_rps = 1e5'))
PY
check "TOML line of 70 KB, error at its end" validate "$tmp/line-70kb.toml"
check "value at column 70,000" validate "$tmp/value-70kb.toml"
check "trace row of 70 KB" import azure-llm "$tmp/row-70kb.csv" --out "$tmp/w.toml"
check "one-line export, error at byte 120,000" import k8s "$tmp/one-line.json" --out-cluster "$tmp/c.toml" --out-workload "$tmp/w.toml"
check "4,000 errors (200 KB)" validate $V/tiny-cluster.toml "$tmp/errors-4000.toml"
check "20,000 errors (1 MB)" validate $V/tiny-cluster.toml "$tmp/errors-20000.toml"
check "8,000 repeated core ids (24 KB)" validate $V/tiny-cluster.toml "$tmp/repeated-ids.toml"
check "penalty 9e307" plan $I/penalty-above-limit.toml $V/tiny-running.toml
check "eta = 1e-30, decode = 0" plan examples/clusters/a100-x16.toml $I/coloc-slo-too-short.toml
check "alibaba --at 1e30" import alibaba-openb $A/alibaba-nodes.csv $A/alibaba-pods.csv --at 1e30 --out-cluster "$tmp/c.toml" --out-workload "$tmp/w.toml"
check "alibaba --at 2^64 − 1" import alibaba-openb $A/alibaba-nodes.csv $A/alibaba-pods.csv --at 18446744073709551615 --out-cluster "$tmp/c.toml" --out-workload "$tmp/w.toml"
check "alibaba 100,001 nodes" import alibaba-openb "$tmp/nodes-100001.csv" $A/alibaba-pods.csv --out-cluster "$tmp/c.toml" --out-workload "$tmp/w.toml"
check "alibaba one path for both outputs" import alibaba-openb $A/alibaba-nodes.csv $A/alibaba-pods.csv --out-cluster "$tmp/same.toml" --out-workload "$tmp/same.toml"
for cmd in "import azure-llm /dev/zero --out $tmp/w.toml" "profile fit /dev/zero" "merge /dev/zero" "diff /dev/zero /dev/zero" \
  "import alibaba-openb /dev/zero /dev/zero --out-cluster $tmp/c.toml --out-workload $tmp/w.toml" \
  "import k8s /dev/zero --out-cluster $tmp/c.toml --out-workload $tmp/w.toml"; do
  # shellcheck disable=SC2086
  check "/dev/zero: ${cmd%% /dev/zero*}" $cmd
done
check "not UTF-8" validate $I/not-utf8.data
check "2026-02-30 in a trace" import azure-llm $I/azure-feb-30.csv --out "$tmp/w.toml"
check "run = []" plan examples/clusters/gpu-2s4n8g-x4.toml $I/planners-run-empty.toml
check "--planners ilp,ilp" plan $V/tiny-cluster.toml $V/tiny-running.toml --planners k8s-default,k8s-default
check "memory_threshold = 0" validate $I/coloc-memory-threshold-zero.toml
check "missing trace file" plan examples/clusters/a100-x16.toml $I/coloc-trace-missing.toml
check "sockets = 100" validate $I/sockets-above-limit.toml
check "unknown arrival.process" validate $I/coloc-arrival-process-unknown.toml
check "co-location capacity at rate_rps = 1e5" capacity examples/clusters/a100-x16.toml "$tmp/rate-1e5.toml" --planners separate,lemix
check "co-location capacity of a trace workload" capacity examples/clusters/a100-x16.toml $V/coloc-trace.toml
# A 50 MB shard: valid (34 scenarios × 1,000 seeds of a real sweep), and the same size of one
# small shard's rows repeated (refused as duplicates at its first copy).
alphas=$(seq -s, 0 0.03 0.99)
"$bin" sweep $V/tiny-cluster.toml $V/sim-small.toml --set "flextopo.alpha=$alphas" --seeds 1000 --cycles 1 \
  --planners k8s-default,k8s-nrt,flextopo-imp --format csv --out "$tmp/shard-50mb.csv" 2>/dev/null
"$bin" sweep $V/tiny-cluster.toml $V/sim-small.toml --set flextopo.alpha=0 --seeds 2 --cycles 1 \
  --format csv --out "$tmp/small.csv" 2>/dev/null
python3 - "$tmp" <<'PY'
import sys
t = sys.argv[1]
lines = open(f'{t}/small.csv').read().splitlines(keepends=True)
head, rows = lines[:2], lines[2:]
with open(f'{t}/dup-50mb.csv', 'w') as f:
    f.writelines(head)
    size = 0
    while size < 50 << 20:
        f.writelines(rows)
        size += sum(len(r) for r in rows)
PY
check "merge of a valid $(du -m "$tmp/shard-50mb.csv" | cut -f1) MB shard" merge "$tmp/shard-50mb.csv" --format csv --out "$tmp/merged.csv"
check "merge of a 50 MB shard of repeated rows" merge "$tmp/dup-50mb.csv" --format csv --out "$tmp/merged.csv"
check "diff --fail-on-regression ''" diff tests/fixtures/diff/base.json tests/fixtures/diff/base.json --fail-on-regression ''
check "diff of values at ±1e308" diff tests/fixtures/diff/base.json tests/fixtures/diff/huge.json
check "profile fit of constant samples" profile fit $I/samples-constant.csv
check "profile fit of declining samples" profile fit $I/samples-declining.csv
