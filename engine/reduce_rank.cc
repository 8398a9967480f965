// One rank's reduction and the gathering of the compact collective records (engine/reduce.h).
#include <algorithm>
#include <numeric>
#include <utility>

#include "analyze/cross_rank.h"
#include "base/status_macros.h"
#include "engine/reduce_internal.h"
#include "importers/import_any.h"
#include "importers/kineto/import.h"
#include "model/trace_builder.h"
#include "report/shift_times.h"

namespace overlapscope::engine::reduce {
namespace {

std::string Str(const model::Trace& t, model::StringId id) {
  return id >= 0 && static_cast<size_t>(id) < t.strings().size() ? std::string(t.str(id)) : std::string();
}

// The rank's process (its trace has exactly one: one file), devices, streams and collectives.
CompactRank Compact(const model::Trace& t, const analyze::AnalysisResult& res) {
  CompactRank r;
  if (!t.processes().empty()) {
    r.process = t.processes().front();
    r.name = Str(t, r.process.name);
    r.host = Str(t, r.process.host);
    r.source = Str(t, r.process.source);
  }
  for (const model::Device& d : t.devices()) r.devices.push_back({d.ordinal, Str(t, d.name)});
  for (const model::Stream& s : t.streams()) r.streams.push_back({s.device, s.native_id, Str(t, s.name)});
  const std::vector<analyze::CollectiveArrival> arrivals = analyze::CollectiveArrivals(t);
  const std::vector<int64_t> exposed = report::ExposedByCollective(t, res.overlap);
  r.collectives.reserve(t.collectives().size());
  for (size_t i = 0; i < t.collectives().size(); ++i) {
    const model::Collective& c = t.collectives()[i];
    r.collectives.push_back({c, Str(t, c.op), Str(t, c.communicator), Str(t, c.dtype), Str(t, c.algorithm),
                             Str(t, c.protocol), Str(t, c.reduce_op), arrivals[i],
                             i < exposed.size() ? exposed[i] : -1});
  }
  return r;
}

}  // namespace

absl::StatusOr<RankPart> ReduceRank(const std::string& file, const analyze::AnalyzeOptions& options, int64_t top_n,
                                    int64_t shift_ns, int parser_threads,
                                    const std::function<absl::Status(const RankModel&)>& each) {
  import::ImportAnyOptions io;
  io.kineto.threads = parser_threads;
  model::FinalizeOptions finalize;
  if (shift_ns != 0)
    finalize.clock_shift = [shift_ns](const model::Trace& view) -> absl::StatusOr<model::ClockShift> {
      model::ClockShift s;
      s.process_offset_ns.assign(view.processes().size(), shift_ns);
      return s;
    };
  const std::vector<std::string> paths = {file};
  ASSIGN_OR_RETURN(model::Trace t, import::ImportAny(paths, io, finalize));
  ASSIGN_OR_RETURN(analyze::AnalysisResult r, analyze::AnalyzeAll(t, options));
  if (each) RETURN_IF_ERROR(each(RankModel{t, r}));
  RankPart part;
  report::ReportInfo info;
  info.top_n = top_n;
  part.header = report::Header(t, r, info);
  for (const analyze::RankSummary& s : r.ranks)
    part.rank = report::BuildRankReport(t, r, s, analyze::CrossRankResult{}, top_n);
  part.partial = report::BuildGlobalPartial(t, r);
  part.concurrency = report::BuildStreamConcurrency(t, r.concurrency);
  part.compact = Compact(t, r);
  for (const analyze::HtaCompat& h : r.hta_other)
    if (!r.ranks.empty() && h.process == r.ranks.back().process) part.hta_other = report::BuildHtaCompat(h);
  part.hta_step_names = r.hta_step_names;
  return part;
}

absl::StatusOr<GatheredCollectives> GatherCollectives(size_t n, const CompactLoader& load,
                                                      const std::string& base_clock_note,
                                                      const model::ClockShiftFn& shift) {
  model::TraceBuilder b;
  GatheredCollectives g;
  // Each rank's records are converted (strings interned, ids rebased) and freed before the next
  // is loaded: the records of every rank are never held twice.
  std::vector<model::Collective> all;
  for (size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(CompactRank r, load(i));
    model::Process p = r.process;
    p.name = b.Intern(r.name);
    p.host = b.Intern(r.host);
    p.source = b.Intern(r.source);
    const model::ProcessId pid = b.AddProcess(p);
    const auto device_base = static_cast<model::DeviceId>(b.data().devices.size());
    for (const auto& [ordinal, name] : r.devices) {
      model::Device d;
      d.process = pid;
      d.ordinal = ordinal;
      d.name = b.Intern(name);
      b.data().devices.push_back(d);
    }
    const auto stream_base = static_cast<model::StreamId>(b.data().streams.size());
    for (const CompactRank::Stream& s : r.streams)
      b.data().streams.push_back({s.device + device_base, s.native_id, b.Intern(s.name)});
    for (const CompactCollective& x : r.collectives) {
      model::Collective c = x.c;
      c.process = c.process == model::kNone ? model::kNone : pid;
      if (c.device != model::kNone) c.device += device_base;
      if (c.stream != model::kNone) c.stream += stream_base;
      c.op = b.Intern(x.op);
      c.communicator = b.Intern(x.communicator);
      c.dtype = b.Intern(x.dtype);
      c.algorithm = b.Intern(x.algorithm);
      c.protocol = b.Intern(x.protocol);
      c.reduce_op = b.Intern(x.reduce_op);
      all.push_back(c);
      g.arrivals.push_back(x.arrival);
      g.exposed.push_back(x.exposed_ns);
    }
  }
  RETURN_IF_ERROR(import::CheckOneFilePerRank(b));
  // The whole-model trace sorts its collectives by start, stably, from file order: the same
  // order here, so that Finalize's own stable sort keeps it and the arrivals stay parallel.
  std::vector<uint32_t> order(all.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return all[x].start_ns < all[y].start_ns; });
  std::vector<analyze::CollectiveArrival> arrivals(all.size());
  std::vector<int64_t> exposed(all.size());
  b.data().collectives.reserve(all.size());
  for (size_t k = 0; k < order.size(); ++k) {
    b.data().collectives.push_back(all[order[k]]);
    arrivals[k] = g.arrivals[order[k]];
    exposed[k] = g.exposed[order[k]];
  }
  std::vector<model::Collective>().swap(all);
  g.arrivals = std::move(arrivals);
  g.exposed = std::move(exposed);
  b.data().clock_note = base_clock_note;
  model::FinalizeOptions finalize;
  finalize.clock_shift = shift;
  ASSIGN_OR_RETURN(g.trace, std::move(b).Finalize(finalize));
  return g;
}

void ShiftPart(RankPart* part, int64_t offset_ns) {
  report::ShiftRankTimes(&part->rank, offset_ns);
  report::ShiftPartialTimes(&part->partial, offset_ns);
  ShiftCompact(&part->compact, offset_ns);
}

void ShiftCompact(CompactRank* r, int64_t offset_ns) {
  for (CompactCollective& c : r->collectives) {
    c.c.start_ns += offset_ns;
    c.c.end_ns += offset_ns;
    c.arrival.arrival_ns += offset_ns;
  }
}

bool JobHasSteps(const std::vector<std::optional<RankPart>>& parts) {
  std::vector<const std::string*> seen;
  for (const std::optional<RankPart>& p : parts)
    for (const std::string& n : p->hta_step_names) {
      if (std::none_of(seen.begin(), seen.end(), [&](const std::string* x) { return *x == n; })) seen.push_back(&n);
      if (seen.size() >= 2) return true;
    }
  return false;
}

void ChooseHtaVariant(RankPart* part, bool job_filter) {
  std::optional<report::HtaCompat>& own = part->rank.hta_compat;
  if (!own || !part->hta_other || own->step_filter == job_filter) return;
  std::swap(*own, *part->hta_other);
  part->rank.summary.hta_compat_overlap_pct = own->overlap_pct;
}

}  // namespace overlapscope::engine::reduce
