#!/usr/bin/env bash
# one device call (2 x H100): both programs' GPU timelines captured, to compare the GEMM phases
cd "$(dirname "$0")/../.."
W=$PWD/.carry/workloads
export LD_LIBRARY_PATH=$W:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OVERLAPSCOPE_INJECT_LIB=$W/libovscope_inject.so OVERLAPSCOPE_NCCL_PLUGIN=$W/libnccl-profiler-overlapscope.so
R=$OUT/r; mkdir -p $R
timeout 120 $W/overlapscope run matmul-allgather --mode all -o $R/ours > $R/ours.log 2>&1; echo "ours rc=$?"
timeout 200 $W/overlapscope profile -o $R/ref -- python3 -m torch.distributed.run --nproc_per_node=2 tools/workload_reference.py --workloads mm-ag --iters 10 --warmup 3 > $R/ref.log 2>&1; echo "ref rc=$?"
grep -E 'GEMM alone|Sequential  |SM clock' $R/ours.log; grep '^\[ref\]' $R/ref.log | cut -c1-400; ls $R/ours $R/ref
rm -f $R/ours/*/trace.pftrace $R/ref/*.pftrace
tar czf $OUT/all.tgz -C $OUT r && rm -rf $R; ls -la $OUT
