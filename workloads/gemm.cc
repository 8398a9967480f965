#include "workloads/gemm.h"

#include <chrono>
#include <climits>

#include "absl/strings/str_cat.h"

namespace overlapscope::workloads {
namespace {

cudaDataType_t CudaType(DType t) {
  switch (t) {
    case DType::kF16: return CUDA_R_16F;
    case DType::kBF16: return CUDA_R_16BF;
    case DType::kF32: return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

}  // namespace

absl::StatusOr<DType> ParseDType(const std::string& s) {
  if (s == "fp16") return DType::kF16;
  if (s == "bf16") return DType::kBF16;
  if (s == "fp32") return DType::kF32;
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", s, "' (fp16, bf16 or fp32)"));
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kF16: return "fp16";
    case DType::kBF16: return "bf16";
    case DType::kF32: return "fp32";
  }
  return "?";
}

absl::StatusOr<GemmData> ParseGemmData(const std::string& s) {
  if (s == "random") return GemmData::kRandom;
  if (s == "structured") return GemmData::kStructured;
  return absl::InvalidArgumentError(absl::StrCat("unknown --data '", s, "' (random or structured)"));
}

const char* GemmDataName(GemmData d) { return d == GemmData::kRandom ? "random" : "structured"; }

std::string GemmDataDescription(const GemmShape& shape) {
  if (shape.data == GemmData::kRandom)
    return absl::StrCat("GEMM inputs A, B ~ N(0,1) (as torch.randn), rounded to ", DTypeName(shape.dtype),
                        "; validated: every element finite, ", kGemmValidateSamples,
                        " sampled elements against an FP64 reference (tolerance from k and the dtype)");
  return absl::StrCat(
      "GEMM inputs structured (--data structured: +-1, +-2 times a power of two; every output "
      "element checked exactly; draws less power than random data, so clocks run higher)");
}

absl::StatusOr<Gemm> Gemm::Create(RankContext& ctx, const GemmShape& shape, uint32_t seed_a, uint32_t seed_b) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.m > INT_MAX || shape.n > INT_MAX || shape.k > INT_MAX)
    return absl::InvalidArgumentError(absl::StrCat("GEMM shape ", shape.m, "x", shape.n, "x", shape.k,
                                                   " out of range (each dimension 1..", INT_MAX, ")"));
  Gemm g;
  g.shape_ = shape;
  g.seed_a_ = seed_a;
  g.seed_b_ = seed_b;
  g.e_ = GemmScaleExp(shape.k);
  const size_t es = DTypeBytes(shape.dtype);
  ASSIGN_OR_RETURN(g.a_, DeviceBuffer::Create(shape.m * shape.k * es, ctx.device));
  ASSIGN_OR_RETURN(g.b_, DeviceBuffer::Create(shape.k * shape.n * es, ctx.device));
  ASSIGN_OR_RETURN(g.c_, DeviceBuffer::Create(shape.m * shape.n * es, ctx.device));
  ASSIGN_OR_RETURN(g.check_, DeviceChecker::Create(ctx.device));
  if (shape.data == GemmData::kRandom) {
    OS_CUDA(FillNormal(shape.dtype, g.a_.get(), shape.m * shape.k, seed_a, ctx.compute));
    OS_CUDA(FillNormal(shape.dtype, g.b_.get(), shape.k * shape.n, seed_b, ctx.compute));
  } else {
    OS_CUDA(FillGemmA(shape.dtype, g.a_.get(), shape.m, shape.k, seed_a, g.e_, ctx.compute));
    OS_CUDA(FillGemmB(shape.dtype, g.b_.get(), shape.k, shape.n, seed_b, g.e_, ctx.compute));
  }
  OS_CUDA(cudaMemsetAsync(g.c_.get(), 0, g.c_.bytes(), ctx.compute));
  OS_CUDA(cudaStreamSynchronize(ctx.compute));
  return g;
}

absl::Status Gemm::Enqueue(RankContext& ctx) { return EnqueueInto(ctx, c_.get()); }

absl::Status Gemm::EnqueueInto(RankContext& ctx, void* c) {
  const float alpha = 1.0f, beta = 0.0f;
  const cudaDataType_t t = CudaType(shape_.dtype);
  const int m = static_cast<int>(shape_.m), n = static_cast<int>(shape_.n), k = static_cast<int>(shape_.k);
  OS_CUBLAS(cublasGemmEx(ctx.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a_.get(), t, m, b_.get(), t, k, &beta, c,
                         t, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return absl::OkStatus();
}

absl::Status Gemm::ClearOutput(RankContext& ctx) {
  OS_CUDA(cudaMemsetAsync(c_.get(), 0, c_.bytes(), ctx.compute));
  return absl::OkStatus();
}

absl::Status Gemm::Validate(RankContext& ctx, const std::string& what, const void* c) {
  RETURN_IF_ERROR(check_.Reset(ctx.compute));
  const void* out = c ? c : c_.get();
  if (shape_.data == GemmData::kRandom) {
    SampledGemm g;
    g.dtype = shape_.dtype;
    g.m = shape_.m;
    g.n = shape_.n;
    g.k = shape_.k;
    g.seed_a = seed_a_;
    g.seed_b = seed_b_;
    OS_CUDA(CheckFinite(shape_.dtype, out, shape_.m * shape_.n, check_.check(), ctx.compute));
    OS_CUDA(ValidateGemmSampled(g, out, kGemmValidateSamples, sample_salt(), check_.check(), ctx.compute));
  } else {
    OS_CUDA(ValidateGemm(shape_.dtype, out, shape_.m, shape_.n, shape_.k, seed_a_, seed_b_, e_, check_.check(),
                         ctx.compute));
  }
  auto counts = check_.Read(ctx.compute);
  if (!counts.ok()) return counts.status();
  return CheckCounts(*counts, ctx.rank, what, static_cast<uint64_t>(shape_.m * shape_.n));
}

absl::Status BurnIn(RankContext& ctx, Gemm& gemm, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 8; ++i) RETURN_IF_ERROR(gemm.Enqueue(ctx));
    OS_CUDA(cudaStreamSynchronize(ctx.compute));
  }
  return absl::OkStatus();
}

}  // namespace overlapscope::workloads
