// Must NOT compile: analyze/ may use model/ only (DESIGN.md). The test
// layering.analyze_cannot_include_import builds this file and expects the build to fail.
#include "importers/kineto/import.h"
#include "model/trace.h"
