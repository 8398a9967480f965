"""Two-rank PyTorch program for `overlapscope profile -- torchrun ...` checks.

Each rank runs a matmul with an async all-gather on NCCL's stream (no data dependency), 10 times,
then checks the gathered data. Run with NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
NVSHMEM_DISABLE_NVLS=1 on multi-GPU machines.
"""
import os

import torch
import torch.distributed as dist


def main():
    for var in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
        if var not in os.environ:
            raise SystemExit(f"set {var} (NVLink multicast must stay off on shared machines)")
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    shard = torch.full((8 << 20,), float(rank + 1), device="cuda", dtype=torch.float16)
    out = torch.empty(world * shard.numel(), device="cuda", dtype=torch.float16)
    for _ in range(10):
        work = dist.all_gather_into_tensor(out, shard, async_op=True)
        c = a @ a
        work.wait()
    torch.cuda.synchronize()
    expect = torch.cat([torch.full_like(shard, float(r + 1)) for r in range(world)])
    ok = bool(torch.equal(out, expect)) and bool(torch.isfinite(c).all())
    print(f"rank {rank}: all-gather {'valid' if ok else 'WRONG'}", flush=True)
    dist.destroy_process_group()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
