// Realistic GEMM data (workloads/gemm_data.h) on one GPU (label gpu): the inputs look like
// torch.randn, a correct GEMM passes the sampled FP64 validation in every dtype, and a corrupted
// output fails it — one element at a sampled position changed by a little, an unwritten output,
// a NaN at a position the samples miss; the all-to-all consumer counts non-finite elements and
// poisons every one. Skips visibly without a GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "workload_util.h"
#include "workloads/device_memory.h"
#include "workloads/gemm.h"
#include "workloads/gemm_data.h"
#include "workloads/rank_group.h"

namespace overlapscope::workloads_test {
namespace {

using workloads::DType;
using workloads::Gemm;
using workloads::GemmData;
using workloads::GemmShape;

std::unique_ptr<workloads::RankGroup> OneGpu() {
  workloads::GroupOptions go;
  go.gpus = 1;
  go.nccl = false;
  auto g = workloads::RankGroup::Create(go);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(g).value() : nullptr;
}

// Element `x` of C as float (host conversion of the stored bits).
float ReadElement(const Gemm& g, int64_t x) {
  const int bytes = workloads::DTypeBytes(g.shape().dtype);
  uint32_t raw = 0;
  EXPECT_EQ(cudaMemcpy(&raw, static_cast<const char*>(g.output()) + x * bytes, bytes, cudaMemcpyDeviceToHost),
            cudaSuccess);
  if (g.shape().dtype == DType::kF32) {
    float f = 0;
    std::memcpy(&f, &raw, sizeof(f));
    return f;
  }
  __half_raw h{};
  h.x = static_cast<uint16_t>(raw);
  if (g.shape().dtype == DType::kF16) return __half2float(__half(h));
  __nv_bfloat16_raw b{};
  b.x = static_cast<uint16_t>(raw);
  return __bfloat162float(__nv_bfloat16(b));
}

void WriteElement(const Gemm& g, int64_t x, float v) {
  const int bytes = workloads::DTypeBytes(g.shape().dtype);
  uint32_t raw = 0;
  if (g.shape().dtype == DType::kF32) {
    std::memcpy(&raw, &v, sizeof(raw));
  } else if (g.shape().dtype == DType::kF16) {
    raw = static_cast<__half_raw>(__float2half_rn(v)).x;
  } else {
    raw = static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(v)).x;
  }
  ASSERT_EQ(cudaMemcpy(const_cast<char*>(static_cast<const char*>(g.output())) + x * bytes, &raw, bytes,
                       cudaMemcpyHostToDevice),
            cudaSuccess);
}

TEST(WorkloadGemmData, InputsAreStandardNormal) {
  WORKLOAD_REQUIRE_GPUS(1);
  auto group = OneGpu();
  ASSERT_NE(group, nullptr);
  workloads::RankContext& ctx = group->rank(0);
  const int64_t n = 1 << 20;
  auto buf = workloads::DeviceBuffer::Create(n * sizeof(float), ctx.device);
  ASSERT_TRUE(buf.ok());
  ASSERT_EQ(workloads::FillNormal(DType::kF32, buf->get(), n, 42, ctx.compute), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(ctx.compute), cudaSuccess);
  std::vector<float> h(n);
  ASSERT_EQ(cudaMemcpy(h.data(), buf->get(), n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  double sum = 0, sq = 0, beyond2 = 0;
  for (float v : h) {
    sum += v;
    sq += static_cast<double>(v) * v;
    beyond2 += std::fabs(v) > 2.0f;
  }
  const double mean = sum / n, var = sq / n - mean * mean;
  std::printf("N(0,1) fill of %lld: mean %.5f, variance %.5f, P(|x|>2) %.5f\n", static_cast<long long>(n), mean, var,
              beyond2 / n);
  // Standard errors for 2^20 samples: mean 0.001, variance 0.0014, P(|x|>2) = 0.0455 +- 0.0002.
  EXPECT_NEAR(mean, 0.0, 0.005);
  EXPECT_NEAR(var, 1.0, 0.007);
  EXPECT_NEAR(beyond2 / n, 0.0455, 0.0015);
}

TEST(WorkloadGemmData, CorrectGemmPassesInEveryDtype) {
  WORKLOAD_REQUIRE_GPUS(1);
  auto group = OneGpu();
  ASSERT_NE(group, nullptr);
  workloads::RankContext& ctx = group->rank(0);
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32}) {
    for (GemmData d : {GemmData::kRandom, GemmData::kStructured}) {
      GemmShape shape{1024, 768, 8192, t, d};
      auto g = Gemm::Create(ctx, shape, 7, 9);
      ASSERT_TRUE(g.ok()) << g.status();
      ASSERT_TRUE(g->Enqueue(ctx).ok());
      absl::Status st = g->Validate(ctx, "test GEMM");
      EXPECT_TRUE(st.ok()) << workloads::DTypeName(t) << " " << workloads::GemmDataName(d) << ": " << st;
    }
  }
}

TEST(WorkloadGemmData, CorruptedElementFailsValidation) {
  WORKLOAD_REQUIRE_GPUS(1);
  auto group = OneGpu();
  ASSERT_NE(group, nullptr);
  workloads::RankContext& ctx = group->rank(0);
  GemmShape shape{2048, 2048, 8192, DType::kF16, GemmData::kRandom};
  auto g = Gemm::Create(ctx, shape, 1000, 2000);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(g->Enqueue(ctx).ok());
  ASSERT_TRUE(g->Validate(ctx, "before corruption").ok());
  // One sampled element off by 1 (values have standard deviation sqrt(8192) ~ 90; the tolerance
  // there is ~0.15).
  const int64_t x = workloads::GemmSampleIndex(g->sample_salt(), 17, shape.m * shape.n);
  const float good = ReadElement(*g, x);
  WriteElement(*g, x, good + 1.0f);
  absl::Status st = g->Validate(ctx, "corrupted GEMM output");
  std::printf("element %lld: %.4f -> %.4f: %s\n", static_cast<long long>(x), good, ReadElement(*g, x),
              st.ToString().c_str());
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  WriteElement(*g, x, good);
  EXPECT_TRUE(g->Validate(ctx, "restored").ok());
  // NaN at a position the samples miss: the finite check of every element sees it.
  int64_t y = 12345;
  for (int s = 0; s < workloads::kGemmValidateSamples; ++s)
    if (workloads::GemmSampleIndex(g->sample_salt(), s, shape.m * shape.n) == y) ++y;
  WriteElement(*g, y, std::nanf(""));
  EXPECT_EQ(g->Validate(ctx, "NaN in GEMM output").code(), absl::StatusCode::kDataLoss);
  // An output no GEMM wrote (zeroed).
  ASSERT_TRUE(g->ClearOutput(ctx).ok());
  EXPECT_EQ(g->Validate(ctx, "unwritten GEMM output").code(), absl::StatusCode::kDataLoss);
}

// The all-to-all consumer (CheckFiniteAndPoison, 16-byte vectors plus a scalar tail): finite
// elements pass, an Inf inside a vector, a NaN in the tail and an Inf at the start of an
// unaligned buffer (the scalar path) are counted with the first index, and every element is NaN
// afterwards, so a second pass counts them all.
TEST(WorkloadGemmData, ConsumerCountsNonFiniteAndPoisonsEveryElement) {
  WORKLOAD_REQUIRE_GPUS(1);
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32}) {
    for (int offset : {0, 1}) {  // elements: 0 = aligned (vector path), 1 = misaligned (scalar path)
      SCOPED_TRACE(testing::Message() << workloads::DTypeName(t) << " offset " << offset);
      const int es = workloads::DTypeBytes(t);
      const int64_t count = 100003;  // not a multiple of any vector width
      auto buf = workloads::DeviceBuffer::Create((count + 1) * es, 0);
      ASSERT_TRUE(buf.ok()) << buf.status();
      char* z = buf->as<char>() + offset * es;
      ASSERT_EQ(workloads::FillNormal(t, z, count, 7, nullptr), cudaSuccess);
      // Inf at 4101, NaN at count - 1 (past the last whole vector).
      const uint32_t inf = t == DType::kF32 ? 0x7F800000u : t == DType::kF16 ? 0x7C00u : 0x7F80u;
      const uint32_t nan = t == DType::kF32 ? 0x7FC00000u : t == DType::kF16 ? 0x7E00u : 0x7FC0u;
      ASSERT_EQ(cudaMemcpy(z + 4101 * es, &inf, es, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(z + (count - 1) * es, &nan, es, cudaMemcpyHostToDevice), cudaSuccess);
      auto chk = workloads::DeviceChecker::Create(0);
      ASSERT_TRUE(chk.ok()) << chk.status();
      ASSERT_TRUE(chk->Reset(nullptr).ok());
      ASSERT_EQ(workloads::CheckFiniteAndPoison(t, z, count, chk->check(), nullptr), cudaSuccess);
      auto c = chk->Read(nullptr);
      ASSERT_TRUE(c.ok()) << c.status();
      EXPECT_EQ(c->bad, 2u);
      EXPECT_EQ(c->first_bad, 4101);
      ASSERT_TRUE(chk->Reset(nullptr).ok());
      ASSERT_EQ(workloads::CheckFiniteAndPoison(t, z, count, chk->check(), nullptr), cudaSuccess);
      c = chk->Read(nullptr);
      ASSERT_TRUE(c.ok()) << c.status();
      EXPECT_EQ(c->bad, static_cast<uint64_t>(count));
      EXPECT_EQ(c->first_bad, 0);
    }
  }
}

}  // namespace
}  // namespace overlapscope::workloads_test
