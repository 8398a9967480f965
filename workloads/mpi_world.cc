#include "workloads/mpi_world.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#if defined(OVERLAPSCOPE_HAVE_MPI)
// The C API only: the deprecated C++ bindings need libmpi_cxx, which we do not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace overlapscope::workloads::mpi {
namespace {

struct World {
  bool active = false;
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
};
World& W() {
  static World w;
  return w;
}

#if defined(OVERLAPSCOPE_HAVE_MPI)
absl::Status MpiError(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return absl::OkStatus();
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return absl::InternalError(absl::StrCat(what, " failed: ", std::string(msg, len)));
}
#endif

}  // namespace

LaunchEnv DetectLaunch(const std::function<const char*(const char*)>& getenv_fn) {
  LaunchEnv e;
  auto has = [&](const char* var, const char* size_var) {
    const char* v = getenv_fn(var);
    if (v == nullptr || *v == '\0') return false;
    e.launched = true;
    e.evidence = absl::StrCat(var, "=", v);
    const char* s = size_var ? getenv_fn(size_var) : nullptr;
    int n = 0;
    if (s != nullptr && absl::SimpleAtoi(s, &n)) e.world_size = n;
    return true;
  };
  has("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE") || has("PMIX_RANK", nullptr) || has("PMI_RANK", "PMI_SIZE") ||
      has("MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE");
  return e;
}

LaunchEnv DetectLaunch() {
  return DetectLaunch([](const char* v) { return static_cast<const char*>(std::getenv(v)); });
}

bool Active() { return W().active; }
int Rank() { return W().rank; }
int Size() { return W().size; }
int LocalRank() { return W().local_rank; }
int LocalSize() { return W().local_size; }

std::string Hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "?";
  return buf;
}

#if defined(OVERLAPSCOPE_HAVE_MPI)

bool CompiledIn() { return true; }

absl::Status Init() {
  World& w = W();
  if (w.active) return absl::OkStatus();
  int provided = 0;
  if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided); rc != MPI_SUCCESS)
    return absl::InternalError("MPI_Init_thread failed");
  // Errors come back as codes (turned into Status), not as an abort inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm local;
  if (absl::Status st =
          MpiError(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local),
                   "MPI_Comm_split_type");
      !st.ok())
    return st;
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_size(local, &w.local_size);
  MPI_Comm_free(&local);
  w.active = true;
  return absl::OkStatus();
}

void Finalize() {
  if (!W().active) return;
  MPI_Finalize();
  W().active = false;
}

void Abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (W().active) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

absl::Status Barrier() { return MpiError(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

absl::StatusOr<std::vector<std::string>> AllGather(const std::string& mine) {
  const int n = W().size;
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(n), offs(n);
  if (auto st = MpiError(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
      !st.ok())
    return st;
  int total = 0;
  for (int r = 0; r < n; ++r) {
    offs[r] = total;
    total += lens[r];
  }
  std::string all(static_cast<size_t>(total), '\0');
  if (auto st = MpiError(
          MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, MPI_COMM_WORLD),
          "MPI_Allgatherv");
      !st.ok())
    return st;
  std::vector<std::string> out(n);
  for (int r = 0; r < n; ++r) out[r] = all.substr(offs[r], lens[r]);
  return out;
}

absl::Status Broadcast(void* data, int bytes, int root) {
  return MpiError(MPI_Bcast(data, bytes, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

#else  // !OVERLAPSCOPE_HAVE_MPI

bool CompiledIn() { return false; }
absl::Status Init() {
  return absl::FailedPreconditionError(
      "this overlapscope-run was built without MPI (no MPI found at build time: install libopenmpi-dev and "
      "rebuild); run without mpirun instead: one process drives all local GPUs, one thread per GPU");
}
void Finalize() {}
void Abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}
absl::Status Barrier() { return absl::OkStatus(); }
absl::StatusOr<std::vector<std::string>> AllGather(const std::string& mine) { return std::vector<std::string>{mine}; }
absl::Status Broadcast(void*, int, int) { return absl::OkStatus(); }

#endif  // OVERLAPSCOPE_HAVE_MPI

absl::Status Agree(const absl::Status& local) {
  if (!Active()) return local;
  std::string mine;
  if (!local.ok()) mine = absl::StrCat(static_cast<int>(local.code()), ":", local.message());
  auto all = AllGather(mine);
  if (!all.ok()) return all.status();
  // Ranks with the same message are named together ("ranks 0, 1, 2: ..."), in rank order.
  std::vector<std::pair<std::string, std::vector<int>>> msgs;
  int code = 0;
  for (int r = 0; r < static_cast<int>(all->size()); ++r) {
    const std::string& m = (*all)[r];
    if (m.empty()) continue;
    auto colon = m.find(':');
    int c = 0;
    if (code == 0 && absl::SimpleAtoi(m.substr(0, colon), &c)) code = c;
    std::string text = m.substr(colon + 1);
    auto it = std::find_if(msgs.begin(), msgs.end(), [&](const auto& e) { return e.first == text; });
    if (it == msgs.end()) {
      msgs.push_back({text, {r}});
    } else {
      it->second.push_back(r);
    }
  }
  if (msgs.empty()) return absl::OkStatus();
  std::vector<std::string> lines;
  for (const auto& [text, ranks] : msgs)
    lines.push_back(absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ", absl::StrJoin(ranks, ", "), ": ", text));
  return absl::Status(static_cast<absl::StatusCode>(code == 0 ? static_cast<int>(absl::StatusCode::kInternal) : code),
                      absl::StrJoin(lines, "\n"));
}

}  // namespace overlapscope::workloads::mpi
