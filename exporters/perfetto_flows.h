// Flow arrows of the .pftrace: which slice starts and which one terminates each flow.
//
// Links: every kernel/memcpy/memset and sync record to the API call with its correlation id
// (same process), and every cudaStreamWaitEvent record to the GPU activity it waits for (the
// activity of the event record's correlation, else the last activity enqueued on the
// recording stream before the record); and the layout's extra_links (the critical path's arrow
// chain). A flow starts on the end trace_processor reads first:
// events are written in (timestamp, track ordinal) order, so the smaller (start, track) begins.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "exporters/perfetto_layout.h"
#include "model/trace.h"

namespace overlapscope::exporters {

struct FlowRef {
  uint64_t id = 0;  // 1, 2, ...: unique in the file (TrackEvent.flow_ids are fixed64)
  bool terminating = false;
};

struct Flows {
  // Per Src, CSR over the items of that Src (empty when none of them has a flow).
  std::array<std::vector<uint32_t>, kSrcCount> offsets;
  std::array<std::vector<FlowRef>, kSrcCount> refs;
  int64_t count = 0;

  absl::Span<const FlowRef> Of(Src src, int32_t index) const {
    const auto& off = offsets[static_cast<int>(src)];
    if (off.empty()) return {};
    return absl::MakeConstSpan(refs[static_cast<int>(src)].data() + off[index], off[index + 1] - off[index]);
  }
};

// Needs layout.track_of (Layout::Finish() done).
Flows BuildFlows(const model::Trace& trace, const Layout& layout);

}  // namespace overlapscope::exporters
