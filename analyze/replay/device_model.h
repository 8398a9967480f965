// Internal to the contention model (contention.h): one GPU's kernels under a what-if, placed
// block by block — when a communication kernel gets room beside the compute kernels it meets
// (its waits for SMs), and how much slower a compute kernel runs beside the communication that
// holds SMs (its factor). Times are ns of the schedule being modelled or of the recorded one.
// Reads only; fails on nothing (a kernel without a footprint holds nothing).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyze/graph/graph.h"
#include "analyze/replay/build.h"
#include "analyze/replay/contention.h"
#include "analyze/replay/last_round.h"
#include "analyze/replay/placed.h"
#include "analyze/replay/residency.h"
#include "analyze/replay/sim.h"
#include "analyze/replay/spans.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

// A kernel's blocks as the trace records them (empty for a copy or a memset).
BlockFootprint FootprintOf(const model::Trace& t, const graph::Graph& graph, int32_t v);

// The kernel whose end released v: v's binding predecessors followed through GPU work that is
// neither compute nor communication (a memset between two GEMMs); -1 when a host call or
// nothing bound it. A collective and a compute kernel released by the same end start together.
int32_t ReleasingKernel(const NodeAttrs& a, const Schedule& s, int32_t v);

class DeviceModel {
 public:
  DeviceModel(const model::Trace& t, const graph::Graph& graph, const NodeAttrs& a, const SimGraph& g,
              const Schedule& s, const OpShapeIndex& shapes, int32_t sms)
      : t_(t), graph_(graph), a_(a), g_(g), s_(s), shapes_(shapes), sms_(sms) {}

  std::vector<placed::Placed> compute, comm, rec_comm;  // filled by the caller

  // The waits of the communication kernels for SMs (into out.waits), then their placement with
  // them. `roots`: per GPU node, whether it is the releasing kernel of a communication kernel.
  void Waits(ContentionFactors& out, const std::vector<uint8_t>& waited, const std::vector<bool>& roots);

  // Indexes the placed communication kernels (after Waits): FactorWith reads them.
  void Prepare();

  // The factor of compute kernel k (1 when its SMs are as recorded); `sd` > 0: the trace's own
  // slowdown of its name (by_trace set).
  double FactorWith(const placed::Placed& k, double sd, bool& by_trace);

 private:
  BlockFootprint Footprint(const placed::Placed& k) const {
    return FootprintOf(t_, graph_, k.v);
  }  // a compute kernel's
  static bool InsideAny(const std::vector<Span>& u, int64_t t);
  // When kernel k leaves room for communication kernel c that became ready at `ready`; *kind:
  // what a one-wave k's last tile round made of it.
  int64_t FreeAt(const placed::Placed& k, const placed::Placed& c, int64_t ready, LastRoundWait* kind) const;
  void Hold(const placed::Placed& c, HoldSteps& steps, std::vector<Span>& u) const;

  const model::Trace& t_;
  const graph::Graph& graph_;
  const NodeAttrs& a_;
  const SimGraph& g_;
  const Schedule& s_;
  const OpShapeIndex& shapes_;
  const int32_t sms_;
  std::vector<int64_t> comm_max_, rec_max_;
  std::optional<placed::MeetingCursor> pred_at_, rec_at_;  // over comm and rec_comm (Prepare())
};

}  // namespace overlapscope::analyze::replay
