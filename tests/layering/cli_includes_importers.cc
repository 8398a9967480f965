// Must NOT compile: cli/ reads traces through engine::Load, never an importer directly. The test
// layering.cli_cannot_include_importers builds this file and expects the build to fail here.
#include "importers/import_any.h"
