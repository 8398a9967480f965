// Test-side decoder of the .pftrace files our writer produces: resolves interning, checks the
// sequence rules trace_processor applies, and replays BEGIN/END per track exactly as
// trace_processor does (an END closes the innermost open slice on its track, whatever its
// name), so tests compare what a viewer would show against the model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace overlapscope::testing {

struct PfTrack {
  uint64_t uuid = 0, parent = 0;
  std::string name;
  enum Kind { kProcess, kThread, kPlain, kCounter } kind = kPlain;
  int64_t pid = 0, tid = 0;
};

struct PfEvent {
  uint64_t ts = 0;
  uint32_t type = 0;  // 1 begin, 2 end, 3 instant, 4 counter
  uint64_t track = 0;
  std::string name, category;
  std::map<std::string, std::string> args;  // values rendered as text
  std::vector<uint64_t> flows, terminating_flows;
  double counter = 0;
  bool uses_interning = false;  // references an interned id
};

// A slice as trace_processor would build it from the BEGIN/END stream.
struct PfSlice {
  uint64_t track = 0;
  uint64_t ts = 0, dur = 0;
  int depth = 0;
  std::string name, category;
  std::map<std::string, std::string> args;
  std::vector<uint64_t> flows, terminating_flows;
};

struct PfTrace {
  std::map<uint64_t, PfTrack> tracks;
  std::vector<PfEvent> events;  // in file order
  std::vector<PfSlice> slices;  // BEGIN/END replayed, in BEGIN order; instants have dur 0
  int64_t packets = 0;
};

// Fails (with the reason) on malformed protobuf, a packet without trusted_packet_sequence_id,
// an event before the incremental-state-cleared packet, an interned id used before it was
// defined or redefined with another string, an END on a track with no open slice, timestamps
// going backwards in the file, a slice left open at the end, or a track event on an undefined
// track.
absl::StatusOr<PfTrace> DecodePftrace(std::string_view data);

}  // namespace overlapscope::testing
