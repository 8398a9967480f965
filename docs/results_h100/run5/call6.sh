#!/usr/bin/env bash
# one device call (2 x H100): the reference's GEMM on the system's CUDA 13.0 cuBLAS (LD_PRELOAD) beside its own
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
ls -la /usr/local/cuda/lib64/libcublas.so* /usr/local/cuda/lib64/libcublasLt.so* 2>&1 | head -6
python3 -c 'import nvidia.cublas, os; d=os.path.join(list(nvidia.cublas.__path__)[0], "lib"); print(d, os.listdir(d))' 2>&1
SYS="/usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda/lib64/libcublas.so.13"
for r in 1 2; do
  timeout 120 torchrun --nproc_per_node=2 tools/workload_reference.py --workloads mm-ag --out $R/own_$r.json > $R/own_$r.log 2>&1; echo "own $r rc=$?"
  LD_PRELOAD="$SYS" timeout 120 torchrun --nproc_per_node=2 tools/workload_reference.py --workloads mm-ag --out $R/sys_$r.json > $R/sys_$r.log 2>&1; echo "sys $r rc=$?"
done
for pre in "" "$SYS"; do LD_PRELOAD="$pre" python3 -c 'import torch; a = torch.randn(64, 64, device="cuda", dtype=torch.float16); a @ a; torch.cuda.synchronize(); print("cublas mapped:", sorted({l.split()[-1] for l in open("/proc/self/maps") if "cublas" in l}))' 2>&1 | tail -1; done
for f in $R/*.log; do echo "== $f"; grep '^\[ref\]' $f | cut -c1-700; grep -E 'Error|error' $f | head -3; done
tar czf $OUT/all.tgz -C $OUT r && rm -rf $R
