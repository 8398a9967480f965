// viewer_export placeholder (replaced by the writers)
namespace overlapscope::viewer_export { int placeholder_symbol = 0; }
