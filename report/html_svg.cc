// Inline SVG charts of the HTML pages (report/html_internal.h). Sizes are in CSS pixels; every
// chart scales to its container (viewBox) and carries <title> tooltips with exact values.
#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_internal.h"
#include "report/render.h"

namespace overlapscope::report::html {
namespace {

constexpr int kWidth = 720;

std::string Rect(double x, double y, double w, double h, const std::string& fill, const std::string& title,
                 const std::string& cls = "") {
  return absl::StrFormat(
      "<rect%s x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s</title></rect>",
      cls.empty() ? "" : absl::StrCat(" class=\"", cls, "\""), x, y, std::max(w, 0.0), std::max(h, 0.0), fill,
      Esc(title));
}
std::string Text(double x, double y, const std::string& s, const char* anchor = "start") {
  return absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>", x, y, anchor, Esc(s));
}

}  // namespace

std::string Esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string ClassColor(const std::string& cls) {
  if (cls == "compute") return "#4e79a7";
  if (cls == "comm") return "#f28e2b";
  if (cls == "memory") return "#59a14f";
  if (cls == "sync") return "#9c755f";
  return "#bab0ac";
}

std::string Legend() {
  std::string o = "<div class=\"legend\">";
  for (const char* c : {"compute", "comm", "memory", "sync"})
    absl::StrAppend(&o, "<span><i style=\"background:", ClassColor(c), "\"></i>", c, "</span>");
  absl::StrAppend(&o, "<span><i style=\"background:#76b7b2\"></i>hidden comm</span>",
                  "<span><i style=\"background:#e15759\"></i>exposed comm</span></div>");
  return o;
}

std::string OverlapBars(const DeviceReport& d) {
  if (d.iterations.empty()) return "<p class=\"note\">no iterations on this GPU</p>";
  int64_t max_comm = 1;
  for (const IterationOverlap& it : d.iterations) max_comm = std::max(max_comm, it.stats.comm_ns);
  const int h = 140, bar = std::max(8, std::min(48, (kWidth - 60) / static_cast<int>(d.iterations.size()) - 6));
  std::string o = absl::StrFormat("<svg class=\"chart overlap\" viewBox=\"0 0 %d %d\" role=\"img\">", kWidth, h + 30);
  double x = 50;
  o += Text(4, 14, Us(max_comm));
  for (const IterationOverlap& it : d.iterations) {
    const double hid = h * static_cast<double>(it.stats.hidden_comm_ns) / static_cast<double>(max_comm);
    const double exp = h * static_cast<double>(it.stats.exposed_comm_ns) / static_cast<double>(max_comm);
    const std::string tip =
        absl::StrCat("iteration ", it.iteration, ": hidden ", Dur(it.stats.hidden_comm_ns), ", exposed ",
                     Dur(it.stats.exposed_comm_ns), ", overlap ", Pct(it.stats.overlap_ratio));
    o += Rect(x, h - exp, bar, exp, "#e15759", tip, "exposed");
    o += Rect(x, h - exp - hid, bar, hid, "#76b7b2", tip, "hidden");
    o += Text(x + bar / 2.0, h + 16, absl::StrCat(it.iteration), "middle");
    x += bar + 6;
  }
  return o + "</svg>";
}

std::string IdleBar(const RankReport& rk) {
  std::map<std::string, int64_t> causes;
  int64_t total = 0;
  for (const DeviceReport& d : rk.devices)
    for (const CauseFigures& c : d.idle.causes) {
      causes[c.name] += c.ns;
      total += c.ns;
    }
  if (total <= 0) return "<p class=\"note\">no GPU idle gaps above the threshold</p>";
  static const std::map<std::string, std::string> kColor = {
      {"host_blocked", "#e15759"}, {"launch_bound", "#edc948"}, {"dependency", "#b07aa1"}, {"unknown", "#bab0ac"}};
  std::string o = absl::StrFormat("<svg class=\"chart idle\" viewBox=\"0 0 %d 46\" role=\"img\">", kWidth);
  double x = 0, key_x = 0;  // key: a swatch and "cause time" per cause with time, in bar order
  for (const auto& [name, ns] : causes) {
    const double w = kWidth * static_cast<double>(ns) / static_cast<double>(total);
    auto it = kColor.find(name);
    const std::string color = it == kColor.end() ? "#bab0ac" : it->second;
    o += Rect(x, 0, w, 22, color, absl::StrCat(name, ": ", Dur(ns)), "cause");
    x += w;
    if (ns <= 0) continue;
    const std::string label = absl::StrCat(name, " ", Dur(ns));
    o += absl::StrFormat("<rect x=\"%.1f\" y=\"30\" width=\"9\" height=\"9\" fill=\"%s\"/>", key_x, color);
    o += Text(key_x + 13, 38, label);
    key_x += 13 + 6.5 * static_cast<double>(label.size()) + 14;
  }
  return o + "</svg>";
}

std::string KernelBars(const std::vector<KernelTotal>& kernels, const std::string& cls) {
  std::vector<const KernelTotal*> v;
  for (const KernelTotal& k : kernels)
    if (k.cls == cls) v.push_back(&k);
  if (v.empty()) return "";
  int64_t max_ns = 1;
  for (const KernelTotal* k : v) max_ns = std::max(max_ns, k->total_ns);
  const int row = 18;
  std::string o = absl::StrFormat("<svg class=\"chart kernels\" viewBox=\"0 0 %d %d\" role=\"img\">", kWidth,
                                  row * static_cast<int>(v.size()) + 4);
  for (size_t i = 0; i < v.size(); ++i) {
    const double w = 260.0 * static_cast<double>(v[i]->total_ns) / static_cast<double>(max_ns);
    const double y = static_cast<double>(i) * row;
    o += Rect(0, y + 2, w, row - 4, ClassColor(cls),
              absl::StrCat(v[i]->name, ": ", v[i]->count, " x, total ", Dur(v[i]->total_ns)), "kernel");
    o += Text(266, y + 13, absl::StrCat(Dur(v[i]->total_ns), "  ", Short(v[i]->name, 70)));
  }
  return o + "</svg>";
}

std::string WaitHeatmap(const CrossRank& x) {
  if (x.instances.empty()) return "<p class=\"note\">no collectives matched across ranks</p>";
  std::vector<std::string> labels;
  std::map<std::string, size_t> row_of;  // label -> row: many ranks stay linear, not quadratic
  auto add = [&](const std::string& label) {
    if (row_of.emplace(label, labels.size()).second) labels.push_back(label);
  };
  for (const Participant& p : x.participants) add(p.ref.label);
  for (const Instance& ci : x.instances)
    for (const InstanceRank& r : ci.ranks) add(r.ref.label);
  int64_t max_wait = 1;
  for (const Instance& ci : x.instances)
    for (const InstanceRank& r : ci.ranks) max_wait = std::max(max_wait, r.wait_ns);
  const size_t n = std::min<size_t>(x.instances.size(), 400);
  const double cell = std::max(1.5, std::min(24.0, (kWidth - 90.0) / static_cast<double>(n)));
  const int row = 20;
  std::string o = absl::StrFormat("<svg class=\"chart heatmap\" viewBox=\"0 0 %d %d\" role=\"img\">", kWidth,
                                  row * static_cast<int>(labels.size()) + 20);
  for (size_t li = 0; li < labels.size(); ++li) {
    o += Text(0, static_cast<double>(li) * row + 14, labels[li]);
  }
  for (size_t i = 0; i < n; ++i)
    for (const InstanceRank& r : x.instances[i].ranks) {
      const size_t li = row_of[r.ref.label];
      const double a = std::sqrt(static_cast<double>(std::max<int64_t>(0, r.wait_ns)) / static_cast<double>(max_wait));
      o +=
          Rect(90 + static_cast<double>(i) * cell, static_cast<double>(li) * row + 2, cell, row - 4,
               absl::StrFormat("rgba(225,87,89,%.3f)", 0.06 + 0.94 * a),
               absl::StrCat(x.instances[i].op, " #", x.instances[i].index, ", ", labels[li], ": wait ", Dur(r.wait_ns)),
               "wait");
    }
  o += Text(90, static_cast<double>(labels.size()) * row + 14,
            absl::StrCat("instances 1..", n, " (darker: longer wait, max ", Dur(max_wait), ")"));
  return o + "</svg>";
}

std::string TimelineSvg(const RankTimeline& t) {
  if (t.rows.empty()) return "<p class=\"note\">no GPU activity in the chosen iteration</p>";
  const double span = static_cast<double>(std::max<int64_t>(1, t.end_ns - t.start_ns));
  const int row = 22, left = 150;
  std::string o = absl::StrFormat("<svg class=\"chart timeline\" viewBox=\"0 0 %d %d\" role=\"img\">", kWidth,
                                  row * static_cast<int>(t.rows.size()) + 24);
  for (size_t ri = 0; ri < t.rows.size(); ++ri) {
    const double y = static_cast<double>(ri) * row;
    o += Text(0, y + 15, t.rows[ri].label);
    for (const TimelineSlice& s : t.rows[ri].slices) {
      const double x0 =
          left + (kWidth - left) * static_cast<double>(std::max(s.start_ns, t.start_ns) - t.start_ns) / span;
      const double x1 = left + (kWidth - left) * static_cast<double>(std::min(s.end_ns, t.end_ns) - t.start_ns) / span;
      o += Rect(x0, y + 3, std::max(0.5, x1 - x0), row - 6, ClassColor(s.cls),
                absl::StrCat(s.name, " (", s.cls, "): ", Dur(s.end_ns - s.start_ns)), "slice");
    }
  }
  o += Text(left, static_cast<double>(t.rows.size()) * row + 16,
            absl::StrCat("iteration ", t.iteration, ": ", Dur(t.end_ns - t.start_ns),
                         t.dropped > 0 ? absl::StrCat(" (", t.dropped, " slices not drawn)") : ""));
  return o + "</svg>";
}

}  // namespace overlapscope::report::html
