// SpillEncoder: framing of spill records (layout in spill_records.h).
#include <algorithm>
#include <cstring>

#include "formats/block_framing.h"
#include "formats/spill_records.h"

namespace overlapscope::formats {

void SpillEncoder::AppendFileHeader(std::string* out) {
  out->append(kSpillMagic, sizeof(kSpillMagic));
  const uint32_t words[2] = {kSpillVersion, 0};
  out->append(reinterpret_cast<const char*>(words), sizeof(words));
}

void SpillEncoder::AppendRaw(std::string* out, SpillType type, const void* a, size_t na, const void* b, size_t nb) {
  char header[kSpillRecordHeaderBytes] = {static_cast<char>(type), 0, 0, 0};
  const uint32_t n = static_cast<uint32_t>(na + nb);
  std::memcpy(header + 4, &n, sizeof(n));
  out->append(header, sizeof(header));
  if (na) out->append(static_cast<const char*>(a), na);
  if (nb) out->append(static_cast<const char*>(b), nb);
}

void SpillEncoder::AppendString(std::string* out, uint32_t id, std::string_view s) {
  // Longer strings are cut (kernel names of deeply nested templates can be huge); the cut is
  // visible as a trailing "...".
  constexpr size_t kMax = 1 << 16;
  std::string cut;
  if (s.size() > kMax) {
    cut = std::string(s.substr(0, kMax)) + "...";
    s = cut;
  }
  AppendRaw(out, SpillType::kString, &id, sizeof(id), s.data(), s.size());
}

std::string SpillEncoder::Frame(std::string_view file, uint32_t version, bool block_per_record) {
  if (file.size() < kSpillFileHeaderBytes) return std::string(file);
  std::string out(file.substr(0, kSpillFileHeaderBytes));
  std::memcpy(out.data() + 8, &version, sizeof(version));
  std::string_view records = file.substr(kSpillFileHeaderBytes);
  if (version < 2) return out.append(records);
  auto seal = [&out](std::string_view payload) {
    char h[kBlockHeaderBytes];
    SealBlock(payload.data(), static_cast<uint32_t>(payload.size()), h);
    out.append(h, sizeof(h)).append(payload);
  };
  if (!block_per_record) {
    if (!records.empty()) seal(records);
    return out;
  }
  while (records.size() >= kSpillRecordHeaderBytes) {
    uint32_t n;
    std::memcpy(&n, records.data() + 4, sizeof(n));
    const size_t len = std::min<size_t>(records.size(), kSpillRecordHeaderBytes + size_t{n});
    seal(records.substr(0, len));
    records.remove_prefix(len);
  }
  if (!records.empty()) seal(records);
  return out;
}

}  // namespace overlapscope::formats
