#include "exporters/perfetto_interner.h"

#include "absl/strings/str_cat.h"
#include "exporters/perfetto_fields.h"
#include "exporters/perfetto_layout.h"
#include "exporters/proto_writer.h"

namespace overlapscope::exporters {

PerfettoInterner::PerfettoInterner(const model::Trace& t, uint64_t first_ann_iid, uint64_t first_category_iid)
    : t_(t),
      name_emitted_(t.strings().size(), false),
      value_emitted_(t.strings().size(), false),
      next_name_(t.strings().size() + 1),
      next_value_(t.strings().size() + 1),
      next_ann_(first_ann_iid),
      next_category_(first_category_iid) {}

void PerfettoInterner::Append(uint32_t field, uint64_t iid, std::string_view name) {
  // EventCategory, EventName, DebugAnnotationName and InternedString all are {iid = 1, name = 2}.
  ProtoWriter w(&pending_);
  const size_t m = w.BeginNested(field);
  w.Varint(pf::interned::kIid, iid);
  w.Bytes(pf::interned::kName, name);
  w.EndNested(m);
}

void PerfettoInterner::DefineModel(uint32_t field, model::StringId id, std::vector<bool>& emitted) {
  emitted[id] = true;
  Append(field, static_cast<uint64_t>(id) + 1, t_.str(id));
}

uint64_t PerfettoInterner::Extra(uint32_t field, absl::flat_hash_map<std::string, uint64_t>& map, uint64_t& next,
                                 std::string_view s) {
  auto [it, inserted] = map.try_emplace(AV(s), next);
  if (inserted) {
    ++next;
    Append(field, it->second, s);
  }
  return it->second;
}

uint64_t PerfettoInterner::DimSlow(const model::Dim3& d, DimSlot* slot) {
  auto [it, inserted] = dims_.try_emplace(std::make_tuple(d.x, d.y, d.z), 0);
  if (inserted) it->second = ExtraValue(absl::StrCat("[", d.x, ", ", d.y, ", ", d.z, "]"));
  *slot = DimSlot{d.x, d.y, d.z, it->second};
  return it->second;
}

}  // namespace overlapscope::exporters
