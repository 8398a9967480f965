// collectives_across_ranks of the report (METRICS §6) from the cross-rank result: participants,
// stragglers, the most skewed instances and every matched instance with its per-rank figures.
#include <algorithm>

#include "report/build.h"
#include "report/build_internal.h"

namespace overlapscope::report {
namespace {

using namespace overlapscope::report::build;  // NOLINT

std::string IdentifiedNote(analyze::RankSource s) {
  switch (s) {
    case analyze::RankSource::kCollectiveRank:
      return "the rank recorded with each collective (rank in its communicator: NCCL profiler plugin or Kineto)";
    case analyze::RankSource::kProcessRank: return "the process rank (one GPU per process)";
    case analyze::RankSource::kDevice:
      return "GPU (process, device): no distinct rank is recorded, e.g. one process drives several GPUs; "
             "labelled by GPU ordinal, no rank number invented";
    case analyze::RankSource::kNone: break;
  }
  return "no collectives";
}

ParticipantRef Ref(const model::Trace& t, const analyze::CrossRankResult& x, int32_t part) {
  if (!InRange(x.participants, part)) return ParticipantRef{"?", std::nullopt, std::nullopt, std::nullopt};
  const analyze::Participant& p = x.participants[part];
  ParticipantRef r{p.label, std::nullopt, std::nullopt, std::nullopt};
  if (p.rank != model::kNone) r.rank = p.rank;
  if (p.gpu != model::kNone) r.gpu = p.gpu;
  if (InRange(t.processes(), p.process)) r.pid = t.processes()[p.process].pid;
  return r;
}

std::optional<std::string> LastLabel(const analyze::CrossRankResult& x, int32_t last) {
  if (!InRange(x.participants, last)) return std::nullopt;
  return x.participants[last].label;
}

void PluginFields(const model::Trace& t, const analyze::CollectiveInstance& ci, report::Instance& j) {
  // Plugin fields: the first participant that has them (ranks normally agree).
  model::StringId algo = 0, proto = 0;
  int32_t channels = model::kNone;
  for (const analyze::CollectiveParticipant& p : ci.ranks) {
    if (!InRange(t.collectives(), p.collective)) continue;
    const model::Collective& c = t.collectives()[p.collective];
    if (algo == 0) algo = c.algorithm;
    if (proto == 0) proto = c.protocol;
    if (channels == model::kNone) channels = c.channels;
  }
  j.algorithm = NameOrNone(t, algo);
  j.protocol = NameOrNone(t, proto);
  if (channels != model::kNone) j.channels = channels;
}

// Exposed time (own − hidden) of each collective record, by CollectiveId; -1 when the overlap
// analysis has none (a collective without GPU activity).
}  // namespace

std::vector<int64_t> ExposedByCollective(const model::Trace& t, const std::vector<analyze::DeviceOverlap>& overlap) {
  std::vector<int64_t> v(t.collectives().size(), -1);
  for (const analyze::DeviceOverlap& o : overlap)
    for (const analyze::CollectiveOverlap& c : o.collectives)
      if (InRange(v, c.collective)) v[c.collective] = std::max<int64_t>(v[c.collective], 0) + c.own_ns - c.hidden_ns;
  return v;
}

namespace {

report::Instance InstanceOf(const model::Trace& t, const analyze::CrossRankResult& x,
                            const analyze::CollectiveInstance& ci, const std::vector<int64_t>& exposed, int64_t index) {
  report::Instance j;
  j.index = index;
  j.op = Str(t, ci.op);
  j.communicator = Str(t, ci.communicator);
  j.sequence = IntOrNone(ci.sequence);
  if (!ci.by_sequence) j.order = ci.ordinal + 1;
  const model::Collective* c0 = !ci.ranks.empty() && InRange(t.collectives(), ci.ranks.front().collective)
                                    ? &t.collectives()[ci.ranks.front().collective]
                                    : nullptr;
  if (c0 != nullptr) {
    j.dtype = NameOrNone(t, c0->dtype);
    j.in_elements = IntOrNone(c0->in_elements);
    j.out_elements = IntOrNone(c0->out_elements);
    j.bytes = IntOrNone(c0->bytes);
    if (c0->nranks > 0) j.nranks = c0->nranks;
    // NVTX payload fields (own captures): the root or peer of the first participant, the reduction.
    if (c0->root_or_peer != model::kNone) j.root_or_peer = c0->root_or_peer;
    j.reduce_op = NameOrNone(t, c0->reduce_op);
  }
  j.size_bytes = IntOrNone(ci.size_bytes);
  PluginFields(t, ci, j);
  j.first_start_ns = ci.first_start_ns;
  j.skew_ns = ci.skew_ns;
  j.last = LastLabel(x, ci.last);
  j.last_rank = ci.last_rank;
  j.bus_time_ns = ci.bus_time_ns;
  j.algbw_gbps = ci.algbw_gbps;
  j.busbw_gbps = ci.busbw_gbps;
  for (const analyze::CollectiveParticipant& p : ci.ranks) {
    InstanceRank r;
    r.ref = Ref(t, x, p.participant);
    r.start_ns = p.start_ns;
    r.arrival_ns = p.arrival_ns;
    r.arrival_source = std::string(analyze::ToString(p.arrival_source));
    r.end_ns = p.end_ns;
    r.wait_ns = p.wait_ns;
    if (InRange(t.collectives(), p.collective)) {
      const model::Collective& c = t.collectives()[p.collective];
      if (c.rank != model::kNone) r.comm_rank = c.rank;
      r.stream = NativeStream(t, c.stream);
      if (c.channels != model::kNone) r.channels = c.channels;
      r.channel_span_ns = IntOrNone(c.channel_span_ns);
    }
    if (InRange(exposed, p.collective) && exposed[p.collective] >= 0) r.exposed_ns = exposed[p.collective];
    j.ranks.push_back(std::move(r));
  }
  return j;
}

}  // namespace

CrossRank BuildCrossRank(const model::Trace& t, const analyze::CrossRankResult& x,
                         const std::vector<analyze::DeviceOverlap>& overlap, int64_t top_n) {
  return BuildCrossRank(t, x, ExposedByCollective(t, overlap), top_n);
}

Instance BuildInstance(const model::Trace& t, const analyze::CrossRankResult& x, const std::vector<int64_t>& exposed,
                       size_t k) {
  return InstanceOf(t, x, x.instances[k], exposed, static_cast<int64_t>(k + 1));
}

CrossRank BuildCrossRank(const model::Trace& t, const analyze::CrossRankResult& x, const std::vector<int64_t>& exposed,
                         int64_t top_n, bool instances) {
  CrossRank xr;
  xr.matched_instances = static_cast<int64_t>(x.instances.size());
  xr.matched_by = x.matched_by_sequence                                            ? "sequence"
                  : x.matched_by_order == static_cast<int64_t>(x.instances.size()) ? "order"
                                                                                   : "sequence and order";
  xr.matched_by_order = x.matched_by_order;
  xr.identified_by = std::string(analyze::ToString(x.identified_by));
  xr.identified_note = IdentifiedNote(x.identified_by);
  xr.unmatched = x.unmatched;
  xr.without_rank = x.without_rank;
  xr.duplicates = x.duplicates;
  xr.max_skew_ns = x.max_skew_ns;
  xr.total_skew_ns = x.total_skew_ns;
  xr.arrival_fallbacks = x.arrival_fallbacks;
  for (size_t k = 0; k < x.participants.size(); ++k) {
    report::Participant p{Ref(t, x, static_cast<int32_t>(k)), std::nullopt};
    const model::ProcessId proc = x.participants[k].process;
    if (InRange(t.processes(), proc)) p.host = NameOrNone(t, t.processes()[proc].host);
    xr.participants.push_back(std::move(p));
  }
  for (const analyze::RankStraggling& rs : x.ranks)
    xr.ranks.push_back({Ref(t, x, rs.participant), rs.times_last, rs.others_wait_ns, rs.own_wait_ns});
  std::vector<const analyze::CollectiveInstance*> inst;
  for (const analyze::CollectiveInstance& ci : x.instances) inst.push_back(&ci);
  std::stable_sort(inst.begin(), inst.end(),
                   [](const analyze::CollectiveInstance* a, const analyze::CollectiveInstance* b) {
                     return a->skew_ns > b->skew_ns;
                   });
  for (size_t k = 0; k < inst.size() && k < static_cast<size_t>(std::max<int64_t>(0, top_n)); ++k) {
    const analyze::CollectiveInstance& ci = *inst[k];
    xr.top_skew.push_back({Str(t, ci.op), Str(t, ci.communicator), ci.sequence, ci.first_start_ns, ci.skew_ns,
                           ci.last_rank, LastLabel(x, ci.last), ci.bus_time_ns, ci.size_bytes, ci.algbw_gbps,
                           ci.busbw_gbps});
  }
  for (size_t k = 0; instances && k < x.instances.size(); ++k) xr.instances.push_back(BuildInstance(t, x, exposed, k));
  return xr;
}

}  // namespace overlapscope::report
