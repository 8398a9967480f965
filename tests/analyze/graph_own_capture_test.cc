// The evidence rule for cross-stream waits (analyze/graph/graph_infer.cc) against waits that are
// truly recorded: the BACKGROUND §3/§4 programs and FSDP2 (tools/torch_traces/diagnosis_traces.py
// --no-profiler) captured by `overlapscope profile` on 2 and 4 x H100
// (tools/torch_traces/own_capture_waits.sh), whose captures record the event of every
// cudaEventRecord and cudaStreamWaitEvent. torch 2.11's own cuda_sync rows name no source, so
// these captures are the reference the agreement bar is measured on.
//
// Reference: the recorded graph (infer_waits = false). Inferred: the same capture with its wait
// records ignored (use_recorded_waits = false: only the calls, as torch.profiler's defaults keep
// them). A recorded wait *binds* when its source ended after the waiter was otherwise ready
// (after its stream predecessor's end and its launch call's start), judged per waiting activity
// on the source that ends last (an activity may wait for several: torch.compile's two
// all_to_alls); it *agrees* when the inferred graph has that edge. Our captures have no cpu_op ranges, so the
// call-order rule applies here only where the waiter started inside a later activity of the
// source's stream; other non-binding waits stay unplaced and are counted apart.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyze/graph/graph.h"
#include "gtest/gtest.h"
#include "importers/import_any.h"
#include "zlib.h"

namespace overlapscope::analyze::graph {
namespace {

namespace fs = std::filesystem;

// Gunzips DIR/rank<R>.ovspill.gz (the ranks; not the launcher's pid*.ovspill.gz nor the compile
// workers' rank<R>.pid<P>.ovspill.gz) and copies the NCCL plugin files next to them.
std::vector<std::string> Unpack(const std::string& dir, const std::string& to) {
  fs::create_directories(to);
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("nccl.", 0) == 0) fs::copy_file(e.path(), to + "/" + name, fs::copy_options::overwrite_existing);
    if (name.rfind("rank", 0) != 0 || name.find(".pid") != std::string::npos || name.size() < 11 ||
        name.substr(name.size() - 11) != ".ovspill.gz")
      continue;
    const std::string dest = to + "/" + name.substr(0, name.size() - 3);
    gzFile in = gzopen(e.path().c_str(), "rb");
    std::ofstream o(dest, std::ios::binary);
    char buf[1 << 16];
    int n;
    while (in != nullptr && (n = gzread(in, buf, sizeof(buf))) > 0) o.write(buf, n);
    if (in != nullptr) gzclose(in);
    out.push_back(dest);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Agreement {
  int recorded = 0, binding = 0, agree = 0, other = 0, none = 0, nonbinding = 0, nonbinding_agree = 0;
  // Of the binding ones, those whose waiter started within the evidence bound after the source
  // ended (max(20 us, the stream's launch latency)): the wait is what released it. The others
  // started later for another reason (a GEMM holding every SM keeps an NCCL kernel out).
  int at_release = 0, at_release_agree = 0;
  int inferred = 0, inferred_wrong = 0;  // inferred edges; those the recorded graph does not have
};

bool HasWait(const Graph& g, NodeId from, NodeId to) {
  for (const Edge& e : g.Preds(to))
    if (e.kind == EdgeKind::kEventWait && e.from == from) return true;
  return false;
}

Agreement Measure(const std::string& rel) {
  Agreement a;
  const std::string src = std::string(OVERLAPSCOPE_TEST_DATA) + "/" + rel;
  const std::string tmp =
      (fs::temp_directory_path() / ("ovs_own_capture_" + std::to_string(::getpid()))).string() + "/" + rel;
  const std::vector<std::string> files = Unpack(src, tmp);
  EXPECT_FALSE(files.empty()) << rel;
  auto t = import::ImportAny(files);
  EXPECT_TRUE(t.ok()) << rel << ": " << t.status();
  if (!t.ok()) return a;
  GraphInputs rec_in, inf_in;
  rec_in.infer_waits = false;
  inf_in.use_recorded_waits = false;
  const Graph rec = BuildGraph(*t, rec_in), inf = BuildGraph(*t, inf_in);
  // Per waiting activity: of its recorded sources the one that ends last is what held it.
  std::vector<NodeId> last(rec.num_gpu(), model::kNone);
  for (const WaitEdge& w : rec.waits()) {
    ++a.recorded;
    if (last[w.to] == model::kNone || rec.EndNs(w.from) > rec.EndNs(last[w.to])) last[w.to] = w.from;
  }
  for (NodeId x = 0; x < rec.num_gpu(); ++x) {
    const NodeId b = last[x];
    if (b == model::kNone) continue;
    int64_t ready = x > rec.StreamBegin(rec.Stream(x)) ? rec.EndNs(x - 1) : INT64_MIN;
    if (const int32_t l = t->LaunchOf(rec.Ref(x)); l != model::kNone)
      ready = std::max(ready, t->api_calls()[l].start_ns);
    const bool same = HasWait(inf, b, x);
    bool any = false;
    for (const Edge& e : inf.Preds(x)) any |= e.kind == EdgeKind::kEventWait;
    if (rec.EndNs(b) > ready) {
      if (rec.StartNs(x) - rec.EndNs(b) <= std::max<int64_t>(20'000, inf.LaunchLatencyNs(rec.Stream(x))))
        ++a.at_release, a.at_release_agree += same;
      ++a.binding;
      a.agree += same;
      a.other += !same && any;
      a.none += !any;
      if (std::getenv("OWN_DEBUG") != nullptr && !same) {
        auto nm = [&](NodeId n) { return std::string(t->str(t->kernels()[rec.Ref(n).index].name)).substr(0, 30); };
        const int32_t l = t->LaunchOf(rec.Ref(x));
        std::printf("  X %s s%d start %lld | prev end %+lld launch %+lld lat %lld | B %s s%d end %+lld\n",
                    nm(x).c_str(), rec.Stream(x), (long long)rec.StartNs(x),
                    x > rec.StreamBegin(rec.Stream(x)) ? (long long)(rec.EndNs(x - 1) - rec.StartNs(x)) : 0LL,
                    l != model::kNone ? (long long)(t->api_calls()[l].start_ns - rec.StartNs(x)) : 0LL,
                    (long long)inf.LaunchLatencyNs(rec.Stream(x)), nm(b).c_str(), rec.Stream(b),
                    (long long)(rec.EndNs(b) - rec.StartNs(x)));
      }
    } else {
      ++a.nonbinding;
      a.nonbinding_agree += same;
    }
  }
  for (const WaitEdge& w : inf.waits()) {
    ++a.inferred;
    a.inferred_wrong += !HasWait(rec, w.from, w.to);
  }
  std::printf(
      "%-32s recorded %4d | binding %4d: agree %4d, other source %d, none %d; at release %d: agree %d | "
      "non-binding %4d: agree %d | "
      "inferred %4d, not recorded %d | ambiguous %lld unresolved %lld not delayed %lld\n",
      rel.c_str(), a.recorded, a.binding, a.agree, a.other, a.none, a.at_release, a.at_release_agree, a.nonbinding,
      a.nonbinding_agree, a.inferred, a.inferred_wrong, static_cast<long long>(inf.stats().waits_ambiguous),
      static_cast<long long>(inf.stats().waits_unresolved), static_cast<long long>(inf.stats().waits_not_delayed));
  fs::remove_all(tmp);
  return a;
}

double Share(int num, int den) { return den == 0 ? 1.0 : static_cast<double>(num) / den; }

// The bar (>= 95 % of the cross-stream waits) on the matmul + all-gather pair and the
// BACKGROUND §4 programs: of the binding waits, the inferred graph has the recorded edge, and it
// never invents one there. On mm_ag_overlap a quarter to a third of them (w4 3 of 12, w2 2 of 6)
// are all-gather kernels that started 1.35 ms after their recorded source ended, inside the next
// GEMM of the source's stream (it held every SM): no timing names them; the host's call order does
// (graph_infer.cc, HeldByLaterOnStream). Non-binding waits (the waiter was ready later anyway) are
// placed only where the call order can (none to a third here) and never wrongly. FSDP2 (4 streams
// per device: the sources are ambiguous more often) is judged on the waits released at once, with
// a looser floor.
TEST(GraphOwnCaptures, InferredAgreesWithRecordedWaits) {
  int judged = 0;
  for (const char* w : {"w4", "w2"})
    for (const char* s : {"mm_ag_overlap", "dtensor_a2a_eager", "dtensor_a2a_compiled", "fsdp2"}) {
      const std::string rel = std::string("torch_own/") + w + "/" + s;
      if (!fs::exists(std::string(OVERLAPSCOPE_TEST_DATA) + "/" + rel)) continue;
      ++judged;
      const Agreement a = Measure(rel);
      EXPECT_GT(a.recorded, 0) << rel;
      EXPECT_GT(a.at_release, 0) << rel;
      const double floor = std::string(s) == "fsdp2" ? 0.80 : 0.95;
      EXPECT_GE(Share(a.at_release_agree, a.at_release), floor) << rel;
      if (std::string(s) != "fsdp2") {
        EXPECT_GE(Share(a.agree, a.binding), 0.95) << rel;
        EXPECT_EQ(a.inferred_wrong, 0) << rel;
        EXPECT_EQ(a.other, 0) << rel;
      }
    }
  EXPECT_GT(judged, 0) << "tests/data/torch_own is missing";
}

}  // namespace
}  // namespace overlapscope::analyze::graph
