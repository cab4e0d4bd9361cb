#!/usr/bin/env bash
# The fuzz bench: every target of `fuzz/` (or those named) for RUNS inputs each (default 10^6),
# seed SEED (default 1); prints each target's summary (executions, exec/s, findings, slowest
# execution, peak RSS) and exits 1 when any target found something. docs/reliability.md,
# "Fuzzing", has the figures of the last campaign.
#
#   scripts/fuzz-campaign.sh                                  # every target, 10^6 each
#   RUNS=20000 scripts/fuzz-campaign.sh merge import-k8s      # a short campaign of two
set -u
cd "$(dirname "$0")/../fuzz"
RUNS=${RUNS:-1000000}
SEED=${SEED:-1}
cargo build --release --quiet || exit 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(./target/release/coplan-fuzz list | cut -d' ' -f1)
fi
found=0
for t in "${targets[@]}"; do
  ./target/release/coplan-fuzz run "$t" --runs "$RUNS" --seed "$SEED" > "/tmp/fuzz-$t.log" 2>&1 || found=1
  grep -E "^(target|executions|exec/s|wall|findings|slowest|peak RSS)" "/tmp/fuzz-$t.log" | tr -s ' ' | paste -sd' '
done
exit $found
