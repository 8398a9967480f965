#include "analyze/graph/device_sms.h"

#include <string_view>

namespace overlapscope::analyze::graph {

int DeviceSmCount(const model::Trace& t, model::DeviceId d) {
  if (d < 0 || d >= static_cast<model::DeviceId>(t.devices().size())) return 132;
  const std::string_view n = t.str(t.devices()[d].name);
  if (n.find("A100") != n.npos || n.find("A800") != n.npos) return 108;
  if (n.find("B200") != n.npos) return 148;
  return 132;
}

bool GridFillsDevice(const model::Trace& t, const model::Kernel& k) {
  const int64_t blocks = int64_t{k.grid.x} * k.grid.y * k.grid.z;
  return blocks > 0 && blocks >= DeviceSmCount(t, k.device);
}

}  // namespace overlapscope::analyze::graph
