// The declared table of import statistics: every kind of record an importer could not use, chose
// not to store, or repaired has one entry here with a stable name, a severity and a description
// (like Perfetto's stats table). Importers count into SourceStats (source_stats.h) by Stat, never
// by free text; `overlapscope info` prints the table's non-zero rows and every report starts with
// the warnings of its data-loss rows (ImportWarnings below).
//
// Severity:
//   kInfo      nothing the analyses need was lost (flow arrows, display metadata, unknown args,
//              repaired strings, GPU work launched before the capture window, ...).
//   kDataLoss  records that carry data were dropped or could not be read: numbers derived from
//              the trace may be incomplete. Every output says so first; --strict exits 2.
// Effect (what the counted records became; a Kineto file keeps
// events_read == events_kept + skipped + ignored):
//   kSkipped   a record was dropped; kIgnored  recognized and deliberately not stored;
//   kNote      a fact about records that were kept (or about the file), not a record count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace overlapscope::model {

enum class Severity : uint8_t { kInfo, kDataLoss };
enum class StatEffect : uint8_t { kSkipped, kIgnored, kNote };

// X(id, name, severity, effect, description)
#define OVERLAPSCOPE_IMPORT_STATS(X)                                                                                   \
  /* Kineto / PyTorch-profiler JSON */                                                                                 \
  X(kKinetoGpuEventSkipped, "kineto_gpu_event_skipped", kDataLoss, kSkipped,                                           \
    "GPU activity (kernel, memcpy, memset, GPU annotation, cuda_sync) that could not be read; detail: the reason")     \
  X(kKinetoRuntimeEventSkipped, "kineto_runtime_event_skipped", kDataLoss, kSkipped,                                   \
    "CUDA/HIP runtime or driver call that could not be read (or reused a correlation id); detail: the reason")         \
  X(kKinetoHostEventSkipped, "kineto_host_event_skipped", kDataLoss, kSkipped,                                         \
    "host range (cpu_op, user_annotation, python_function, overhead) that could not be read; detail: the reason")      \
  X(kKinetoEventUnreadable, "kineto_event_unreadable", kDataLoss, kSkipped,                                            \
    "event whose kind could not be read (missing or non-string ph/cat, unsupported ph); detail: the reason")           \
  X(kKinetoMetadataSkipped, "kineto_metadata_skipped", kInfo, kSkipped,                                                \
    "process/thread name metadata without its argument")                                                               \
  X(kKinetoDeviceCategoryUnknown, "kineto_device_category_unknown", kDataLoss, kSkipped,                               \
    "events of an unknown category that look like GPU or runtime activity (device/stream/correlation args or a "       \
    "device-like category name); detail: the category")                                                                \
  X(kKinetoOtherAccelerator, "kineto_other_accelerator", kDataLoss, kSkipped,                                          \
    "activity of an accelerator overlapscope does not analyze (XPU, MTIA, HPU, Glow, PrivateUse1, HCCL); detail: "     \
    "the category")                                                                                                    \
  X(kKinetoCategoryUnknown, "kineto_category_unknown", kInfo, kSkipped,                                                \
    "events of an unknown category with nothing device-like about them; detail: the category")                         \
  X(kKinetoLaunchFlow, "kineto_launch_flow", kInfo, kIgnored,                                                          \
    "CPU-to-GPU flow arrows (ac2g, async, async_gpu, async_cpu_to_gpu): links known from correlation ids")             \
  X(kKinetoOtherFlow, "kineto_other_flow", kInfo, kIgnored, "forward-backward flow arrows (fwdbwd, fwd_bwd)")          \
  X(kKinetoDisplayMetadata, "kineto_display_metadata", kInfo, kIgnored,                                                \
    "display metadata (sort indexes, labels other than CPU/GPU)")                                                      \
  X(kKinetoProfilerSpan, "kineto_profiler_span", kInfo, kIgnored, "profiler spans (cat Trace)")                        \
  X(kKinetoInstant, "kineto_instant", kInfo, kIgnored, "instant events (ph i/I)")                                      \
  X(kKinetoIgnoredCategory, "kineto_ignored_category", kInfo, kIgnored,                                                \
    "known categories without a use in the analyses (cuda_profiler_range, cuda_event, external_correlation); "         \
    "detail: the category")                                                                                            \
  X(kKinetoUnknownArg, "kineto_unknown_arg", kInfo, kNote,                                                             \
    "arguments not known to the importer (event kept); "                                                               \
    "detail: the key")                                                                                                 \
  X(kKinetoNonJsonValue, "kineto_non_json_value", kInfo, kNote,                                                        \
    "values written by old Kineto versions that are not JSON (N/A, inf, nan, 0x... pointers), read as absent")         \
  X(kStringsRepaired, "strings_repaired", kInfo, kNote, "strings with invalid UTF-8 (replaced by U+FFFD)")             \
  X(kStringsTruncated, "strings_truncated", kDataLoss, kNote,                                                          \
    "names or strings longer than the import limit, cut to it")                                                        \
  X(kKinetoFlowIdUnmatched, "kineto_flow_id_unmatched", kInfo, kNote,                                                  \
    "ac2g flow ids that match no correlation id of the file")                                                          \
  X(kKinetoFlowWithoutId, "kineto_flow_without_id", kInfo, kNote, "ac2g flows without an integer id")                  \
  X(kGpuWithoutLaunch, "gpu_activity_without_launch", kInfo, kNote,                                                    \
    "GPU activities whose launch call is not in the file (launched before the capture window)")                        \
  X(kKinetoSyncWithoutCall, "kineto_sync_without_call", kInfo, kNote,                                                  \
    "cuda_sync records without an API call of the same correlation")                                                   \
  X(kKinetoCorrelationFromExternalId, "kineto_correlation_from_external_id", kInfo, kNote,                             \
    "HIP calls and GPU activities whose correlation was read from 'External id' (roctracer traces of "                 \
    "2021-2023 write it there and nothing in 'correlation')")                                                          \
  X(kKinetoArrayTopLevel, "kineto_array_top_level", kInfo, kNote,                                                      \
    "the file is a bare array of events (Kineto before PyTorch 1.8), read like a traceEvents array")                   \
  X(kKinetoNoKinetoEvents, "kineto_no_kineto_events", kDataLoss, kNote,                                                \
    "a bare array of events none of which has a Kineto category (the legacy autograd profiler's export?): nothing "    \
    "could be read")                                                                                                   \
  X(kKinetoTruncatedAfterEvents, "kineto_truncated_after_events", kInfo, kNote,                                        \
    "file ends before the top-level object closes, after traceEvents (all events imported)")                           \
  X(kKinetoTruncatedNoBase, "kineto_truncated_no_base", kDataLoss, kNote,                                              \
    "file ends after traceEvents before baseTimeNanoseconds was seen: timestamps may lack their base")                 \
  /* overlapscope captures (.ovspill) */                                                                               \
  X(kSpillTruncatedTail, "spill_truncated_tail", kDataLoss, kSkipped,                                                  \
    "capture file ends inside a record or block (the process died while writing): the rest is lost")                   \
  X(kSpillShortRecord, "spill_short_record", kDataLoss, kSkipped, "records shorter than their type; detail: type")     \
  X(kSpillUnknownRecord, "spill_unknown_record", kDataLoss, kSkipped,                                                  \
    "records of a type this build does not know (a newer writer); detail: type")                                       \
  X(kSpillBadTimestamps, "spill_bad_timestamps", kDataLoss, kSkipped,                                                  \
    "records with unknown or reversed timestamps (CUPTI could not time them); detail: record kind")                    \
  X(kSpillUndefinedString, "spill_undefined_string", kInfo, kNote,                                                     \
    "string ids without a definition (name left empty)")                                                               \
  X(kSpillNvtxEndWithoutStart, "spill_nvtx_end_without_start", kDataLoss, kSkipped, "NVTX range ends without a start") \
  X(kSpillNvtxOpen, "spill_nvtx_open_at_end", kDataLoss, kSkipped, "NVTX ranges still open when the capture ended")    \
  X(kCuptiDroppedRecords, "cupti_dropped_records", kDataLoss, kNote, "records CUPTI dropped (no buffer available)")    \
  X(kCuptiUnknownKinds, "cupti_unknown_kinds", kInfo, kNote, "CUPTI records of kinds the capture does not encode")     \
  X(kCuptiBufferRefused, "cupti_buffer_refused", kDataLoss, kNote, "CUPTI buffer requests refused (pool full)")        \
  X(kCaptureNoProcessRecord, "capture_no_process_record", kDataLoss, kNote,                                            \
    "no process record: the process died before its first flush")                                                      \
  X(kCaptureNoEndRecord, "capture_no_end_record", kDataLoss, kNote,                                                    \
    "no end record: the process ended without a clean flush; activity still in CUPTI buffers was lost")                \
  X(kCaptureSignalFlush, "capture_signal_flush", kInfo, kNote, "flushed from a fatal-signal handler; detail: signal")  \
  X(kNcclRangeCollectives, "nccl_range_collectives", kInfo, kNote, "collectives from NCCL's NVTX ranges")              \
  X(kOwnRangeCollectives, "own_range_collectives", kInfo, kNote,                                                       \
    "collectives from overlapscope.collective NVTX ranges")                                                            \
  X(kOwnRangeMalformed, "own_range_malformed", kDataLoss, kNote,                                                       \
    "overlapscope.collective ranges with a malformed message (ignored)")                                               \
  X(kNcclRangeKernels, "nccl_range_kernels", kInfo, kNote, "kernels attributed to collective ranges")                  \
  X(kNcclRangeMemcpys, "nccl_range_memcpys", kInfo, kNote, "memcpys attributed to collective ranges")                  \
  X(kNcclNvtxPayloads, "nccl_nvtx_payloads", kInfo, kNote,                                                             \
    "collectives with NCCL's NVTX payload (communicator, size, root/peer, op)")                                        \
  X(kNcclNvtxUnknownLayout, "nccl_nvtx_unknown_layout", kInfo, kNote,                                                  \
    "NVTX payloads of NCCL ranges in an unknown layout (not used)")                                                    \
  X(kNcclPluginUnreadable, "nccl_plugin_unreadable", kDataLoss, kNote,                                                 \
    "NCCL plugin file that could not be read (NCCL details missing); detail: the reason")                              \
  /* NCCL profiler plugin files (.ovnccl) and their merge */                                                           \
  X(kOvncclTruncatedTail, "ovnccl_truncated_tail", kDataLoss, kSkipped,                                                \
    "plugin file ends inside a record or block (the process died while writing)")                                      \
  X(kOvncclShortRecord, "ovnccl_short_record", kDataLoss, kSkipped, "records shorter than their kind; detail: kind")   \
  X(kOvncclUnknownRecord, "ovnccl_unknown_record", kDataLoss, kSkipped, "records of an unknown kind; detail: kind")    \
  X(kOvncclBadRecord, "ovnccl_bad_record", kDataLoss, kSkipped,                                                        \
    "records that contradict the file (duplicate event id, stop without start, channel of an unknown collective, "     \
    "name longer than its record); detail: the reason")                                                                \
  X(kOvncclOpenEvent, "ovnccl_open_event", kInfo, kNote,                                                               \
    "events without a stop record or channels without a GPU end time; detail: which")                                  \
  X(kOvncclPluginErrors, "ovnccl_plugin_errors", kDataLoss, kNote,                                                     \
    "plugin internal or write errors (recording stopped); detail: which")                                              \
  X(kNcclPluginUnmatched, "nccl_plugin_unmatched", kDataLoss, kSkipped,                                                \
    "plugin collectives that matched no NCCL range and no GPU work")                                                   \
  X(kNcclPluginMerge, "nccl_plugin_merge", kInfo, kNote, "how plugin collectives were merged; detail: which")          \
  /* bounds applied at import (model/bounds.h) */                                                                      \
  X(kTimeOutOfBounds, "time_out_of_bounds", kInfo, kNote,                                                              \
    "records whose timestamp or duration lies outside the supported range (|t| <= 4e18 ns, duration <= 1e15 ns); "     \
    "each is also counted as skipped under its kind")                                                                  \
  X(kSizeOutOfBounds, "size_out_of_bounds", kDataLoss, kNote,                                                          \
    "byte counts or element counts beyond the supported range (2^50), or elements x element size overflowing; "        \
    "the size is left unknown")

enum class Stat : uint8_t {
#define OVERLAPSCOPE_STAT_ENUM(id, name, sev, eff, desc) id,
  OVERLAPSCOPE_IMPORT_STATS(OVERLAPSCOPE_STAT_ENUM)
#undef OVERLAPSCOPE_STAT_ENUM
      kCount
};
inline constexpr size_t kStatCount = static_cast<size_t>(Stat::kCount);

struct StatDef {
  std::string_view name;
  Severity severity;
  StatEffect effect;
  std::string_view description;
};

const StatDef& Describe(Stat s);
std::string_view ToString(Severity s);  // "info", "data-loss"

}  // namespace overlapscope::model
