// PerfettoInterner — interned ids of a .pftrace sequence (TracePacket.interned_data).
//
// Model strings get iid = StringId + 1 (no map needed); strings the writer makes (fallback
// names, "[24, 1, 1]" launch shapes, enum names, analysis names and keys) get ids after those.
// A string is defined once, in the packet that first uses it: each call that creates an id
// appends its InternedData entry to pending(), which the encoder moves into that packet.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/trace.h"

namespace overlapscope::exporters {

class PerfettoInterner {
 public:
  // Ids below first_ann_iid / first_category_iid are the caller's fixed tables.
  PerfettoInterner(const model::Trace& t, uint64_t first_ann_iid, uint64_t first_category_iid);

  uint64_t ModelName(model::StringId id) {
    if (!name_emitted_[id]) DefineModel(kEventNames, id, name_emitted_);
    return static_cast<uint64_t>(id) + 1;
  }
  uint64_t ModelValue(model::StringId id) {
    if (!value_emitted_[id]) DefineModel(kStringValues, id, value_emitted_);
    return static_cast<uint64_t>(id) + 1;
  }
  uint64_t ExtraName(std::string_view name) { return Extra(kEventNames, extra_names_, next_name_, name); }
  uint64_t ExtraValue(std::string_view v) { return Extra(kStringValues, extra_values_, next_value_, v); }
  uint64_t AnnotationName(std::string_view k) { return Extra(kAnnotationNames, ann_names_, next_ann_, k); }
  uint64_t Category(std::string_view c) { return Extra(kCategories, categories_, next_category_, c); }
  // "[x, y, z]" as an interned string value; a direct-mapped cache serves repeated shapes.
  uint64_t Dim(const model::Dim3& d) {
    DimSlot& slot = dim_cache_[(static_cast<uint32_t>(d.x) * 2654435761u ^ static_cast<uint32_t>(d.y) * 40503u ^
                                static_cast<uint32_t>(d.z)) &
                               255];
    if (slot.iid && slot.x == d.x && slot.y == d.y && slot.z == d.z) return slot.iid;
    return DimSlow(d, &slot);
  }

  // Defines an entry with a caller-chosen iid (the fixed tables of the first packet).
  void DefineFixed(uint32_t field, uint64_t iid, std::string_view name) { Append(field, iid, name); }

  std::string& pending() { return pending_; }

  // InternedData field numbers used here.
  static constexpr uint32_t kCategories = 1, kEventNames = 2, kAnnotationNames = 3, kStringValues = 29;

 private:
  struct DimSlot {
    int32_t x = 0, y = 0, z = 0;
    uint64_t iid = 0;
  };
  void Append(uint32_t field, uint64_t iid, std::string_view name);
  void DefineModel(uint32_t field, model::StringId id, std::vector<bool>& emitted);
  uint64_t Extra(uint32_t field, absl::flat_hash_map<std::string, uint64_t>& map, uint64_t& next, std::string_view s);
  uint64_t DimSlow(const model::Dim3& d, DimSlot* slot);

  const model::Trace& t_;
  std::string pending_;
  std::vector<bool> name_emitted_, value_emitted_;
  absl::flat_hash_map<std::string, uint64_t> extra_names_, extra_values_, ann_names_, categories_;
  absl::flat_hash_map<std::tuple<int32_t, int32_t, int32_t>, uint64_t> dims_;
  DimSlot dim_cache_[256];
  uint64_t next_name_, next_value_, next_ann_, next_category_;
};

}  // namespace overlapscope::exporters
