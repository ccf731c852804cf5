#!/usr/bin/env bash
# Arena-Hard v2.0 answered and judged in 8 parts as a Slurm job array, then joined into one run.
#   sbatch examples/slurm-array.sh
# Each array task runs one part into runs/arena-hard-v2.0/shards/<I>-of-8 (on a shared filesystem or a
# node's own disk: copy the shard directories together before the merge). A task that dies is resubmitted
# with `sbatch --array=<I> examples/slurm-array.sh`: its directory resumes, nothing done is sent again.
#SBATCH --job-name=jurist-arena
#SBATCH --array=0-7
#SBATCH --gpus=1
#SBATCH --time=04:00:00
#SBATCH --output=logs/jurist-%A_%a.out
set -euo pipefail
BENCH="${BENCH:-arena-hard-v2.0}"
MODEL="${MODEL:-/checkpoints/step-400}"   # a checkpoint folder: jurist serves it with vLLM on this node's GPU
JUDGE="${JUDGE:-openai/gpt-4.1}"          # a hosted judge (OPENAI_API_KEY from the environment)
read -r -a EXTRA <<< "${JURIST_ARGS:-}"   # more jurist run options (a models file, --out …)

# --shards 8 takes this task's index from SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN) and checks
# SLURM_ARRAY_TASK_COUNT; the first line of the log says which part this is.
jurist run --bench "$BENCH" --model "$MODEL" --judge "$JUDGE" --shards "${SLURM_ARRAY_TASK_COUNT:-8}" \
  --no-progress "${EXTRA[@]}"

# The last task to finish joins the parts (a merge is repeatable: run it again as late tasks finish).
# Or submit it as its own job: sbatch --dependency=afterok:$SLURM_ARRAY_JOB_ID --wrap "jurist merge …"
if [ "${SLURM_ARRAY_TASK_ID}" = "${SLURM_ARRAY_TASK_MAX:-7}" ]; then
  jurist merge runs/"$(basename "$BENCH" .jsonl)"/shards/* --out runs/"$(basename "$BENCH" .jsonl)"/merged || true
fi
