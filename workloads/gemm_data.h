// Realistic GEMM data (the default of the workloads): every element of A and B is drawn from a
// standard normal distribution, as torch.randn draws them, and rounded to the GEMM's dtype.
// Random data draws the power (and so the clocks) that users' jobs draw; the structured data of
// kernels.h (exactly checkable) draws less and ran up to 35 % faster (../shared/GPU.md).
//
// The generator is counter-based: element x of a matrix filled with `seed` is a pure function
// of (seed, x) (a 64-bit hash of (seed, x / 2) gives two uniforms, Box–Muller turns them into
// two normals, x odd takes the second). So a validation kernel recomputes any input element
// without reading the buffers, and can form an FP64 reference of any output element.
//
// Validation is sampled: `samples` output elements (positions from a hash of salt and the sample
// number, GemmSampleIndex) are compared with C(i,j) = sum_p A(i,p) B(p,j), accumulated in FP64
// from the rounded inputs, with the tolerance
//   |C - ref| <= eps_out * |ref| + 4 * sqrt(k) * 2^-24 * sum_p |A(i,p) B(p,j)|
// (eps_out = 2^-10 fp16, 2^-7 bf16, 2^-23 fp32: one unit of the output's last place, covers the
// final rounding; the second term bounds FP32 accumulation error, which grows like sqrt(k) for
// random signs). NaN or Inf never passes. A wrong GEMM, an unwritten (zeroed or poisoned) output
// or a corrupted element at a sampled position fails; an untouched position is not seen, hence
// the finite check of every element beside it (CheckFinite).
// Plain C++ interface (no Abseil) so that the .cu compiles with nvcc alone.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "workloads/kernels.h"

namespace overlapscope::workloads {

// Which inputs the GEMMs of the workloads get: random (normal) or structured (kernels.h).
enum class GemmData { kRandom, kStructured };

// Output elements checked per validation of a whole GEMM output (outside the timed region).
inline constexpr int kGemmValidateSamples = 4096;

// Position (column-major index into an m x n output of `total` = m*n elements) of sample s.
int64_t GemmSampleIndex(uint32_t salt, int64_t s, int64_t total);

// Fills `count` elements: p[x] = round_to_dtype(normal(seed, x)).
cudaError_t FillNormal(DType t, void* p, int64_t count, uint32_t seed, cudaStream_t s);

// The product being checked. A is m x k filled with seed_a, B is k x n filled with seed_b, both
// column-major; the output is m x n column-major. With a2a_nranks > 0 the output is instead the
// buffer Z of rank a2a_me after the all-to-all of the workload all_to_all.h: chunk q (m*n /
// a2a_nranks elements) came from rank q, whose A used seed a2a_seed_a_base + q, and holds chunk
// a2a_me of that rank's output.
struct SampledGemm {
  DType dtype = DType::kF16;
  int64_t m = 0, n = 0, k = 0;
  uint32_t seed_a = 0, seed_b = 0;
  int a2a_nranks = 0, a2a_me = 0;
  uint32_t a2a_seed_a_base = 0;
};

// Checks `samples` elements of `out` (see the header comment); each wrong one is counted into
// chk (chk.bad null: computed, nothing counted — the same cost for a stand-in consumer).
cudaError_t ValidateGemmSampled(const SampledGemm& g, const void* out, int samples, uint32_t salt, DeviceCheck chk,
                                cudaStream_t s);

// Counts every element of `out` that is NaN or Inf into chk.
cudaError_t CheckFinite(DType t, const void* out, int64_t count, DeviceCheck chk, cudaStream_t s);

// The all-to-all consumer on random data: every element must be finite (it arrived: the
// previous consumer left NaN), then is overwritten with NaN. chk.bad null: not counted. A
// 16-byte aligned z is done in 16-byte vectors (finiteness from the exponent bits), any other
// one element by element.
cudaError_t CheckFiniteAndPoison(DType t, void* z, int64_t count, DeviceCheck chk, cudaStream_t s);

}  // namespace overlapscope::workloads
