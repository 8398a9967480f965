// libovscope.so: a training job's report assembled in the job (ovscope.h ovs_reduce_rank,
// ovs_job_*; engine/reduce.h ReduceRankPart, AssembleParts).
#include <string>
#include <vector>

#include "engine/capi/capi_internal.h"
#include "engine/capi/capi_options.h"
#include "engine/reduce.h"

namespace capi = overlapscope::capi;
namespace engine = overlapscope::engine;

extern "C" {

int ovs_reduce_rank(const char* path, const char* options_json, char** out, size_t* out_len) {
  return capi::Guard("reducing the rank", [&] {
    if (path == nullptr || out == nullptr || out_len == nullptr)
      return capi::Fail(OVS_BAD_ARGUMENT, "ovs_reduce_rank: NULL argument");
    *out = nullptr;
    *out_len = 0;
    engine::LoadOptions load;
    engine::AnalyzeOptions options;
    if (int rc = capi::ReadAnalyzeOptions(options_json, &load, &options); rc != OVS_OK) return rc;
    absl::StatusOr<std::string> part = engine::ReduceRankPart(path, options);
    if (!part.ok()) return capi::Fail(OVS_BAD_INPUT, part.status());
    // Binary: a copy of exactly its bytes (Dup copies a std::string whole, NULs included).
    *out = capi::Dup(*part);
    if (*out == nullptr) return capi::Fail(OVS_ERROR, "out of memory while reducing the rank");
    *out_len = part->size();
    return capi::Ok();
  });
}

int ovs_job_assemble(const char* const* names, const char* const* parts, const size_t* lens, size_t n,
                     const char* options_json, ovs_job** out) {
  return capi::Guard("assembling the job", [&] {
    if (out == nullptr || (n > 0 && (names == nullptr || parts == nullptr || lens == nullptr)))
      return capi::Fail(OVS_BAD_ARGUMENT, "ovs_job_assemble: NULL argument");
    *out = nullptr;
    engine::LoadOptions load;
    engine::AnalyzeOptions options;
    if (int rc = capi::ReadAnalyzeOptions(options_json, &load, &options); rc != OVS_OK) return rc;
    std::vector<std::string> name_list, part_list;
    for (size_t i = 0; i < n; ++i) {
      if (names[i] == nullptr || (parts[i] == nullptr && lens[i] > 0))
        return capi::Fail(OVS_BAD_ARGUMENT, "ovs_job_assemble: NULL name or part");
      name_list.emplace_back(names[i]);
      part_list.emplace_back(parts[i] == nullptr ? "" : std::string(parts[i], lens[i]));
    }
    absl::StatusOr<overlapscope::report::Report> r = engine::AssembleParts(name_list, part_list, options);
    if (!r.ok()) return capi::Fail(OVS_BAD_INPUT, r.status());
    *out = new ovs_job{std::move(r).value()};
    return capi::Ok();
  });
}

int ovs_job_render(const ovs_job* job, const char* format, const char* options_json, char** out) {
  return capi::Guard("rendering the job's report", [&] {
    if (job == nullptr || out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_job_render: NULL argument");
    *out = nullptr;
    engine::RenderOptions render;
    if (int rc = capi::ReadRenderOptions(options_json, &render); rc != OVS_OK) return rc;
    const std::string f = format == nullptr ? "" : format;
    engine::ReportFormat rf = engine::ReportFormat::kJson;
    if (f == "text")
      rf = engine::ReportFormat::kText;
    else if (f == "markdown")
      rf = engine::ReportFormat::kMarkdown;
    else if (f != "json")
      return capi::Fail(OVS_BAD_ARGUMENT, "format '" + f + "': expected \"json\", \"text\" or \"markdown\"");
    absl::StatusOr<std::string> text = engine::RenderReport(job->report, rf, render);
    if (!text.ok()) return capi::Fail(OVS_ERROR, text.status());
    return capi::Give(*text, out);
  });
}

int ovs_job_gates(const ovs_job* job, const char* gates_json, char** out) {
  return capi::Guard("checking the job's gates", [&] {
    if (job == nullptr || out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_job_gates: NULL argument");
    return capi::ReportGates(job->report, gates_json, out);
  });
}

void ovs_job_free(ovs_job* job) { delete job; }

}  // extern "C"
