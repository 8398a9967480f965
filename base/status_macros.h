// Status helpers for module boundaries.
//
// Debian's Abseil (20220623) has no status macros, so we keep our own. Both macros evaluate
// their expression exactly once and return the error Status unchanged (no wrapping), so the
// file/offset/reason text of the original error reaches the user as written.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define OS_STATUS_CONCAT_INNER_(a, b) a##b
#define OS_STATUS_CONCAT_(a, b) OS_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status os_status_tmp_ = (expr);          \
    if (!os_status_tmp_.ok()) return os_status_tmp_; \
  } while (0)

// `ASSIGN_OR_RETURN(T x, StatusOr<T>-expr);` declares/assigns `x` or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) OS_ASSIGN_OR_RETURN_IMPL_(OS_STATUS_CONCAT_(os_statusor_, __LINE__), lhs, expr)

#define OS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
