#include "analyze/classify.h"

#include "gtest/gtest.h"
#include "synth.h"

namespace overlapscope::analyze {
namespace {

using testing::Synth;

// Classifies each kernel name with the given rules; returns classes in insertion order.
std::vector<ActivityClass> ClassesOf(const std::vector<std::string>& names, const ClassRules& rules) {
  Synth s;
  for (size_t i = 0; i < names.size(); ++i) s.Kernel(names[i], 7, 100 * i, 100 * i + 10);
  model::Trace t = s.Finish();
  auto c = Classifier::Create(rules, t);
  EXPECT_TRUE(c.ok());
  std::vector<ActivityClass> out;
  for (size_t i = 0; i < t.kernels().size(); ++i)
    out.push_back(c->Classify({model::GpuKind::kKernel, static_cast<int32_t>(i)}));
  return out;
}

TEST(Classify, DefaultNamesCoverCollectiveLibraries) {
  const std::vector<std::string> names = {
      "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
      "void ncclKernel_SendRecv<...>(ncclDevComm*)",
      "void (anonymous namespace)::ncclAllReduceRingKernel<float>(...)",
      "rcclGenericKernel",
      "void nvshmemi_transfer_kernel(int)",
      "void vllm::cross_device_reduce_1stage<half, 8>(...)",
      "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float>(...)",
      "twoShotAllReduceKernel",
      "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT",
      "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<c10::Half>>",
  };
  auto c = ClassesOf(names, ClassRules::Defaults());
  for (int i = 0; i < 9; ++i) EXPECT_EQ(c[i], ActivityClass::kComm) << names[i];
  EXPECT_EQ(c[9], ActivityClass::kCompute);
  EXPECT_EQ(c[10], ActivityClass::kCompute);
}

TEST(Classify, OwnAllReduceKernelsAreCommunication) {
  // overlapscope's one-shot / two-shot / one-shot-push kernels as CUPTI names them (mangled), as the capture
  // shows them (demangled), and a compute kernel of the same workload that only mentions the
  // word all-reduce without the prefix.
  const std::vector<std::string> names = {
      "_ZN11overlapscope9workloads22ovs_allreduce_one_shotI13__nv_bfloat16EEvNS0_13AllReduceArgsE",
      "void overlapscope::workloads::ovs_allreduce_two_shot<float>(overlapscope::workloads::AllReduceArgs)",
      "void overlapscope::workloads::ValidateAllReduceKernel<float>(float*, long, int, unsigned int)",
      // one-shot-push as the 4 x H100 capture shows it (samples/all-reduce-one-shot-push).
      "void overlapscope::workloads::ovs_allreduce_one_shot_push<__nv_bfloat16, 4>(overlapscope::workloads::"
      "AllReduceArgs)",
  };
  ClassRules rules = ClassRules::Defaults();
  auto c = ClassesOf(names, rules);
  EXPECT_EQ(c[0], ActivityClass::kComm);
  EXPECT_EQ(c[1], ActivityClass::kComm);
  EXPECT_EQ(c[2], ActivityClass::kCompute);
  EXPECT_EQ(c[3], ActivityClass::kComm);
  // The rule that matched is the default one for these kernels, not a fallback.
  Synth s;
  s.Kernel(names[1], 7, 0, 10);
  model::Trace t = s.Finish();
  auto cl = Classifier::Create(rules, t);
  ASSERT_TRUE(cl.ok());
  const int32_t rule = cl->RuleOf({model::GpuKind::kKernel, 0});
  ASSERT_GE(rule, 0);
  EXPECT_EQ(rules.rules()[rule].Describe(), "comm contains ovs_allreduce_");
}

TEST(Classify, UserRulesWinAndFileFormatParses) {
  ClassRules r = ClassRules::Defaults();
  ASSERT_TRUE(r.AddUserRule(ActivityClass::kComm, MatchKind::kRegex, "^my_allreduce", "--comm-kernel").ok());
  ASSERT_TRUE(
      r.AddRulesFromText("# custom\n\ncompute prefix ncclFake\nmemory contains copy_kernel\n", "rules.txt").ok());
  auto c = ClassesOf({"my_allreduce_fused", "ncclFakeCompute", "my_copy_kernel_x", "gemm"}, r);
  EXPECT_EQ(c, (std::vector<ActivityClass>{ActivityClass::kComm, ActivityClass::kCompute, ActivityClass::kMemory,
                                           ActivityClass::kCompute}));
  EXPECT_EQ(r.rules()[1].origin, "rules.txt:3");
  EXPECT_EQ(r.rules()[1].Describe(), "compute prefix ncclFake");
}

TEST(Classify, BadRulesNameTheirOrigin) {
  ClassRules r = ClassRules::Defaults();
  absl::Status s = r.AddUserRule(ActivityClass::kComm, MatchKind::kRegex, "(unclosed", "--comm-kernel");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--comm-kernel"), std::string::npos);
  s = r.AddRulesFromText("comm ok\nbogus REGEX\n", "c.txt");
  EXPECT_NE(s.message().find("c.txt:2"), std::string::npos) << s;
  s = r.AddRulesFromText("comm\n", "d.txt");
  EXPECT_NE(s.message().find("d.txt:1"), std::string::npos) << s;
}

// Regression (issue 11): std::regex recursed once per character on `^void .*nccl`, so a name of
// "void " + ~40,000 characters overflowed the stack, and user rules with `.*` were quadratic.
// RE2 matches in linear time without recursion: these names classify like short ones.
TEST(Classify, HugeNamesAndPathologicalPatternsAreLinear) {
  const std::string filler(1 << 20, 'x');  // 1 MiB
  ClassRules r = ClassRules::Defaults();
  ASSERT_TRUE(r.AddUserRule(ActivityClass::kMemory, MatchKind::kRegex, "(x*)*y", "--memory-kernel").ok());
  ASSERT_TRUE(r.AddUserRule(ActivityClass::kMemory, MatchKind::kRegex, ".*.*.*copyz", "--memory-kernel").ok());
  auto c = ClassesOf({"void " + filler, "void " + filler + "nccl", filler + "y", filler + "copyz", "void ncclX"}, r);
  EXPECT_EQ(c, (std::vector<ActivityClass>{ActivityClass::kCompute, ActivityClass::kComm, ActivityClass::kMemory,
                                           ActivityClass::kMemory, ActivityClass::kComm}));
}

// What RE2 does not support (backreferences, lookaround; ECMAScript had them) is an error that
// names the origin and says the syntax is RE2's, never a silent non-match.
TEST(Classify, Re2UnsupportedSyntaxIsAnError) {
  ClassRules r = ClassRules::Defaults();
  absl::Status s = r.AddUserRule(ActivityClass::kComm, MatchKind::kRegex, "(a)\\1", "--comm-kernel");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--comm-kernel: invalid regex '(a)\\1'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("RE2 syntax"), std::string::npos) << s;
  s = r.AddRulesFromText("comm (?=nccl)x\n", "e.txt");
  EXPECT_NE(s.message().find("e.txt:1: invalid regex"), std::string::npos) << s;
}

TEST(Classify, CollectiveCarriersAndCopies) {
  Synth s;
  model::CollectiveId c = s.Collective("allgather");
  s.Memcpy("cudaMemcpyBatchAsync", 0, 5, 17, 10, 20, model::MemcpyKind::kPtoP, model::MemoryKind::kDevice,
           model::MemoryKind::kDevice);
  s.Memcpy("cudaMemcpyAsync", 30, 35, 7, 40, 50, model::MemcpyKind::kHtoD, model::MemoryKind::kPinned,
           model::MemoryKind::kDevice);
  s.builder().data().memcpys[0].collective = c;
  s.Kernel("custom_kernel", 7, 60, 70, -1, c);
  model::Trace t = s.Finish();
  auto cl = Classifier::Create(ClassRules::Defaults(), t);
  ASSERT_TRUE(cl.ok());
  EXPECT_EQ(cl->Classify({model::GpuKind::kMemcpy, 0}), ActivityClass::kComm);
  EXPECT_EQ(cl->Classify({model::GpuKind::kMemcpy, 1}), ActivityClass::kMemory);
  EXPECT_EQ(cl->Classify({model::GpuKind::kKernel, 0}), ActivityClass::kComm);
  EXPECT_EQ(cl->rules()[cl->RuleOf({model::GpuKind::kKernel, 0})].match, MatchKind::kCarriesCollective);
}

}  // namespace
}  // namespace overlapscope::analyze
