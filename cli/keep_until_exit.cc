#include "cli/keep_until_exit.h"

#include <utility>

namespace overlapscope::cli {
namespace {

// Never destroyed: a heap vector reached from this pointer until exit.
std::vector<std::shared_ptr<const void>>* g_kept = nullptr;

}  // namespace

void KeepResultsUntilExit() {
  if (g_kept == nullptr) g_kept = new std::vector<std::shared_ptr<const void>>();
}

void KeepUntilExit(std::shared_ptr<const void> state) {
  if (g_kept != nullptr && state != nullptr) g_kept->push_back(std::move(state));
}

}  // namespace overlapscope::cli
