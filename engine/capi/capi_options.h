// Options of the C API: a JSON object per call (ovscope.h lists the keys), read into the
// engine's option structs. A value of the wrong type, out of range, or a key no one asked for is
// OVS_BAD_ARGUMENT naming the key; a rules file that cannot be read is OVS_BAD_INPUT.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "nlohmann/json.hpp"

namespace overlapscope::capi {

// Reads one options object. Each getter leaves *out as it was when the key is absent and
// returns false (after recording the error) when the key is present but unusable; Finish()
// then reports that error, or else a key no getter asked for.
class OptionReader {
 public:
  // `json`: NULL or "" for no options. `what` names the options in errors ("ovs_analyze options").
  OptionReader(const char* json, std::string what);

  bool String(const char* key, std::string* out);
  bool Strings(const char* key, std::vector<std::string>* out);  // a string or an array of strings
  bool Int(const char* key, int64_t min, int64_t* out);
  bool Bool(const char* key, bool* out);
  // The raw value of `key` (marked as known), nullptr when absent.
  const nlohmann::json* Raw(const char* key);
  // Records "`what`: 'key': reason" as the error (for callers' own checks); returns false.
  bool Bad(const char* key, const std::string& reason);

  // OVS_OK, or the first error's code (last error set).
  int Finish();

 private:
  std::string what_;
  nlohmann::json obj_;
  std::set<std::string> known_;
  int code_ = 0;
  std::string error_;
};

// ovs_analyze / ovs_capture_stop options: load and analysis settings together.
int ReadAnalyzeOptions(const char* json, engine::LoadOptions* load, engine::AnalyzeOptions* analyze);
// ovs_info options: align_clocks, threads.
int ReadLoadOptions(const char* json, engine::LoadOptions* load);
// ovs_report_render options: collectives.
int ReadRenderOptions(const char* json, engine::RenderOptions* render);

}  // namespace overlapscope::capi
