#include "analyze/graph_inputs.h"

namespace overlapscope::analyze {

graph::GraphInputs MakeGraphInputs(const BlockingResult& blocking, const CrossRankResult& cross_rank) {
  graph::GraphInputs in;
  for (const BlockedInterval& b : blocking.intervals) {
    if (b.api_call == model::kNone) continue;
    graph::HostRelease h;
    h.api_call = b.api_call;
    h.sync = b.sync;
    if (b.released_by)
      h.released_by = *b.released_by;
    else
      h.released_by.index = model::kNone;
    in.host_releases.push_back(h);
  }
  for (const CollectiveInstance& inst : cross_rank.instances) {
    if (inst.last == model::kNone) continue;
    model::CollectiveId last = model::kNone;
    std::vector<model::CollectiveId> parts;
    for (const CollectiveParticipant& p : inst.ranks) {
      if (p.participant == inst.last) last = p.collective;
      if (p.collective != model::kNone) parts.push_back(p.collective);
    }
    if (last == model::kNone) continue;
    in.peer_participants.push_back(std::move(parts));
    in.peer_last.push_back(last);
  }
  return in;
}

}  // namespace overlapscope::analyze
