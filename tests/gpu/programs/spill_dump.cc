// spill_dump FILE.ovspill...: prints the captured kernels, copies, syncs and NVTX ranges as
// tab-separated lines (for scripts that compare a capture with another profiler's trace).
//   K <name> <start_ns> <end_ns> <device> <stream>
//   M <name> <bytes> <start_ns> <end_ns> <async>
//   Z <name> <bytes> <start_ns> <end_ns>            (memsets)
//   A <name> <driver 0|1> <start_ns> <end_ns>        (API calls)
//   W <pid> <index> <trigger> <name> <start_ns> <end_ns>   (capture windows)
//   S <kind> <start_ns> <end_ns>
//   R <domain> <name> <start_ns> <end_ns>
//   C <op> <communicator> <rank> <nranks> <sequence> <bytes> <dtype> <algorithm> <protocol> <channels>
//     <channel_span_ns> <start_ns> <end_ns>   (NCCL plugin fields when nccl.<pid>.ovnccl was merged)
#include <cstdio>
#include <string>
#include <vector>

#include "importers/ovspill/spill_reader.h"

int main(int argc, char** argv) {
  using namespace overlapscope;
  std::vector<std::string> files(argv + 1, argv + argc);
  auto t = import::ReadSpillFiles(files);
  if (!t.ok()) {
    std::fprintf(stderr, "spill_dump: %s\n", std::string(t.status().message()).c_str());
    return 2;
  }
  for (const auto& k : t->kernels())
    std::printf("K\t%s\t%lld\t%lld\t%d\t%lld\n", std::string(t->str(k.name)).c_str(), (long long)k.start_ns,
                (long long)k.end_ns, t->devices()[k.device].ordinal, (long long)t->streams()[k.stream].native_id);
  for (const auto& m : t->memcpys())
    std::printf("M\t%s\t%lld\t%lld\t%lld\t%d\n", std::string(t->str(m.name)).c_str(), (long long)m.bytes,
                (long long)m.start_ns, (long long)m.end_ns, m.is_async);
  for (const auto& m : t->memsets())
    std::printf("Z\t%s\t%lld\t%lld\t%lld\n", std::string(t->str(m.name)).c_str(), (long long)m.bytes,
                (long long)m.start_ns, (long long)m.end_ns);
  for (const auto& a : t->api_calls())
    std::printf("A\t%s\t%d\t%lld\t%lld\n", std::string(t->str(a.name)).c_str(), a.kind == model::ApiKind::kDriver,
                (long long)a.start_ns, (long long)a.end_ns);
  for (const auto& w : t->windows())
    std::printf("W\t%lld\t%d\t%s\t%s\t%lld\t%lld\n", (long long)t->processes()[w.process].pid, w.index,
                std::string(model::ToString(w.trigger)).c_str(), std::string(t->str(w.name)).c_str(),
                (long long)w.start_ns, (long long)w.end_ns);
  for (const auto& s : t->syncs())
    std::printf("S\t%s\t%lld\t%lld\n", std::string(model::ToString(s.kind)).c_str(), (long long)s.start_ns,
                (long long)s.end_ns);
  for (const auto& r : t->ranges())
    std::printf("R\t%s\t%s\t%lld\t%lld\n", std::string(t->str(r.domain)).c_str(), std::string(t->str(r.name)).c_str(),
                (long long)r.start_ns, (long long)r.end_ns);
  for (const auto& c : t->collectives())
    std::printf("C\t%s\t%s\t%d\t%d\t%lld\t%lld\t%s\t%s\t%s\t%d\t%lld\t%lld\t%lld\n", std::string(t->str(c.op)).c_str(),
                std::string(t->str(c.communicator)).c_str(), c.rank, c.nranks, (long long)c.sequence,
                (long long)c.bytes, std::string(t->str(c.dtype)).c_str(), std::string(t->str(c.algorithm)).c_str(),
                std::string(t->str(c.protocol)).c_str(), c.channels, (long long)c.channel_span_ns,
                (long long)c.start_ns, (long long)c.end_ns);
  for (const auto& s : t->sources())
    std::fprintf(stderr, "spill_dump: %s: records %lld kept %lld skipped %lld dropped %lld\n", s.path.c_str(),
                 (long long)s.events_read, (long long)s.events_kept, (long long)s.skipped(),
                 (long long)s.Count(overlapscope::model::Stat::kCuptiDroppedRecords));
  return 0;
}
