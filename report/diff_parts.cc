// Kernels by name and class, collectives by (op, communicator, size), and the verdict of a report
// comparison (report/diff.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "report/diff_internal.h"

namespace overlapscope::report::diff_internal {
namespace {

std::vector<double> PerIteration(const KernelTotal& k) {
  std::vector<double> v;
  for (const IterationNs& x : k.per_iteration) v.push_back(static_cast<double>(x.ns));
  return v;
}

double D(int64_t v) { return static_cast<double>(v); }

}  // namespace

std::vector<KernelDiff> DiffKernels(const Report& base, const Report& test, bool* limited) {
  std::map<std::pair<std::string, std::string>, std::pair<const KernelTotal*, const KernelTotal*>> by;
  for (const KernelTotal& k : base.top_kernels) by[{k.kind, k.name}].first = &k;
  for (const KernelTotal& k : test.top_kernels) by[{k.kind, k.name}].second = &k;
  auto full = [](const Report& r) {  // every class lists fewer than top_n: the list is complete
    std::map<std::string, int64_t> per_class;
    for (const KernelTotal& k : r.top_kernels) ++per_class[k.cls];
    for (const auto& [cls, n] : per_class)
      if (n >= r.options.top_n) return false;
    return true;
  };
  *limited = !full(base) || !full(test);
  std::vector<KernelDiff> out;
  for (const auto& [key, p] : by) {
    const auto [b, t] = p;
    KernelDiff k;
    const KernelTotal& any = t ? *t : *b;
    k.cls = any.cls;
    k.kind = any.kind;
    k.name = any.name;
    k.status = !b ? "new" : !t ? "gone" : (b->count == t->count && b->total_ns == t->total_ns) ? "same" : "changed";
    if (b) k.count.base = D(b->count), k.total_ns.base = D(b->total_ns), k.median_ns.base = D(b->median_ns);
    if (t) k.count.test = D(t->count), k.total_ns.test = D(t->total_ns), k.median_ns.test = D(t->median_ns);
    k.per_iteration = Series("per_iteration_ns", b ? PerIteration(*b) : std::vector<double>{},
                             t ? PerIteration(*t) : std::vector<double>{});
    out.push_back(std::move(k));
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelDiff& a, const KernelDiff& b) {
    return std::fabs(a.total_ns.test.value_or(0) - a.total_ns.base.value_or(0)) >
           std::fabs(b.total_ns.test.value_or(0) - b.total_ns.base.value_or(0));
  });
  return out;
}

std::vector<ClassDiff> DiffClasses(const Report& base, const Report& test) {
  std::vector<ClassDiff> out;
  auto find = [&](const std::string& cls) {
    auto it = std::find_if(out.begin(), out.end(), [&](const ClassDiff& c) { return c.cls == cls; });
    return it == out.end() ? &out.emplace_back(ClassDiff{cls, {}, {}}) : &*it;
  };
  for (const ClassTotal& c : base.classes.totals) {
    ClassDiff* d = find(c.cls);
    d->count.base = D(c.count);
    d->total_ns.base = D(c.total_ns);
  }
  for (const ClassTotal& c : test.classes.totals) {
    ClassDiff* d = find(c.cls);
    d->count.test = D(c.count);
    d->total_ns.test = D(c.total_ns);
  }
  return out;
}

std::vector<CollectiveDiff> DiffCollectives(const Report& base, const Report& test) {
  struct Acc {
    std::vector<double> bus, exposed, skew, busbw;
  };
  using Key = std::tuple<std::string, std::string, int64_t>;
  std::map<Key, std::pair<Acc, Acc>> by;
  auto add = [](const Instance& ci, Acc* a) {
    a->bus.push_back(D(ci.bus_time_ns));
    a->skew.push_back(D(ci.skew_ns));
    if (ci.busbw_gbps) a->busbw.push_back(*ci.busbw_gbps);
    double sum = 0;
    int64_t n = 0;
    for (const InstanceRank& r : ci.ranks)
      if (r.exposed_ns) sum += D(*r.exposed_ns), ++n;
    if (n > 0) a->exposed.push_back(sum / D(n));
  };
  for (const Instance& ci : base.collectives_across_ranks.instances)
    add(ci, &by[{ci.op, ci.communicator, ci.size_bytes.value_or(-1)}].first);
  for (const Instance& ci : test.collectives_across_ranks.instances)
    add(ci, &by[{ci.op, ci.communicator, ci.size_bytes.value_or(-1)}].second);
  auto median = [](const std::vector<double>& v) -> std::optional<double> {
    if (v.empty()) return std::nullopt;
    return MedianOf(v);
  };
  std::vector<CollectiveDiff> out;
  for (const auto& [key, p] : by) {
    const auto& [b, t] = p;
    CollectiveDiff c{std::get<0>(key), std::get<1>(key), std::get<2>(key), {}, {}, {}, {}, {}};
    c.instances = {D(static_cast<int64_t>(b.bus.size())), D(static_cast<int64_t>(t.bus.size()))};
    c.bus_time_ns = {median(b.bus), median(t.bus)};
    c.exposed_ns = {median(b.exposed), median(t.exposed)};
    c.skew_ns = {median(b.skew), median(t.skew)};
    c.busbw_gbps = {median(b.busbw), median(t.busbw)};
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace overlapscope::report::diff_internal
