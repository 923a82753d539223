#!/usr/bin/env bash
# Device call B (2026-12-03, twelfth session): call A's zoo numbers again (its zoo_results.jsonl
# did not come back: too many files under $OUT), rmsnorm's task check under the stability rule
# rewritten after its last H200 run, and Slurm with the cgroup v2 hierarchy prepared
# for slurmd (scripts/slurm_test_cluster.sh, prepare_cgroup_v2). At most 8 files come back.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
echo "== zoo entries awaiting the H200"; t0=$(date +%s)
KILN=none timeout 120 bench/zoo_new_entries_h200.sh .gpu/zb /tmp/zoo > /tmp/zoo.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "timing|FAIL|measured" /tmp/zoo.txt | cut -c1-250
cp /tmp/zoo/zoo_results.jsonl /tmp/zoo/zoo_gpu_test.log $OUT/
echo "== rmsnorm task check"; t0=$(date +%s)
timeout 200 kiln task check rmsnorm --require-gpu --repeats 2 --work-dir /tmp/tc --report-dir /tmp/tcr > $OUT/task_check_rmsnorm.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^  (passed|FAILED|FLAGGED|not run)|PASSED|total|CV" $OUT/task_check_rmsnorm.txt | cut -c1-200
echo "== slurm"; t0=$(date +%s)
KILN_SLURM_GPU_SECONDS=200 timeout 220 bash bench/slurm_gpu.sh .gpu/slurm /tmp/slurm_out > $OUT/slurm_gpu.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; tail -25 $OUT/slurm_gpu.txt
for f in summary.txt benchmark.txt slurm_job.txt slurmd.log; do cp /tmp/slurm_out/$f $OUT/slurm_$f 2>/dev/null; done
ls /sys/fs/cgroup | head -30; cat /sys/fs/cgroup/cgroup.subtree_control
exit 0
