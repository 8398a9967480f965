#include "analyze/cross_rank.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace overlapscope::analyze {

int64_t DtypeBytes(std::string_view dtype) {
  std::string d = absl::AsciiStrToLower(std::string(dtype));
  if (absl::StartsWith(d, "c10::")) d = d.substr(5);
  if (absl::StartsWith(d, "torch.")) d = d.substr(6);
  static const std::pair<const char*, int64_t> kSizes[] = {
      {"half", 2},  {"float16", 2}, {"bfloat16", 2}, {"bf16", 2},    {"fp16", 2},  {"float", 4},
      {"float32", 4}, {"fp32", 4},  {"int", 4},      {"int32", 4},   {"double", 8}, {"float64", 8},
      {"long", 8},  {"int64", 8},   {"byte", 1},     {"uint8", 1},   {"char", 1},  {"int8", 1},
      {"bool", 1},  {"short", 2},   {"int16", 2},    {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
  for (const auto& [name, bytes] : kSizes)
    if (d == name) return bytes;
  return 0;
}

std::optional<double> BusBandwidthFactor(std::string_view op, int32_t nranks) {
  if (nranks <= 0) return std::nullopt;
  std::string o = absl::AsciiStrToLower(std::string(op));
  // Kineto writes PyTorch's names ("_allgather_base", "all_to_allv", "allreduce_coalesced");
  // NCCL's own ranges say "AllGather", "AllReduce", ... Strip separators before matching.
  o.erase(std::remove_if(o.begin(), o.end(), [](char c) { return c == '_' || c == ' '; }), o.end());
  double n = nranks;
  if (absl::StrContains(o, "allreduce")) return 2.0 * (n - 1) / n;
  if (absl::StrContains(o, "allgather") || absl::StrContains(o, "reducescatter") ||
      absl::StrContains(o, "alltoall"))
    return (n - 1) / n;
  if (absl::StrContains(o, "broadcast") || absl::StrContains(o, "reduce") || absl::StrContains(o, "send") ||
      absl::StrContains(o, "recv"))
    return 1.0;
  return std::nullopt;
}

namespace {

void Finish(const model::Trace& t, CollectiveInstance& inst) {
  std::sort(inst.ranks.begin(), inst.ranks.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  int64_t max_start = INT64_MIN, min_start = INT64_MAX;
  for (const auto& p : inst.ranks) {
    if (p.start_ns > max_start) {
      max_start = p.start_ns;
      inst.last_rank = p.rank;
    }
    min_start = std::min(min_start, p.start_ns);
  }
  inst.first_start_ns = min_start;
  inst.skew_ns = max_start - min_start;
  if (inst.skew_ns == 0) inst.last_rank = model::kNone;  // nobody waited
  inst.bus_time_ns = INT64_MAX;
  for (auto& p : inst.ranks) {
    p.wait_ns = max_start - p.start_ns;
    inst.bus_time_ns = std::min(inst.bus_time_ns, p.end_ns - max_start);
  }
  const model::Collective& c = t.collectives()[inst.ranks.front().collective];
  int64_t elements = std::max(c.in_elements, c.out_elements);
  int64_t es = DtypeBytes(t.str(c.dtype));
  if (elements > 0 && es > 0) inst.size_bytes = elements * es;
  int32_t n = c.nranks > 0 ? c.nranks : static_cast<int32_t>(inst.ranks.size());
  auto factor = BusBandwidthFactor(t.str(c.op), n);
  if (inst.size_bytes > 0 && inst.bus_time_ns > 0) {
    inst.algbw_gbps = static_cast<double>(inst.size_bytes) / static_cast<double>(inst.bus_time_ns);
    if (factor) inst.busbw_gbps = *inst.algbw_gbps * *factor;
  }
}

}  // namespace

CrossRankResult AnalyzeCrossRank(const model::Trace& t) {
  CrossRankResult r;
  const auto& colls = t.collectives();
  bool all_have_seq = !colls.empty();
  for (const auto& c : colls) all_have_seq = all_have_seq && c.sequence >= 0;
  r.matched_by_sequence = all_have_seq;

  // Key -> per-rank participants. Collectives are sorted by start, so the order of occurrence
  // on each rank is the order in which they are visited here.
  using Key = std::tuple<model::StringId, model::StringId, int64_t>;  // comm, op (or 0), seq/ordinal
  std::map<Key, CollectiveInstance> by_key;
  std::map<std::tuple<int32_t, model::StringId, model::StringId>, int64_t> next_ordinal;
  for (size_t i = 0; i < colls.size(); ++i) {
    const model::Collective& c = colls[i];
    int32_t rank = c.process == model::kNone ? model::kNone : t.processes()[c.process].rank;
    if (rank == model::kNone) {
      ++r.without_rank;
      continue;
    }
    Key key;
    int64_t ordinal = 0;
    if (all_have_seq) {
      key = {c.communicator, 0, c.sequence};
    } else {
      ordinal = next_ordinal[{rank, c.communicator, c.op}]++;
      key = {c.communicator, c.op, ordinal};
    }
    CollectiveInstance& inst = by_key[key];
    inst.communicator = c.communicator;
    inst.op = c.op;
    inst.sequence = c.sequence;
    inst.ordinal = ordinal;
    inst.ranks.push_back({static_cast<model::CollectiveId>(i), rank, c.start_ns, c.end_ns, 0});
  }

  std::map<int32_t, RankStraggling> stragglers;
  for (auto& [key, inst] : by_key) {
    if (inst.ranks.size() < 2) {
      ++r.unmatched;
      continue;
    }
    Finish(t, inst);
    r.max_skew_ns = std::max(r.max_skew_ns, inst.skew_ns);
    r.total_skew_ns += inst.skew_ns;
    for (const auto& p : inst.ranks) {
      RankStraggling& s = stragglers[p.rank];
      s.rank = p.rank;
      s.own_wait_ns += p.wait_ns;
      if (p.rank == inst.last_rank) {
        ++s.times_last;
        for (const auto& q : inst.ranks) s.others_wait_ns += q.wait_ns;
      }
    }
    r.instances.push_back(std::move(inst));
  }
  std::sort(r.instances.begin(), r.instances.end(), [](const auto& a, const auto& b) {
    return a.first_start_ns < b.first_start_ns;
  });
  for (auto& [rank, s] : stragglers) r.ranks.push_back(s);
  return r;
}

}  // namespace overlapscope::analyze
