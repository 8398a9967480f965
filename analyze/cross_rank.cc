#include "analyze/cross_rank.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "base/run_all.h"
#include "model/bounds.h"

namespace overlapscope::analyze {

int64_t DtypeBytes(std::string_view dtype) {
  std::string d = absl::AsciiStrToLower(std::string(dtype));
  if (absl::StartsWith(d, "c10::")) d = d.substr(5);
  if (absl::StartsWith(d, "torch.")) d = d.substr(6);
  static const std::pair<const char*, int64_t> kSizes[] = {
      {"half", 2},    {"float16", 2}, {"bfloat16", 2}, {"bf16", 2},          {"fp16", 2},       {"float", 4},
      {"float32", 4}, {"fp32", 4},    {"int", 4},      {"int32", 4},         {"double", 8},     {"float64", 8},
      {"long", 8},    {"int64", 8},   {"byte", 1},     {"uint8", 1},         {"char", 1},       {"int8", 1},
      {"bool", 1},    {"short", 2},   {"int16", 2},    {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
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
  if (absl::StrContains(o, "allgather") || absl::StrContains(o, "reducescatter") || absl::StrContains(o, "alltoall"))
    return (n - 1) / n;
  if (absl::StrContains(o, "broadcast") || absl::StrContains(o, "reduce") || absl::StrContains(o, "send") ||
      absl::StrContains(o, "recv"))
    return 1.0;
  return std::nullopt;
}

std::string_view ToString(RankSource s) {
  switch (s) {
    case RankSource::kCollectiveRank: return "communicator-rank";
    case RankSource::kProcessRank: return "process-rank";
    case RankSource::kDevice: return "gpu";
    case RankSource::kNone: break;
  }
  return "none";
}

namespace {

void Finish(const model::Trace& t, const std::vector<Participant>& parts, CollectiveInstance& inst) {
  std::sort(inst.ranks.begin(), inst.ranks.end(),
            [](const auto& a, const auto& b) { return a.participant < b.participant; });
  int64_t max_arrival = INT64_MIN, min_arrival = INT64_MAX, min_start = INT64_MAX;
  for (const auto& p : inst.ranks) {
    if (p.arrival_ns > max_arrival) {
      max_arrival = p.arrival_ns;
      inst.last = p.participant;
    }
    min_arrival = std::min(min_arrival, p.arrival_ns);
    min_start = std::min(min_start, p.start_ns);
  }
  inst.first_start_ns = min_start;
  inst.skew_ns = max_arrival - min_arrival;
  if (inst.skew_ns == 0) inst.last = model::kNone;  // nobody waited
  inst.last_rank = inst.last == model::kNone ? model::kNone : parts[inst.last].rank;
  // Bandwidth time (METRICS §6): from the last start, not the last arrival. Once every rank has
  // arrived a collective may still wait (a copy-engine barrier, SMs held by a GEMM); counting
  // that would fold contention into the bandwidth the links achieved.
  int64_t max_start = INT64_MIN;
  for (const auto& p : inst.ranks) max_start = std::max(max_start, p.start_ns);
  inst.bus_time_ns = INT64_MAX;
  for (auto& p : inst.ranks) {
    p.wait_ns = max_arrival - p.arrival_ns;
    inst.bus_time_ns = std::min(inst.bus_time_ns, p.end_ns - max_start);
  }
  const model::Collective& c = t.collectives()[inst.ranks.front().collective];
  // Elements x element size, checked (model/bounds.h): a count beyond the bounds leaves the size
  // to the recorded bytes, never a wrapped product (2^62 float elements are not 4000 bytes).
  const int64_t elements = std::max(c.in_elements, c.out_elements);
  const int64_t from_elements = model::BytesOf(elements, DtypeBytes(t.str(c.dtype)));
  if (elements > 0 && from_elements > 0)
    inst.size_bytes = from_elements;
  else if (c.bytes > 0 && model::SizeInBounds(c.bytes))
    inst.size_bytes = c.bytes;
  int32_t n = c.nranks > 0 ? c.nranks : static_cast<int32_t>(inst.ranks.size());
  auto factor = BusBandwidthFactor(t.str(c.op), n);
  if (inst.size_bytes > 0 && inst.bus_time_ns > 0) {
    inst.algbw_gbps = static_cast<double>(inst.size_bytes) / static_cast<double>(inst.bus_time_ns);
    if (factor) inst.busbw_gbps = *inst.algbw_gbps * *factor;
  }
}

// A participant's rank in the largest communicator it took part in; kNone when unknown or
// when its records of that communicator size disagree.
struct RankVote {
  int32_t nranks = -1;
  int32_t rank = model::kNone;
  bool consistent = true;
};

// Finds the participants (process, GPU) of the trace's collectives, picks the identification
// method and labels them; `of` maps each collective to its participant (kNone: none).
void IdentifyParticipants(const model::Trace& t, CrossRankResult& r, std::vector<int32_t>& of) {
  const auto& colls = t.collectives();
  std::map<std::pair<model::ProcessId, model::DeviceId>, int32_t> index;
  std::vector<Participant> parts;
  std::vector<RankVote> votes;
  of.assign(colls.size(), model::kNone);
  for (size_t i = 0; i < colls.size(); ++i) {
    const model::Collective& c = colls[i];
    model::ProcessId p = c.process != model::kNone  ? c.process
                         : c.device != model::kNone ? t.ProcessOfDevice(c.device)
                                                    : model::kNone;
    if (p == model::kNone && c.device == model::kNone) {
      ++r.without_rank;
      continue;
    }
    auto [it, added] = index.try_emplace({p, c.device}, static_cast<int32_t>(parts.size()));
    if (added) {
      Participant x;
      x.process = p;
      x.device = c.device;
      x.gpu = c.device == model::kNone ? model::kNone : t.devices()[c.device].ordinal;
      parts.push_back(x);
      votes.emplace_back();
    }
    of[i] = it->second;
    if (c.rank < 0) continue;
    RankVote& v = votes[it->second];
    int32_t n = std::max(c.nranks, 0);
    if (n > v.nranks)
      v = RankVote{n, c.rank, true};
    else if (n == v.nranks && c.rank != v.rank)
      v.consistent = false;
  }
  auto distinct_known = [&](auto rank_of) {
    std::vector<int32_t> ranks;
    for (size_t k = 0; k < parts.size(); ++k) ranks.push_back(rank_of(k));
    std::sort(ranks.begin(), ranks.end());
    return !ranks.empty() && ranks.front() >= 0 && std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end();
  };
  auto coll_rank = [&](size_t k) { return votes[k].consistent ? votes[k].rank : model::kNone; };
  auto proc_rank = [&](size_t k) {
    return parts[k].process == model::kNone ? model::kNone : t.processes()[parts[k].process].rank;
  };
  if (distinct_known(coll_rank)) {
    r.identified_by = RankSource::kCollectiveRank;
    for (size_t k = 0; k < parts.size(); ++k) parts[k].rank = coll_rank(k);
  } else if (distinct_known(proc_rank)) {
    r.identified_by = RankSource::kProcessRank;
    for (size_t k = 0; k < parts.size(); ++k) parts[k].rank = proc_rank(k);
  } else if (!parts.empty()) {
    r.identified_by = RankSource::kDevice;
  }
  // Order: rank, then process, then GPU ordinal; remap the collectives' participant ids.
  std::vector<int32_t> order(parts.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int32_t>(k);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return std::tie(parts[a].rank, parts[a].process, parts[a].gpu, parts[a].device) <
           std::tie(parts[b].rank, parts[b].process, parts[b].gpu, parts[b].device);
  });
  std::vector<int32_t> new_id(parts.size());
  std::map<int32_t, int> gpu_count;
  for (const Participant& x : parts) ++gpu_count[x.gpu];
  for (size_t k = 0; k < order.size(); ++k) {
    Participant x = parts[order[k]];
    new_id[order[k]] = static_cast<int32_t>(k);
    int64_t pid = x.process == model::kNone ? -1 : t.processes()[x.process].pid;
    if (x.rank != model::kNone)
      x.label = "rank " + std::to_string(x.rank);
    else if (x.gpu == model::kNone)
      x.label = "pid " + std::to_string(pid);
    else if (gpu_count[x.gpu] == 1)
      x.label = "GPU " + std::to_string(x.gpu);
    else
      x.label = "pid " + std::to_string(pid) + " GPU " + std::to_string(x.gpu);
    r.participants.push_back(std::move(x));
  }
  for (int32_t& p : of)
    if (p != model::kNone) p = new_id[p];
}

}  // namespace

std::vector<CollectiveArrival> CollectiveArrivals(const model::Trace& t) {
  const ArrivalEstimator est(t);
  std::vector<CollectiveArrival> out;
  out.reserve(t.collectives().size());
  for (size_t i = 0; i < t.collectives().size(); ++i) out.push_back(est.Of(static_cast<model::CollectiveId>(i)));
  return out;
}

CrossRankResult AnalyzeCrossRank(const model::Trace& t, const std::vector<CollectiveArrival>* given, int threads) {
  CrossRankResult r;
  const auto& colls = t.collectives();
  std::vector<int32_t> part_of;
  IdentifyParticipants(t, r, part_of);
  // Per (communicator, op): do all its collectives carry a sequence number?
  std::map<std::pair<model::StringId, model::StringId>, bool> group_has_seq;
  for (size_t i = 0; i < colls.size(); ++i) {
    if (part_of[i] == model::kNone) continue;
    auto [it, inserted] = group_has_seq.try_emplace({colls[i].communicator, colls[i].op}, true);
    it->second = it->second && colls[i].sequence >= 0;
  }

  // Key -> participants. Collectives are sorted by start, so the order of occurrence on each
  // participant is the order in which they are visited here.
  using Key = std::tuple<model::StringId, model::StringId, int64_t>;  // comm, op, seq or ordinal
  std::map<Key, CollectiveInstance> by_key;
  std::map<std::tuple<int32_t, model::StringId, model::StringId>, int64_t> next_ordinal;
  // Without given arrivals, each matched collective's is estimated (the estimator only reads):
  // in ranges at once.
  // With fewer than two participants no instance can get two ranks (a participant's second
  // record of one instance is a duplicate), so no arrival is ever read: none is estimated (the
  // estimator's indexes of every stream's activities cost most of this step on one-rank traces).
  std::vector<CollectiveArrival> estimated;
  const bool can_match = r.participants.size() >= 2;
  if (can_match && (given == nullptr || given->size() != colls.size())) {
    const ArrivalEstimator estimator(t);
    estimated.resize(colls.size());
    base::ParallelFor(threads, colls.size(), 64, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i)
        if (part_of[i] != model::kNone) estimated[i] = estimator.Of(static_cast<model::CollectiveId>(i));
    });
    given = &estimated;
  }
  for (size_t i = 0; i < colls.size(); ++i) {
    const model::Collective& c = colls[i];
    const int32_t part = part_of[i];
    if (part == model::kNone) continue;
    Key key;
    int64_t ordinal = 0;
    const bool by_seq = group_has_seq[{c.communicator, c.op}];
    if (by_seq) {
      key = {c.communicator, c.op, c.sequence};
    } else {
      ordinal = next_ordinal[{part, c.communicator, c.op}]++;
      key = {c.communicator, c.op, ordinal};
    }
    CollectiveInstance& inst = by_key[key];
    bool dup = false;
    for (const CollectiveParticipant& q : inst.ranks) dup |= q.participant == part;
    if (dup) {  // the same instance twice on one GPU: a duplicated record, not a peer
      ++r.duplicates;
      continue;
    }
    inst.communicator = c.communicator;
    inst.op = c.op;
    inst.sequence = c.sequence;
    inst.ordinal = ordinal;
    inst.by_sequence = by_seq;
    const CollectiveArrival a = can_match ? (*given)[i] : CollectiveArrival{};
    inst.ranks.push_back({static_cast<model::CollectiveId>(i), r.participants[part].rank, c.start_ns, c.end_ns, 0, part,
                          std::min(a.arrival_ns, c.start_ns), a.source});
  }

  std::map<int32_t, RankStraggling> stragglers;
  for (auto& [key, inst] : by_key) {
    if (inst.ranks.size() < 2) {
      ++r.unmatched;
      continue;
    }
    Finish(t, r.participants, inst);
    if (!inst.by_sequence) ++r.matched_by_order;
    r.max_skew_ns = std::max(r.max_skew_ns, inst.skew_ns);
    r.total_skew_ns = model::SatAdd(r.total_skew_ns, inst.skew_ns);
    for (const auto& p : inst.ranks) {
      if (IsFallback(p.arrival_source)) ++r.arrival_fallbacks;
      RankStraggling& s = stragglers[p.participant];
      s.participant = p.participant;
      s.rank = p.rank;
      s.own_wait_ns = model::SatAdd(s.own_wait_ns, p.wait_ns);
      if (p.participant == inst.last) {
        ++s.times_last;
        for (const auto& q : inst.ranks) s.others_wait_ns = model::SatAdd(s.others_wait_ns, q.wait_ns);
      }
    }
    r.instances.push_back(std::move(inst));
  }
  std::stable_sort(r.instances.begin(), r.instances.end(),
                   [](const auto& a, const auto& b) { return a.first_start_ns < b.first_start_ns; });
  for (auto& [part, s] : stragglers) r.ranks.push_back(s);
  r.matched_by_sequence = !r.instances.empty() && r.matched_by_order == 0;
  return r;
}

}  // namespace overlapscope::analyze
