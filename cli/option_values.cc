#include "cli/option_values.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace overlapscope::cli {
namespace {

std::string Quote(const std::string& flag, const std::string& text) {
  return absl::StrCat("--", flag, " '", text, "'");
}

// DIGITS [. DIGITS] [e|E [+|-] DIGITS], at least one digit before the exponent. strtod alone
// would also take "nan", "inf", "0x1p3", leading spaces and signs.
bool PlainDecimal(std::string_view s) {
  size_t i = 0, digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) ++digits;
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

const char* FileKind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "not a regular file";
}

}  // namespace

absl::StatusOr<int64_t> ParseTimeOption(const std::string& flag, const std::string& text) {
  std::string_view num = text;  // std::string_view: suffix handling only, never passed to absl
  double scale = 1e3;           // bare number: µs
  for (auto [suffix, s] : {std::pair<std::string_view, double>{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}) {
    if (num.size() > suffix.size() && num.substr(num.size() - suffix.size()) == suffix) {
      num.remove_suffix(suffix.size());
      scale = s;
      break;
    }
  }
  if (!PlainDecimal(num))
    return absl::InvalidArgumentError(absl::StrCat(Quote(flag, text),
                                                   " is not a time (a non-negative decimal number with unit ns, us, "
                                                   "ms or s, e.g. 5us, 2000ns, 0.1ms; bare = us)"));
  const double v = std::strtod(std::string(num).c_str(), nullptr) * scale;
  // Also refuses overflow to inf ("1e400"): !(v <= max) is true for inf and NaN alike.
  if (!(v <= static_cast<double>(kMaxOptionTimeNs)))
    return absl::InvalidArgumentError(
        absl::StrCat(Quote(flag, text), " is out of range (at most ", kMaxOptionTimeNs / 1'000'000'000, "s)"));
  return static_cast<int64_t>(std::llround(v));
}

absl::StatusOr<int64_t> ParseIntOption(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  bool digits = !text.empty();
  for (char c : text) digits &= c >= '0' && c <= '9';
  if (!digits) return absl::InvalidArgumentError(absl::StrCat(Quote(flag, text), " is not a non-negative integer"));
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < min || v > max)
    return absl::InvalidArgumentError(absl::StrCat(Quote(flag, text), " is out of range (", min, " to ", max, ")"));
  return static_cast<int64_t>(v);
}

absl::StatusOr<std::string> ReadOptionFile(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    std::string why = absl::StrCat(path, ": cannot open: ", std::strerror(e));
    if (e == ENOENT) return absl::NotFoundError(why);
    if (e == EACCES) return absl::PermissionDeniedError(why);
    return absl::InvalidArgumentError(why);
  }
  struct stat st;
  std::string out;
  absl::Status status;
  if (::fstat(fd, &st) != 0) {
    status = absl::InvalidArgumentError(absl::StrCat(path, ": cannot stat: ", std::strerror(errno)));
  } else if (!S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat(path, ": ", FileKind(st.st_mode), ", not a file"));
  } else if (st.st_size > max_bytes) {
    status = absl::InvalidArgumentError(absl::StrCat(path, ": ", st.st_size, " bytes, more than ", max_bytes));
  } else {
    out.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        status = absl::InvalidArgumentError(absl::StrCat(path, ": cannot read: ", std::strerror(errno)));
        break;
      }
      if (n == 0) break;  // shrank while read: take what is there
      got += static_cast<size_t>(n);
    }
    out.resize(got);
  }
  ::close(fd);
  if (!status.ok()) return status;
  return out;
}

}  // namespace overlapscope::cli
