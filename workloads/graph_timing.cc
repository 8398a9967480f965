#include "workloads/graph_timing.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "workloads/cuda_status.h"

namespace overlapscope::workloads {

absl::Status LaunchAsGraph(cudaStream_t s, int reps, const std::function<absl::Status()>& issue, IterEvents& ev,
                           const std::string& pair, std::string* shape) {
  OS_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  absl::Status issued;
  for (int j = 0; j < reps && issued.ok(); ++j) issued = issue();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);  // always: the stream must leave capture mode
  if (!issued.ok()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    return issued;
  }
  OS_CUDA(ended);
  if (shape != nullptr && shape->empty()) *shape = GraphShape(graph);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  OS_CUDA(cudaGraphDestroy(graph));
  OS_CUDA(made);
  // Ordered behind whatever holds the stream, like everything else: the GPU copies the graph
  // before the pair's first event, so the pair times the graph's work only.
  absl::Status st = CudaStatus(cudaGraphUpload(exec, s), "cudaGraphUpload", __FILE__, __LINE__);
  if (st.ok()) st = ev.Begin(pair, s);
  if (st.ok()) st = CudaStatus(cudaGraphLaunch(exec, s), "cudaGraphLaunch", __FILE__, __LINE__);
  if (st.ok()) st = ev.End(pair, s);
  // An executable graph destroyed while its launch runs is freed when the launch completes.
  OS_CUDA(cudaGraphExecDestroy(exec));
  return st;
}

std::string GraphShape(cudaGraph_t g) {
  size_t nodes = 0, edges = 0;
  if (cudaGraphGetNodes(g, nullptr, &nodes) != cudaSuccess) return "unknown";
  std::vector<cudaGraphNode_t> ns(nodes);
  if (cudaGraphGetNodes(g, ns.data(), &nodes) != cudaSuccess) return "unknown";
  int kernels = 0;
  for (cudaGraphNode_t n : ns) {
    cudaGraphNodeType t;
    if (cudaGraphNodeGetType(n, &t) == cudaSuccess && t == cudaGraphNodeTypeKernel) ++kernels;
  }
  if (cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges) != cudaSuccess) return "unknown";
  std::vector<cudaGraphNode_t> from(edges), to(edges);
  std::vector<cudaGraphEdgeData> data(edges);
  if (cudaGraphGetEdges(g, from.data(), to.data(), data.data(), &edges) != cudaSuccess) return "unknown";
  const auto programmatic = std::count_if(data.begin(), data.end(), [](const cudaGraphEdgeData& d) {
    return d.type == cudaGraphDependencyTypeProgrammatic;
  });
  return absl::StrFormat("%d nodes (%d kernels), %d edges (%d programmatic)", nodes, kernels, edges, programmatic);
}

}  // namespace overlapscope::workloads
