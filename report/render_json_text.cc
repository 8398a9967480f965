// JSON text written straight into a string (render_json_text.h).
#include "report/render_json_text.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace overlapscope::report {

void AppendJsonString(std::string_view s, std::string* out) {
  bool plain = true;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    // dump() copies printable ASCII but '"' and '\\' unchanged (0x7f included).
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out->push_back('"');
    out->append(s);
    out->push_back('"');
    return;
  }
  out->append(
      nlohmann::ordered_json(std::string(s)).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

ObjectText::ObjectText(size_t indent, std::string* out) : out_(out), pad_(indent + 2) {
  out_->append(pad_, ' ');
  out_->push_back('{');
}

void ObjectText::Key(std::string_view key) {
  out_->append(first_ ? "\n" : ",\n");
  first_ = false;
  out_->append(pad_ + 2, ' ');
  AppendJsonString(key, out_);
  out_->append(": ");
}

ObjectText& ObjectText::Str(std::string_view key, std::string_view v) {
  Key(key);
  AppendJsonString(v, out_);
  return *this;
}

ObjectText& ObjectText::Int(std::string_view key, int64_t v) {
  Key(key);
  absl::StrAppend(out_, v);
  return *this;
}

ObjectText& ObjectText::OptInt(std::string_view key, const std::optional<int64_t>& v) {
  Key(key);
  if (v) {
    absl::StrAppend(out_, *v);
  } else {
    out_->append("null");
  }
  return *this;
}

void ObjectText::Close() {
  if (first_) {
    out_->push_back('}');
    return;
  }
  out_->push_back('\n');
  out_->append(pad_, ' ');
  out_->push_back('}');
}

}  // namespace overlapscope::report
