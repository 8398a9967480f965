/* The C API used from C (compiled as C11, linked against libovscope.so only): analyze a real
 * trace, render, gate, and the errors a C caller sees. Argument: the source root. */
#include <stdio.h>
#include <string.h>

#include "engine/capi/ovscope.h"

static int passed, failed;

static void check(int ok, const char* what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("FAILED: %s (last error: %s)\n", what, ovs_last_error());
  }
}

static void analyze_and_render(const char* root) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/kineto/ag_overlap", root);
  const char* paths[] = {path};
  ovs_report* r = NULL;
  check(ovs_analyze(paths, 1, "{\"top\": 3}", &r) == OVS_OK && r != NULL, "ovs_analyze");
  if (r == NULL) return;
  char* json = NULL;
  check(ovs_report_render(r, "json", NULL, &json) == OVS_OK, "render json");
  check(json != NULL && strstr(json, "\"schema\": \"overlapscope.report/1\"") != NULL, "json schema");
  check(json != NULL && strstr(json, "\"top_n\": 3") != NULL, "json has the option");
  ovs_free(json);
  char* gates = NULL;
  check(ovs_report_gates(r, "[\"overlap_ratio>=0.5\"]", &gates) == OVS_OK, "gates");
  /* rank 0 hides 78.7% of its communication, rank 1 31.1%: one check passes, one fails. */
  check(gates != NULL && strstr(gates, "\"passed\":false") != NULL, "gates failed overall");
  check(gates != NULL && strstr(gates, "FAIL rank 1: overlap_ratio>=0.5") != NULL, "rank 1 fails");
  check(gates != NULL && strstr(gates, "PASS rank 0: overlap_ratio>=0.5") != NULL, "rank 0 passes");
  ovs_free(gates);
  ovs_report_free(r);
}

static void errors(void) {
  const char* missing[] = {"/nonexistent/rank0.json"};
  ovs_report* r = NULL;
  check(ovs_analyze(missing, 1, NULL, &r) == OVS_BAD_INPUT && r == NULL, "missing file is OVS_BAD_INPUT");
  check(strncmp(ovs_last_error(), "/nonexistent/rank0.json: offset 0: ", 35) == 0, "message names path, offset");
  check(ovs_last_error_code() == OVS_BAD_INPUT, "last error code");
  check(ovs_analyze(missing, 1, "{\"top\": \"x\"}", &r) == OVS_BAD_ARGUMENT, "bad option");
  check(strstr(ovs_last_error(), "'top'") != NULL, "bad option named");
  check(ovs_abi_version() == OVS_ABI_VERSION, "ABI version");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    printf("usage: capi_c_test SOURCE_ROOT\n");
    return 2;
  }
  analyze_and_render(argv[1]);
  errors();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
