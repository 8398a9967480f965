// Timing work inside a CUDA graph (the all-reduce table's --ar-timing graph): what the published
// custom all-reduce tables of inference servers time, since those servers run their all-reduces
// inside CUDA graphs.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "workloads/timing.h"

namespace overlapscope::workloads {

// Captures what `issue` enqueues on `s` when called `reps` times (thread-local stream capture:
// other threads go on launching on their own streams; programmatic dependent launches become
// programmatic edges) into one graph, instantiates it, uploads it ahead of the event pair (a new
// executable graph is otherwise copied to the device inside its first launch, which the pair would
// time), and launches it between ev's pair `pair`. `shape`, when not null and empty, receives
// GraphShape of the captured graph. Errors: the first failure of `issue` or of a CUDA call, as a
// status naming it; the stream is never left capturing.
absl::Status LaunchAsGraph(cudaStream_t s, int reps, const std::function<absl::Status()>& issue, IterEvents& ev,
                           const std::string& pair, std::string* shape);

// "20 nodes (20 kernels), 19 edges (19 programmatic)": says whether the programmatic launches
// survived the capture as programmatic edges. "unknown" when CUDA cannot say.
std::string GraphShape(cudaGraph_t g);

}  // namespace overlapscope::workloads
