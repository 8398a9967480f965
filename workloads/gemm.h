// One cuBLAS GEMM with self-checking data: C (m x n) = A (m x k) * B (k x n), column-major,
// cublasGemmEx with inputs/outputs in `dtype` and FP32 accumulation (CUBLAS_COMPUTE_32F).
// Data (GemmShape::data): random normal inputs (default, gemm_data.h; Validate() checks every
// element is finite and kGemmValidateSamples sampled elements against an FP64 reference within
// a tolerance derived from k and the dtype), or the structured closed form of kernels.h
// (Validate() checks every element of C exactly).
//
// Failure modes: Create() fails when memory runs out or a dimension does not fit cuBLAS's int;
// Validate() returns DataLoss naming how many elements were wrong and the first one.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "workloads/device_memory.h"
#include "workloads/gemm_data.h"
#include "workloads/kernels.h"
#include "workloads/rank_group.h"

namespace overlapscope::workloads {

struct GemmShape {
  int64_t m = 8192, n = 8192, k = 8192;
  DType dtype = DType::kF16;
  GemmData data = GemmData::kRandom;
  double flops() const { return 2.0 * static_cast<double>(m) * n * k; }
};

absl::StatusOr<DType> ParseDType(const std::string& s);  // fp16 | bf16 | fp32
const char* DTypeName(DType t);
absl::StatusOr<GemmData> ParseGemmData(const std::string& s);  // random | structured
const char* GemmDataName(GemmData d);
// "A, B ~ N(0,1) (as torch.randn), rounded to fp16" or the structured data's description.
std::string GemmDataDescription(const GemmShape& shape);

class Gemm {
 public:
  // Allocates and fills A (seed_a) and B (seed_b) on ctx's device, on ctx.compute.
  static absl::StatusOr<Gemm> Create(RankContext& ctx, const GemmShape& shape, uint32_t seed_a, uint32_t seed_b);
  // Enqueues C = A * B on ctx.compute (the stream of ctx.blas).
  absl::Status Enqueue(RankContext& ctx);
  // Enqueues C = A * B writing into `c` instead of the own C (same shape and dtype).
  absl::Status EnqueueInto(RankContext& ctx, void* c);
  // Zeroes C on ctx.compute (so a later Validate proves a GEMM wrote it).
  absl::Status ClearOutput(RankContext& ctx);
  // Checks C (or `c`) on the device (see the header comment); synchronizes ctx.compute.
  absl::Status Validate(RankContext& ctx, const std::string& what, const void* c = nullptr);
  // Random data: the salt that picks the sampled positions (GemmSampleIndex), for tests.
  uint32_t sample_salt() const { return seed_a_ * 7919u + seed_b_; }
  uint32_t seed_a() const { return seed_a_; }
  uint32_t seed_b() const { return seed_b_; }
  const GemmShape& shape() const { return shape_; }
  const void* output() const { return c_.get(); }
  size_t c_bytes() const { return static_cast<size_t>(shape_.m * shape_.n) * DTypeBytes(shape_.dtype); }

 private:
  GemmShape shape_;
  uint32_t seed_a_ = 0, seed_b_ = 0;
  int e_ = 0;
  DeviceBuffer a_, b_, c_;
  DeviceChecker check_;
};

// Runs the GEMM back to back on ctx.compute for at least `ms` milliseconds (host clock).
absl::Status BurnIn(RankContext& ctx, Gemm& gemm, int ms);

}  // namespace overlapscope::workloads
