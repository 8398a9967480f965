/* overlapscope's C API: libovscope.so, the stable binary interface under the Python package
 * (python/overlapscope, loaded with ctypes) and for any other language with a C FFI.
 *
 * Plain C: no C++ type crosses it, no exception leaves it, every symbol starts with ovs_ and is
 * versioned (ELF version node OVSCOPE_1); nothing else is exported, so it loads into any process,
 * e.g. any CPython >= 3.8. It needs glibc >= 2.34, libstdc++ of GCC >= 11, zlib, Abseil's shared
 * libraries (the Python package carries them next to it) and, in builds with CUDA, libcupti.
 *
 *   ovs_report* r = NULL;
 *   const char* paths[] = {"traces/"};
 *   if (ovs_analyze(paths, 1, "{\"align_clocks\": \"auto\"}", &r) != OVS_OK) {
 *     fprintf(stderr, "%s\n", ovs_last_error());   // "traces/rank0.json: offset 31: ..."
 *     return 1;
 *   }
 *   char* json = NULL;
 *   if (ovs_report_render(r, "json", NULL, &json) == OVS_OK) { puts(json); ovs_free(json); }
 *   ovs_report_free(r);
 *
 * Conventions:
 * - Every function that can fail returns an ovs_code; OVS_OK is 0. On failure, ovs_last_error()
 *   says why (on the calling thread) and output pointers are left NULL.
 * - Strings in and out are UTF-8 (paths: bytes as the OS takes them), NUL-terminated. Strings
 *   returned through char** are owned by the caller: release them with ovs_free().
 * - Options are a JSON object (NULL or "" = all defaults); an unknown key is OVS_BAD_ARGUMENT.
 * - Handles may be read from several threads at once; a handle is freed once, by its owner.
 *
 * Analysis options (ovs_analyze, ovs_capture_stop; names as the CLI's analyze flags):
 *   align_clocks  "off" | "auto" (default) | "on"
 *   comm_kernel, compute_kernel, memory_kernel   regex or list of regexes (classification rules)
 *   classes       path or list of paths of rules files ("CLASS REGEX" lines)
 *   iteration_marker   string, default "ProfilerStep#"
 *   min_gap_ns, runtime_cutoff_ns, launch_delay_cutoff_ns   integers >= 0 (ns)
 *   top           integer >= 1, rows of every "top" list
 *   threads       integer >= 0, analysis/parser threads (0: default)
 */
#ifndef OVERLAPSCOPE_ENGINE_CAPI_OVSCOPE_H_
#define OVERLAPSCOPE_ENGINE_CAPI_OVSCOPE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from libovscope.so (built with hidden visibility: everything else stays inside). */
#if defined(__GNUC__)
#define OVS_API __attribute__((visibility("default")))
#else
#define OVS_API
#endif

/* The ABI this header describes. ovs_abi_version() returns the library's; a client built for
 * version N works with a library whose ovs_abi_version() == N. */
#define OVS_ABI_VERSION 1

/* Result codes; they match the CLI's exit codes where both exist. */
typedef enum ovs_code {
  OVS_OK = 0,
  OVS_ERROR = 1,         /* runtime failure: cannot write an output, out of memory, capture failed */
  OVS_BAD_INPUT = 2,     /* an input trace or rules file cannot be read: "<path>: offset <N>: <reason>" */
  OVS_BAD_ARGUMENT = 64, /* NULL where a value is needed, bad option JSON, bad regex, bad gate */
  OVS_UNAVAILABLE = 69   /* not in this build (in-process capture without CUDA) */
} ovs_code;

typedef struct ovs_report ovs_report;   /* traces loaded and analyzed (immutable) */
typedef struct ovs_capture ovs_capture; /* an in-process CUPTI capture being recorded */

OVS_API int ovs_abi_version(void);
/* "overlapscope 0.1.0"; static storage, never NULL. */
OVS_API const char* ovs_version(void);

/* Why the last failed call on this thread failed ("" if none failed yet); valid until the next
 * call on this thread. For OVS_BAD_INPUT the message is "<path>: offset <N>: <reason>". */
OVS_API const char* ovs_last_error(void);
/* The ovs_code of that failure (OVS_OK if none). */
OVS_API int ovs_last_error_code(void);

/* Releases a string returned by this library; NULL is ignored. */
OVS_API void ovs_free(char* s);

/* Loads `paths` (Kineto .json/.json.gz, .ovspill captures, directories of either; ranks merged)
 * and runs every analysis. *out receives the report, release it with ovs_report_free(). */
OVS_API int ovs_analyze(const char* const* paths, size_t n_paths, const char* options_json, ovs_report** out);
OVS_API void ovs_report_free(ovs_report* report);

/* The report as `format`: "json" (schema overlapscope.report/1, byte for byte the CLI's
 * `analyze --json`), "text", "markdown", or "explain-classes". options_json:
 *   collectives   integer >= 0 or "all": matched collective instances listed by text/Markdown
 *   ranks         "all", integer >= 0 or [rank, ...]: text/Markdown detail blocks (--ranks) */
OVS_API int ovs_report_render(const ovs_report* report, const char* format, const char* options_json, char** out);

/* Checks gates ("METRIC OP NUMBER", OP one of >= <= > < ==; METRIC a key of a rank's summary)
 * given as a JSON array of strings against every rank. OVS_OK whether they pass or not; *out is
 *   {"passed": bool, "checks": [{"gate", "metric", "label", "rank" (int or null), "value"
 *    (number, or null when absent on that rank), "passed", "line"}]}
 * with "line" as the CLI prints it ("FAIL rank 1: overlap_ratio>=0.6 (value 0.41)"), in the CLI's
 * order: rank by rank, each rank's gates as given.
 * OVS_BAD_ARGUMENT for a gate that does not parse or names an unknown metric. */
OVS_API int ovs_report_gates(const ovs_report* report, const char* gates_json, char** out);

/* OVS_OK when every gate of the JSON array parses and names a known metric, else
 * OVS_BAD_ARGUMENT naming the first bad one (to check gates before anything is analyzed). */
OVS_API int ovs_check_gates(const char* gates_json);

/* Writes the report's trace to `path`: Perfetto (.pftrace, .perfetto-trace, .pb) with the
 * analysis drawn in, or Kineto-compatible Chrome JSON (.json, .json.gz; one file per rank).
 * options_json: analysis  bool (Perfetto only, default true). *out (may be NULL) receives
 *   {"format": "perfetto"|"chrome", "files": [...], counts of what was written}. */
OVS_API int ovs_report_export(const ovs_report* report, const char* path, const char* options_json, char** out);

/* What the report's traces hold (`overlapscope info`): format "json" (overlapscope.info/1) or
 * "text". */
OVS_API int ovs_report_info(const ovs_report* report, const char* format, char** out);
/* The same without analyzing: loads `paths` (options: align_clocks, threads). */
OVS_API int ovs_info(const char* const* paths, size_t n_paths, const char* options_json, const char* format,
                     char** out);

/* A training job's report assembled in the job (python/overlapscope/torch.py; engine/reduce.h
 * ReduceRankPart, AssembleParts). Each process reduces its own rank's trace to a part: *out
 * receives *out_len bytes (binary, not NUL-terminated; release with ovs_free); options as for
 * ovs_analyze (the critical path is not computed: it needs every rank's events). One process
 * gathers every rank's part and assembles the job: parts[i] (lens[i] bytes) is process i of the
 * job, names[i] its trace's path (the report's inputs; need not exist here). OVS_BAD_INPUT for a
 * trace that cannot be read or a part that is not one; release the job with ovs_job_free. */
typedef struct ovs_job ovs_job;
OVS_API int ovs_reduce_rank(const char* path, const char* options_json, char** out, size_t* out_len);
OVS_API int ovs_job_assemble(const char* const* names, const char* const* parts, const size_t* lens, size_t n,
                             const char* options_json, ovs_job** out);
/* As ovs_report_render (formats json, text, markdown; options collectives, ranks: "all", a count
 * or an array of rank numbers) and ovs_report_gates, for the job. */
OVS_API int ovs_job_render(const ovs_job* job, const char* format, const char* options_json, char** out);
OVS_API int ovs_job_gates(const ovs_job* job, const char* gates_json, char** out);
OVS_API void ovs_job_free(ovs_job* job);

/* Replay and what-if (`overlapscope replay`, METRICS §11): loads `paths`, replays every iteration
 * on the dependency graph and predicts it under the changes. options_json: the analysis options
 * of ovs_analyze (classes, iteration_marker, align_clocks, ...). replay_json (all optional):
 *   changes   string or array of strings, as --change (scale:, async:, prefetch:, ce:, nosync:, remove:, defer:)
 *   contention bool (default true: also predict with the contention model)
 *   sm_count  int >= 2 (SMs per GPU for the SM-share model; default from the GPU's name)
 *   strict    bool (default false: --strict, no fallbacks, what the graph alone explains)
 *   trace     string: also write the predicted timeline beside the measured one to this path
 *             (Perfetto, as --trace; an unwritable path is OVS_ERROR)
 *   html      string: also write a self-contained HTML page of the result to this path
 * format: "json" (overlapscope.replay/1, the default for NULL), "text" or "markdown".
 * OVS_BAD_ARGUMENT for a malformed change or option. */
OVS_API int ovs_replay(const char* const* paths, size_t n_paths, const char* options_json, const char* replay_json,
                       const char* format, char** out);

/* In-process capture (CUPTI) of this process's GPU work. 1 when this build has it; without it
 * ovs_capture_start returns OVS_UNAVAILABLE. */
OVS_API int ovs_capture_available(void);
/* Starts capturing. options_json (all optional):
 *   spill_path string (kept; default a temporary file, deleted), buffer_bytes, max_buffers,
 *   driver_api bool, nvtx bool, rank, world_size (default from RANK/WORLD_SIZE...),
 *   nccl_plugin bool (default false: point NCCL at overlapscope's profiler plugin; must come
 *   before the process creates its first communicator).
 * OVS_ERROR when a capture (or `overlapscope profile`'s injection) is already active or CUPTI
 * fails. Only one capture per process at a time. */
OVS_API int ovs_capture_start(const char* options_json, ovs_capture** out);
/* Stops capturing and analyzes what was recorded (analysis options as for ovs_analyze). The GPU
 * work should be finished (synchronize first): activities still running are counted as skipped.
 * The capture handle must still be freed with ovs_capture_free(). */
OVS_API int ovs_capture_stop(ovs_capture* capture, const char* options_json, ovs_report** out);
/* Stops a capture still running (discarding it) and releases the handle; NULL is ignored. */
OVS_API void ovs_capture_free(ovs_capture* capture);

#ifdef __cplusplus
}
#endif

#endif /* OVERLAPSCOPE_ENGINE_CAPI_OVSCOPE_H_ */
