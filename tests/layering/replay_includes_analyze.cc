// Must NOT compile: analyze/replay may use analyze/graph, model and base only (DESIGN.md), not the
// other analyses. The test layering.replay_cannot_include_analyze builds this file and expects the
// build to fail.
#include "analyze/classify.h"
#include "analyze/graph/graph.h"
