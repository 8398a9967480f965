#include "importers/nccl/collective_range.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "importers/nccl/nccl_attribution.h"
#include "model/bounds.h"

namespace overlapscope::import {
namespace {

// Debian's Abseil has its own string_view type.
absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

template <typename Int>
bool Decimal(std::string_view s, Int* out) {
  // SimpleAtoi accepts a leading '+' and surrounding blanks; the format has neither.
  if (s.empty() || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) return false;
  return absl::SimpleAtoi(A(s), out);
}

}  // namespace

std::optional<CollectiveRangeFields> ParseCollectiveRange(std::string_view msg) {
  CollectiveRangeFields f;
  const size_t sp = msg.find(' ');
  f.op = msg.substr(0, sp);
  // The op names NCCL's API uses (the same list NCCL's ranges are recognized by), except the
  // group call, which is no collective.
  if (f.op.empty() || f.op == "GroupEnd" || NcclRangeOp(std::string("nccl").append(f.op)).empty()) return std::nullopt;
  bool has_comm = false;
  size_t pos = sp;
  while (pos != std::string_view::npos) {
    const size_t start = pos + 1;
    pos = msg.find(' ', start);
    std::string_view tok = msg.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    const size_t eq = tok.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;  // also catches double spaces
    std::string_view key = tok.substr(0, eq), value = tok.substr(eq + 1);
    bool ok = true;
    if (key == "comm") {
      // At most 16 hex digits and nothing else (SimpleHexAtoi would take a "0x" prefix).
      ok = !value.empty() && value.size() <= 16 && value.find_first_not_of("0123456789abcdefABCDEF") == value.npos &&
           absl::SimpleHexAtoi(A(value), &f.comm);
      has_comm = ok;
    } else if (key == "seq") {
      ok = Decimal(value, &f.sequence) && f.sequence >= 0;
    } else if (key == "bytes") {
      ok = Decimal(value, &f.bytes) && model::SizeInBounds(f.bytes);  // model/bounds.h
    } else if (key == "rank") {
      ok = Decimal(value, &f.rank) && f.rank >= 0;
    } else if (key == "nranks") {
      ok = Decimal(value, &f.nranks) && f.nranks >= 1;
    } else if (key == "dtype") {
      f.dtype = value;
    } else if (key == "redop") {
      f.redop = value;
    } else if (key == "impl") {
      f.impl = value;
    }
    if (!ok) return std::nullopt;
  }
  if (!has_comm || f.sequence < 0 || f.bytes < 0 || f.rank < 0 || f.nranks < 1 || f.rank >= f.nranks)
    return std::nullopt;
  return f;
}

std::string CollectiveRangeCommName(uint64_t comm) { return absl::StrFormat("ovs:%016x", comm); }

}  // namespace overlapscope::import
