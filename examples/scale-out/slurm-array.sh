#!/usr/bin/env bash
# A coplan sweep split over a Slurm job array: task t runs shard t − min of the array's count
# (coplan reads SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT).
#
#   mkdir -p results   # Slurm opens the logs below before the script runs
#   sbatch examples/scale-out/slurm-array.sh
#   # when every task is done:
#   coplan merge results/shard-*.csv --format table
#
# By default it runs the `coplan` on PATH from a checkout of this repository (the specs are its
# examples/). To run the image built from the repository's Dockerfile instead, which carries
# the same specs under /opt/coplan/examples, name the command and the specs at submission
# (sbatch passes the environment on; results/ stays in the submission directory):
#
#   # Apptainer / Singularity: converted once (`apptainer exec docker://REGISTRY/coplan:TAG`
#   # works too, but every task converts it and needs the registry); the current directory is
#   # mounted and is the working directory
#   apptainer pull coplan.sif docker://REGISTRY/coplan:TAG
#   COPLAN="apptainer exec coplan.sif coplan" \
#     COPLAN_SPECS=/opt/coplan/examples sbatch examples/scale-out/slurm-array.sh
#
#   # Pyxis / Enroot (the registry is separated by `#`)
#   COPLAN="srun --container-image=REGISTRY#coplan:TAG --container-mounts=$PWD:$PWD --container-workdir=$PWD coplan" \
#     COPLAN_SPECS=/opt/coplan/examples sbatch examples/scale-out/slurm-array.sh
#
#SBATCH --job-name=coplan-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=1G
#SBATCH --time=06:00:00
#SBATCH --output=results/slurm-%A_%a.log
set -euo pipefail
read -r -a coplan <<<"${COPLAN:-coplan}"
specs="${COPLAN_SPECS:-examples}"
mkdir -p results
"${coplan[@]}" sweep \
  "$specs/clusters/paper-4090-x100.toml" \
  "$specs/workloads/paper-preemption.toml" \
  --set flextopo.alpha=0,0.25,0.5,0.75,1 \
  --set fill.target_gpu_utilization=0.7,0.85,1.0 \
  --planners k8s-default,flextopo-imp,flextopo-exhaustive \
  --seeds 10 --cycles 100 \
  --format csv \
  --out "results/shard-${SLURM_ARRAY_TASK_ID}.csv"
