#!/usr/bin/env bash
# A tensoracle campaign as a Slurm job array: each array task runs one shard
# (tensoracle reads SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and
# SLURM_ARRAY_TASK_COUNT) into camp/shard-<i>-of-<N>/; a job that depends on the
# array merges the shards into camp/merged/ (summary.json, report.html).
#
#   sbatch --array=0-15 examples/cluster/slurm_campaign.sh
#   sbatch --dependency=afterok:<array job id> --wrap 'tensoracle report camp/shard-*-of-16 --out camp/merged'
#
# Cases are pure functions of (seed, index, config): shards need no coordinator,
# and a shard that is run again resumes where it stopped.
#SBATCH --job-name=tensoracle-campaign
#SBATCH --cpus-per-task=2
#SBATCH --time=02:00:00
#SBATCH --output=camp/slurm-%A_%a.log
set -euo pipefail
mkdir -p camp
exec tensoracle campaign --backend onnxruntime --backend onnxruntime-noopt --mutants 1 \
  --count "${CASES:-20000}" --seed "${SEED:-2026}" --jobs "${SLURM_CPUS_PER_TASK:-1}" --out camp --quiet
