#!/usr/bin/env bash
# A coplan sweep split over a Slurm job array: task t runs shard t − min of the array's count
# (coplan reads SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT).
#
#   sbatch examples/scale-out/slurm-array.sh
#   # when every task is done:
#   coplan merge results/shard-*.csv --format table
#
#SBATCH --job-name=coplan-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=1G
#SBATCH --time=06:00:00
#SBATCH --output=results/slurm-%A_%a.log
set -euo pipefail
mkdir -p results
coplan sweep \
  examples/clusters/paper-4090-x100.toml \
  examples/workloads/paper-preemption.toml \
  --set flextopo.alpha=0,0.25,0.5,0.75,1 \
  --set fill.target_gpu_utilization=0.7,0.85,1.0 \
  --planners k8s-default,flextopo-imp,flextopo-exhaustive \
  --seeds 10 --cycles 100 \
  --format csv \
  --out "results/shard-${SLURM_ARRAY_TASK_ID}.csv"
