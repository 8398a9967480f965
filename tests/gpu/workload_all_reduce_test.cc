// overlapscope's one-shot, two-shot and one-shot-push all-reduce kernels on one GPU (label gpu):
// N buffers on one device stand in for N ranks' peers, and one launch plays all N ranks (one grid
// row each), so the kernels' arithmetic, segmenting, flag barriers and (one-shot-push) sentinel
// polling and clearing run as on N GPUs. Every element of
// every rank's output is compared bit for bit with a host reference that adds the ranks' values
// in rank order in FP32 and rounds once, as the kernels promise. With 2+ GPUs the whole
// workload runs too (validated on the device, captured, matched across ranks).
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "importers/nccl/collective_range.h"
#include "workload_util.h"
#include "workloads/all_reduce.h"
#include "workloads/all_reduce_kernels.h"
#include "workloads/all_reduce_peers.h"
#include "workloads/all_reduce_push.h"
#include "workloads/device_memory.h"

namespace overlapscope::workloads_test {
namespace {

using workloads::AllReduceAlgo;
using workloads::DType;

uint16_t FloatToBf16(float f) {  // round to nearest even (no NaN in the test data)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float Bf16ToFloat(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Deterministic values in [-8, 8) with fraction bits, so rounding and summation order matter.
float TestValue(uint64_t i, int rank, int launch) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(rank) * 0xBF58476D1CE4E5B9ull + launch;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<float>(static_cast<int64_t>(x % 65536) - 32768) / 4096.0f;
}

struct RankBuffers {
  workloads::DeviceBuffer in, out, flags, recv;
};

const char* AlgoName(AllReduceAlgo algo) { return workloads::AllReduceAlgoName(algo); }

// N ranks' buffers on device 0 and the kernel arguments that name them; with `push`, also the
// one-shot-push receive buffers (slots of `bytes` rounded up to 16) holding that type's sentinel.
struct FakeRanks {
  std::vector<RankBuffers> r;
  workloads::DeviceBuffer timeouts;
  workloads::AllReduceArgs args;
  int push_launches = 0;

  FakeRanks(int n, int64_t bytes, const DType* push = nullptr) {
    r.resize(n);
    const int64_t slot = (bytes + 15) / 16 * 16;
    for (int q = 0; q < n; ++q) {
      if (push) {
        r[q].recv = std::move(workloads::DeviceBuffer::Create(workloads::AllReducePushBytes(n, slot), 0)).value();
        EXPECT_EQ(workloads::FillAllReducePushSentinel(*push, r[q].recv.get(), r[q].recv.bytes(), nullptr),
                  cudaSuccess);
        args.recv[q] = r[q].recv.get();
        args.recv_slot_bytes = slot;
      }
      r[q].in = std::move(workloads::DeviceBuffer::Create(bytes, 0)).value();
      r[q].out = std::move(workloads::DeviceBuffer::Create(bytes, 0)).value();
      r[q].flags = std::move(workloads::DeviceBuffer::Create(workloads::AllReduceFlagBytes(), 0)).value();
      EXPECT_EQ(cudaMemset(r[q].flags.get(), 0, workloads::AllReduceFlagBytes()), cudaSuccess);
      args.in[q] = r[q].in.get();
      args.out[q] = r[q].out.get();
      args.flags[q] = r[q].flags.as<uint32_t>();
    }
    timeouts = std::move(workloads::DeviceBuffer::Create(16, 0)).value();
    EXPECT_EQ(cudaMemset(timeouts.get(), 0, 16), cudaSuccess);
    args.nranks = n;
    args.timeouts = timeouts.as<unsigned int>();
  }
  unsigned int Timeouts() {
    unsigned int t = 0;
    EXPECT_EQ(cudaMemcpy(&t, timeouts.get(), 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return t;
  }
};

// Runs `launches` all-reduces of `count` elements with fresh data each time (the flags are
// reused, so the epochs advance as in a real run) and compares every rank's output.
void CheckAgainstHost(AllReduceAlgo algo, DType t, int n, int64_t count, int blocks, int launches) {
  SCOPED_TRACE(testing::Message() << AlgoName(algo) << " " << (t == DType::kBF16 ? "bf16" : "fp32") << " n=" << n
                                  << " count=" << count << " blocks=" << blocks);
  const int es = workloads::DTypeBytes(t);
  FakeRanks fr(n, count * es + 16, algo == AllReduceAlgo::kOneShotPush ? &t : nullptr);
  std::vector<std::vector<float>> val(n, std::vector<float>(count));
  std::vector<char> host(count * es), ref(count * es), got(count * es);
  for (int launch = 1; launch <= launches; ++launch) {
    for (int q = 0; q < n; ++q) {
      for (int64_t i = 0; i < count; ++i) {
        // Negative zeros (the push kernel's sentinel) every 97th element: they must arrive as zeros.
        float v = i % 97 == 5 ? -0.0f : TestValue(i, q, launch);
        if (t == DType::kBF16) {
          const uint16_t b = FloatToBf16(v);
          std::memcpy(&host[i * 2], &b, 2);
          v = Bf16ToFloat(b);
        } else {
          std::memcpy(&host[i * 4], &v, 4);
        }
        val[q][i] = v;
      }
      ASSERT_EQ(cudaMemcpy(fr.r[q].in.get(), host.data(), count * es, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemset(fr.r[q].out.get(), 0xFF, count * es), cudaSuccess);  // NaN: unwritten shows
    }
    for (int64_t i = 0; i < count; ++i) {
      float acc = 0.0f;
      for (int q = 0; q < n; ++q) acc += val[q][i];
      if (t == DType::kBF16) {
        const uint16_t b = FloatToBf16(acc);
        std::memcpy(&ref[i * 2], &b, 2);
      } else {
        std::memcpy(&ref[i * 4], &acc, 4);
      }
    }
    workloads::AllReduceArgs a = fr.args;
    a.count = count;
    a.epoch = static_cast<uint32_t>(launch);
    a.recv_half = static_cast<uint32_t>(fr.push_launches++ % 2);
    ASSERT_EQ(workloads::LaunchAllReduce(algo, t, a, blocks, n, nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int q = 0; q < n; ++q) {
      ASSERT_EQ(cudaMemcpy(got.data(), fr.r[q].out.get(), count * es, cudaMemcpyDeviceToHost), cudaSuccess);
      int64_t bad = 0, first = -1;
      for (int64_t i = 0; i < count; ++i)
        if (std::memcmp(&got[i * es], &ref[i * es], es) != 0) {
          if (first < 0) first = i;
          ++bad;
        }
      EXPECT_EQ(bad, 0) << "rank " << q << " launch " << launch << ": first wrong element " << first;
    }
  }
  EXPECT_EQ(fr.Timeouts(), 0u);
}

TEST(AllReduceKernels, MatchHostReferenceForTwoFourEightRanks) {
  WORKLOAD_REQUIRE_GPUS(1);
  // Counts that are not multiples of the vector width (8 bf16 / 4 fp32), smaller than one
  // vector per rank, and large enough for the grid-stride loops to go round.
  // OVERLAPSCOPE_AR_TEST_MAX_COUNT leaves out larger counts (for runs under compute-sanitizer).
  const char* cap_env = std::getenv("OVERLAPSCOPE_AR_TEST_MAX_COUNT");
  const int64_t cap = cap_env ? std::atoll(cap_env) : INT64_MAX;
  const std::vector<int64_t> counts = {1, 7, 13, 1000, 4099, 65539, 1000003};
  for (int n : {2, 4, 8})
    for (DType t : {DType::kBF16, DType::kF32})
      for (AllReduceAlgo algo : {AllReduceAlgo::kOneShot, AllReduceAlgo::kTwoShot, AllReduceAlgo::kOneShotPush})
        for (int64_t count : counts)
          if (count <= cap) CheckAgainstHost(algo, t, n, count, count < 5000 ? 3 : 16, 2);
}

TEST(AllReduceKernels, PushReusesItsReceiveBuffersLaunchAfterLaunch) {
  WORKLOAD_REQUIRE_GPUS(1);
  // Five launches in a row on the same receive buffers (both halves twice and more, each cleared
  // by its reader), fresh data each time: a sentinel left behind or stale data read as new
  // would make a launch's result differ from the host's.
  for (int n : {2, 4})
    for (DType t : {DType::kBF16, DType::kF32}) CheckAgainstHost(AllReduceAlgo::kOneShotPush, t, n, 65539, 16, 5);
}

TEST(AllReduceKernels, WorkloadValidationAcceptsTheSumAndCatchesThePoison) {
  WORKLOAD_REQUIRE_GPUS(1);
  const int n = 4;
  const int64_t count = 1 << 20;  // 2 MiB of bf16
  FakeRanks fr(n, count * 2);
  for (int q = 0; q < n; ++q)
    ASSERT_EQ(workloads::FillAllReduceInput(DType::kBF16, fr.r[q].in.get(), count, q, 77, nullptr), cudaSuccess);
  workloads::AllReduceArgs a = fr.args;
  a.count = count;
  a.epoch = 1;
  ASSERT_EQ(workloads::LaunchAllReduce(AllReduceAlgo::kTwoShot, DType::kBF16, a, 8, n, nullptr), cudaSuccess);
  auto chk = workloads::DeviceChecker::Create(0);
  ASSERT_TRUE(chk.ok()) << chk.status();
  ASSERT_TRUE(chk->Reset(nullptr).ok());
  for (int q = 0; q < n; ++q)
    ASSERT_EQ(
        workloads::ValidateAndPoisonAllReduce(DType::kBF16, fr.r[q].out.get(), count, n, 77, chk->check(), nullptr),
        cudaSuccess);
  auto c = chk->Read(nullptr);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->bad, 0u);
  // The outputs are NaN now: a second check counts every element of rank 0's output.
  ASSERT_EQ(workloads::ValidateAndPoisonAllReduce(DType::kBF16, fr.r[0].out.get(), count, n, 77, chk->check(), nullptr),
            cudaSuccess);
  c = chk->Read(nullptr);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->bad, static_cast<uint64_t>(count));
  EXPECT_EQ(c->first_bad, 0);
  EXPECT_EQ(fr.Timeouts(), 0u);
}

TEST(AllReduceKernels, MissingPeerTimesOutInsteadOfHanging) {
  WORKLOAD_REQUIRE_GPUS(1);
  // Rank 0 of 2 alone (one block; the thread that waits for rank 0 itself passes), each barrier
  // giving up after 20 ms: one-shot has only its start barrier (one timeout), two-shot its start
  // and end barriers (two more).
  FakeRanks fr(2, 4096);
  workloads::AllReduceArgs a = fr.args;
  a.count = 1024;
  a.epoch = 1;
  a.timeout_ns = 20 * 1000 * 1000;
  ASSERT_EQ(workloads::LaunchAllReduce(AllReduceAlgo::kOneShot, DType::kF32, a, 1, 1, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(fr.Timeouts(), 1u);
  a.epoch = 2;
  ASSERT_EQ(workloads::LaunchAllReduce(AllReduceAlgo::kTwoShot, DType::kF32, a, 1, 1, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(fr.Timeouts(), 3u);
  // one-shot-push: rank 0 pushes to rank 1 (nobody reads it) and waits for rank 1's data, which
  // never comes: each of the 256 threads (one vector of 4 floats each) gives up once.
  const DType f32 = DType::kF32;
  FakeRanks pr(2, 4096, &f32);
  workloads::AllReduceArgs p = pr.args;
  p.count = 1024;
  p.timeout_ns = 20 * 1000 * 1000;
  ASSERT_EQ(workloads::LaunchAllReduce(AllReduceAlgo::kOneShotPush, DType::kF32, p, 1, 1, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(pr.Timeouts(), 256u);
}

TEST(AllReduceKernels, BadArgumentsAreRefused) {
  WORKLOAD_REQUIRE_GPUS(1);
  FakeRanks fr(2, 4096);
  workloads::AllReduceArgs a = fr.args;
  a.count = 100;
  a.epoch = 1;
  auto launch = [&](const workloads::AllReduceArgs& x, int blocks, int rpl) {
    return workloads::LaunchAllReduce(AllReduceAlgo::kOneShot, DType::kF32, x, blocks, rpl, nullptr);
  };
  workloads::AllReduceArgs nine = a;
  nine.nranks = 9;
  EXPECT_EQ(launch(nine, 1, 1), cudaErrorInvalidValue);
  EXPECT_EQ(launch(a, 0, 1), cudaErrorInvalidValue);
  EXPECT_EQ(launch(a, workloads::kAllReduceMaxBlocks + 1, 1), cudaErrorInvalidValue);
  EXPECT_EQ(launch(a, 1, 3), cudaErrorInvalidValue);  // 3 ranks per launch of a 2-rank group
  workloads::AllReduceArgs odd = a;
  odd.in[1] = static_cast<char*>(fr.r[1].in.get()) + 4;  // not 16-byte aligned
  EXPECT_EQ(launch(odd, 1, 1), cudaErrorInvalidValue);
  workloads::AllReduceArgs none = a;
  none.out[1] = nullptr;
  EXPECT_EQ(launch(none, 1, 1), cudaErrorInvalidValue);
  // one-shot-push: no receive buffers, a slot smaller than the data, a third half.
  EXPECT_EQ(workloads::LaunchAllReduce(AllReduceAlgo::kOneShotPush, DType::kF32, a, 1, 1, nullptr),
            cudaErrorInvalidValue);
  const DType f32 = DType::kF32;
  FakeRanks pr(2, 400, &f32);
  workloads::AllReduceArgs p = pr.args;
  p.count = 100;
  p.recv_slot_bytes = 384;  // 100 floats need 400 bytes, 400 rounded up to 16
  EXPECT_EQ(workloads::LaunchAllReduce(AllReduceAlgo::kOneShotPush, DType::kF32, p, 1, 1, nullptr),
            cudaErrorInvalidValue);
  p = pr.args;
  p.count = 100;
  p.recv_half = 2;
  EXPECT_EQ(workloads::LaunchAllReduce(AllReduceAlgo::kOneShotPush, DType::kF32, p, 1, 1, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // nothing was launched
}

TEST(AllReduceKernels, DiagnosticStampsComeInOrder) {
  WORKLOAD_REQUIRE_GPUS(1);
  // Two ranks in one launch (4 blocks each) with the diagnostic stamps on: every word is written,
  // and entry <= ready <= exit (a rank is ready only after its peer entered: the peer's flag or
  // data comes from there), the blocks' maxima at or after block 0's words.
  const DType f32 = DType::kF32;
  for (AllReduceAlgo algo : {AllReduceAlgo::kOneShot, AllReduceAlgo::kTwoShot, AllReduceAlgo::kOneShotPush}) {
    SCOPED_TRACE(AlgoName(algo));
    FakeRanks fr(2, 1 << 16, algo == AllReduceAlgo::kOneShotPush ? &f32 : nullptr);
    auto stamps = workloads::DeviceBuffer::Create(8 * workloads::kAllReduceStampWords, 0);
    ASSERT_TRUE(stamps.ok()) << stamps.status();
    ASSERT_EQ(cudaMemset(stamps->get(), 0, stamps->bytes()), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    workloads::AllReduceArgs a = fr.args;
    a.count = (1 << 16) / 4;
    a.epoch = 1;
    a.stamps = stamps->as<unsigned long long>();
    ASSERT_EQ(workloads::LaunchAllReduce(algo, DType::kF32, a, 4, 2, nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<unsigned long long> w(workloads::kAllReduceStampWords);
    ASSERT_EQ(cudaMemcpy(w.data(), stamps->get(), 8 * w.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_GT(w[workloads::kStampEntry0], 0u);
    EXPECT_LE(w[workloads::kStampEntry0], w[workloads::kStampReady0]);
    EXPECT_LE(w[workloads::kStampReady0], w[workloads::kStampExitMax]);
    EXPECT_GE(w[workloads::kStampEntryMax], w[workloads::kStampEntry0]);
    EXPECT_GE(w[workloads::kStampReadyMax], w[workloads::kStampReady0]);
    EXPECT_LE(w[workloads::kStampReadyMax], w[workloads::kStampExitMax]);
    EXPECT_EQ(fr.Timeouts(), 0u);
  }
}

TEST(AllReduceKernels, HeldStreamTimesTheGpuNotTheHost) {
  WORKLOAD_REQUIRE_GPUS(1);
  // The host sleeps 50 ms between enqueuing [event, all-reduce, event] behind a held stream and
  // releasing it: the events must not see the sleep (an all-reduce of 1 M floats over 2 fake
  // ranks takes microseconds).
  FakeRanks fr(2, 4 << 20);
  auto flag = workloads::PinnedBuffer::Create(64);
  ASSERT_TRUE(flag.ok()) << flag.status();
  volatile int* f = flag->as<int>();
  *f = 0;
  cudaEvent_t b, e;
  ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&e), cudaSuccess);
  ASSERT_EQ(workloads::HoldStream(f, 5'000'000'000, fr.timeouts.as<unsigned int>(), nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(b, nullptr), cudaSuccess);
  workloads::AllReduceArgs a = fr.args;
  a.count = 1 << 20;
  a.epoch = 1;
  ASSERT_EQ(workloads::LaunchAllReduce(AllReduceAlgo::kOneShot, DType::kF32, a, 16, 2, nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e, nullptr), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(cudaEventQuery(e), cudaErrorNotReady);  // still held
  cudaGetLastError();                               // not an error; keep later launches' checks clean
  *f = 1;
  ASSERT_EQ(cudaEventSynchronize(e), cudaSuccess);
  float ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&ms, b, e), cudaSuccess);
  EXPECT_LT(ms, 25.0f);
  EXPECT_EQ(fr.Timeouts(), 0u);
  // Never released: gives up after 20 ms and counts it.
  *f = 0;
  ASSERT_EQ(workloads::HoldStream(f, 20'000'000, fr.timeouts.as<unsigned int>(), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(fr.Timeouts(), 1u);
  cudaEventDestroy(b);
  cudaEventDestroy(e);
}

TEST(AllReduceKernels, NvtxRangeMakesACollectiveInARealCapture) {
  WORKLOAD_REQUIRE_GPUS(1);
  std::string lib = cupti::CuptiLibraryPath();
  if (!lib.empty()) setenv("NVTX_INJECTION64_PATH", lib.c_str(), 0);
  // Two all-reduces of 2 fake ranks in one launch each, launched inside the workload's range
  // (as rank 0 of 2): the capture must give two collectives with the message's fields, carried
  // by the ovs_allreduce kernels, which the analysis counts as communication.
  FakeRanks fr(2, 4 << 20);
  auto session = cupti::CaptureSession::Start();
  ASSERT_TRUE(session.ok()) << session.status();
  nvtxDomainHandle_t dom = nvtxDomainCreateA(std::string(import::kCollectiveRangeDomain).c_str());
  for (int seq = 0; seq < 2; ++seq) {
    const std::string name =
        workloads::AllReduceRangeName(0xabcull, seq, 4 << 20, 0, 2, DType::kF32, AllReduceAlgo::kTwoShot);
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name.c_str();
    nvtxDomainRangePushEx(dom, &attr);
    workloads::AllReduceArgs a = fr.args;
    a.count = 1 << 20;
    a.epoch = static_cast<uint32_t>(seq + 1);
    const cudaError_t err = workloads::LaunchAllReduce(AllReduceAlgo::kTwoShot, DType::kF32, a, 16, 2, nullptr);
    nvtxDomainRangePop(dom);
    ASSERT_EQ(err, cudaSuccess);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto t = engine::StopCapture(**session);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->collectives().size(), 2u);
  for (int seq = 0; seq < 2; ++seq) {
    const model::Collective& c = t->collectives()[seq];
    EXPECT_EQ(t->str(c.op), "AllReduce");
    EXPECT_EQ(t->str(c.communicator), "ovs:0000000000000abc");
    EXPECT_EQ(c.sequence, seq);
    EXPECT_EQ(c.bytes, 4 << 20);
    EXPECT_EQ(c.rank, 0);
    EXPECT_EQ(c.nranks, 2);
  }
  int carried = 0;
  for (const auto& k : t->kernels()) {
    if (k.collective == model::kNone) continue;
    ++carried;
    EXPECT_NE(t->str(k.name).find("ovs_allreduce_two_shot"), std::string_view::npos) << t->str(k.name);
  }
  EXPECT_EQ(carried, 2);
  auto an = analyze::AnalyzeAll(*t, analyze::AnalyzeOptions{});
  ASSERT_TRUE(an.ok()) << an.status();
  EXPECT_GT(CommNs(*an), 0);
}

TEST(WorkloadAllReduce, OneGpuIsRefusedWithAMessage) {
  workloads::AllReduceOptions o;
  o.run.gpus = 1;
  auto r = workloads::RunAllReduce(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("at least 2 GPUs"), absl::string_view::npos) << r.status();
  if (GpuCount() == 1) {  // the default (every visible GPU) says how many it saw
    auto d = workloads::RunAllReduce(workloads::AllReduceOptions{});
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.status().message().find("this machine shows 1 GPU"), absl::string_view::npos) << d.status();
  }
}

TEST(WorkloadAllReduce, EveryImplementationValidatesAndIsMatchedAcrossRanks) {
  WORKLOAD_REQUIRE_GPUS(2);
  workloads::AllReduceOptions o;
  o.run.gpus = 2;
  o.run.iters = 5;
  o.run.warmup = 2;
  o.reps = 3;
  o.sizes = {1 << 20, 3 * (1 << 20) + 6};  // the second is no multiple of 16 bytes
  Collector c;
  auto r = workloads::RunAllReduce(o, c.Hooks(2));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& e : r->errors) ADD_FAILURE() << e;
  std::printf("%s\n", r->table.c_str());
  for (const auto& impl : workloads::AllReduceImpls())
    for (int64_t b : o.sizes) EXPECT_GT(r->Get(workloads::AllReduceFigureKey(impl, b, "ms")), 0) << impl << " " << b;
  for (const char* impl : {"one-shot", "two-shot", "one-shot-push"}) {
    ASSERT_EQ(c.modes.count(impl), 1u) << impl;
    const auto& a = c.modes[impl].analysis;
    EXPECT_GT(CommNs(a), 0) << impl << ": the kernels are communication";
    // The captured run is 1 warm-up + 2 iterations, each all sizes once: 3 x 2 all-reduces,
    // each matched across the 2 GPUs by sequence number.
    EXPECT_EQ(a.cross_rank.instances.size(), 6u) << impl;
    EXPECT_TRUE(a.cross_rank.matched_by_sequence) << impl;
    for (const auto& inst : a.cross_rank.instances) {
      EXPECT_EQ(inst.ranks.size(), 2u);
      EXPECT_EQ(c.modes[impl].trace.str(inst.op), "AllReduce");
      EXPECT_EQ(c.modes[impl].trace.str(inst.communicator).substr(0, 4), "ovs:");
    }
  }
}

// --ar-timing graph: every implementation's all-reduces captured into a CUDA graph (NCCL's too)
// and launched; the last of each graph validated on the device, so a graph that ran nothing or
// the wrong epochs would fail here. Batch timing of the same sizes beside it: a graph holds the
// same kernels, so it cannot be several times slower.
TEST(WorkloadAllReduce, GraphTimingRunsAndValidatesEveryImplementation) {
  WORKLOAD_REQUIRE_GPUS(2);
  workloads::AllReduceOptions o;
  o.run.gpus = 2;
  o.run.iters = 5;
  o.run.warmup = 2;
  o.reps = 4;
  o.sizes = {1 << 20, 3 * (1 << 20) + 6};
  o.timing = workloads::AllReduceTiming::kGraph;
  auto g = workloads::RunAllReduce(o);
  ASSERT_TRUE(g.ok()) << g.status();
  for (const auto& e : g->errors) ADD_FAILURE() << e;
  EXPECT_NE(g->config.find("--ar-timing graph"), std::string::npos) << g->config;
  o.timing = workloads::AllReduceTiming::kBatch;
  auto b = workloads::RunAllReduce(o);
  ASSERT_TRUE(b.ok()) << b.status();
  std::printf("graph:\n%s\nbatch:\n%s\n", g->table.c_str(), b->table.c_str());
  for (const auto& impl : workloads::AllReduceImpls())
    for (int64_t bytes : o.sizes) {
      const double gm = g->Get(workloads::AllReduceFigureKey(impl, bytes, "ms"));
      const double bm = b->Get(workloads::AllReduceFigureKey(impl, bytes, "ms"));
      EXPECT_GT(gm, 0) << impl << " " << bytes;
      EXPECT_LT(gm, 3 * bm) << impl << " " << bytes << ": graph " << gm << " ms, batch " << bm << " ms";
    }
}

// --ar-no-hold (for Nsight Compute, which serializes launches): the same all-reduces enqueued
// without the spinning hold; every one is still validated on the device, the run says so in its
// notes, and no hold can have timed out (there is none).
TEST(WorkloadAllReduce, NoHoldRunsAndValidatesEveryImplementation) {
  WORKLOAD_REQUIRE_GPUS(2);
  workloads::AllReduceOptions o;
  o.run.gpus = 2;
  o.run.iters = 4;
  o.run.warmup = 1;
  o.reps = 3;
  o.sizes = {1 << 19, 3 * (1 << 20) + 6};
  o.hold = false;
  auto r = workloads::RunAllReduce(o);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& e : r->errors) ADD_FAILURE() << e;
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("--ar-no-hold") != std::string::npos;
  EXPECT_TRUE(noted);
  for (const auto& impl : workloads::AllReduceImpls())
    for (int64_t bytes : o.sizes) EXPECT_GT(r->Get(workloads::AllReduceFigureKey(impl, bytes, "ms")), 0) << impl;
}

}  // namespace
}  // namespace overlapscope::workloads_test
