// The matrix-product shape of a PyTorch op from its Kineto "Input Dims" (record_shapes=True):
// which operands of aten::mm, addmm, matmul, bmm, baddbmm, addbmm, linear and _scaled_mm are the
// two factors, and their (batch, m, k, n). Used by the Kineto importer for cpu_op events only.
#pragma once

#include <string_view>

#include "model/events.h"

namespace overlapscope::import {

// Fills s->m, n, k, batch from `dims`, the JSON text of "Input Dims" (e.g. "[[8192, 4096],
// [4096, 4096], [8192, 4096]]"), for op `name`. False (s untouched) for any other op, a 1-D
// factor, a dims text that is not a list of lists of non-negative integers, or inner dimensions
// that disagree. Never reads past `dims`.
bool MatmulShapeFromDims(std::string_view name, std::string_view dims, model::OpShape* s);

}  // namespace overlapscope::import
