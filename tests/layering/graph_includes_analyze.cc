// Must NOT compile: analyze/graph may use model/ and base/ only (DESIGN.md), not the analyses
// around it. The test layering.graph_cannot_include_analyze builds this file and expects the
// build to fail.
#include "analyze/classify.h"
#include "analyze/graph/graph.h"
