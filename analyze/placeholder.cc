// analyze placeholder (replaced by the analyses)
namespace overlapscope::analyze { int placeholder_symbol = 0; }
