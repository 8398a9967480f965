# Section `python` of tools/gpu_checks.sh (sourced by it; uses check/note): the Python package
# with PyTorch on the GPU (tools/python_gpu_check.py: a torch.profiler loop with
# overlapscope.torch.on_trace_ready, overlapscope.profile() around CUDA work, and profile() after
# torch.profiler in one process).
#
# Package: $PYPKG (default .carry/python) is <build>/python of the DEFAULT build (not
# OVERLAPSCOPE_STATIC, which has no libovscope.so): the Python sources, libovscope.so and the
# Abseil libraries it loads. It needs the machine's libcupti (LD_LIBRARY_PATH, set by
# gpu_checks.sh) and torch with CUDA. Each mode passes when its log ends with
# "python_gpu_check MODE: PASS"; its exit code says the rest (1: an expectation failed, a signal:
# the process crashed).
PYPKG=${OVERLAPSCOPE_PY_DIR:-$ROOT/.carry/python}

section_python() {
  if [ ! -f "$PYPKG/overlapscope/libovscope.so" ]; then
    note "python: SKIPPED (no $PYPKG/overlapscope/libovscope.so: carry <build>/python of the default build)"
    return 0
  fi
  if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    note "python: SKIPPED (no torch with CUDA)"
    return 0
  fi
  check python_env 60 env PYTHONPATH="$PYPKG" python3 -c 'import sys, torch, overlapscope
print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
print("library", overlapscope.library_version(), "capture", overlapscope.capture_available())'
  cat "$OUT/python_env.log" | tee -a "$SUMMARY"
  local mode limit
  for spec in hook:150 profile:90 both:90; do
    mode=${spec%:*} limit=${spec#*:}
    check "python_$mode" "$limit" env PYTHONPATH="$PYPKG" PYTHONFAULTHANDLER=1 \
      python3 tools/python_gpu_check.py "$mode" "$OUT/python/$mode"
    grep -E '^(ok|FAIL): |^python_gpu_check |strict gate: GateError|same process: ' "$OUT/python_$mode.log" |
      sed "s/^/  $mode: /" | tee -a "$SUMMARY"
  done
  # The Kineto traces are large; the .pftrace files, reports and logs come back.
  find "$OUT/python" -name '*.pt.trace.json' -size +2M -delete 2>/dev/null
  true
}
