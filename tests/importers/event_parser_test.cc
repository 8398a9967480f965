// ParseEvent's memory of separators (RawEvent::separators and arg_separators) must never change a result: each
// event parsed after thousands of others (the memory warm) gives what a fresh parse gives. The
// same for ThreadOut's memory of interned names.
#include "importers/kineto/event_parser.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace overlapscope::import {
namespace {

using scan::Scan;

// Kineto's layouts, and shapes near them: other spacing, escaped and unknown keys, missing or
// doubled separators.
const std::vector<std::string>& Events() {
  static const std::vector<std::string> kEvents = {
      "{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 628, \"tid\": 628,\n"
      "    \"ts\": 4430935779136.913, \"dur\": 0.372,\n    \"args\": {\n      \"External id\": 25936046,      "
      "\"cbid\": 461, \"correlation\": 25962252\n    }\n  }",
      "{\n    \"ph\": \"f\", \"id\": 25962252, \"pid\": 628, \"tid\": 628, \"ts\": 4430935779136.913,\n    \"cat\": "
      "\"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }",
      "{\n    \"ph\": \"s\", \"id\": 25962258, \"pid\": 628, \"tid\": 628, \"ts\": 4430935779143.678,\n    \"cat\": "
      "\"ac2g\", \"name\": \"ac2g\"\n  }",
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7,\n    \"ts\": 12.5, \"dur\": "
      "3,\n    \"args\": {\n      \"device\": 0, \"stream\": 7, \"correlation\": 9, \"grid\": [1, 2, 3]\n    }\n  }",
      "{\n    \"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0,\n    \"args\": {\n      \"name\": "
      "\"python\"\n    }\n  }",
      // The same keys, other spacing: the memory holds the layouts above, these must not match.
      "{\n    \"ph\":  \"X\", \"cat\":\"cuda_runtime\", \"name\" : \"a\",\"pid\": 1, \"tid\":\t2, \"ts\": 1, \"dur\": "
      "2}",
      "{\"ph\": \"f\",\n\"id\": 3, \"pid\": 628, \"tid\": 628, \"ts\": 4430935779136.913,\n    \"cat\": \"ac2g\",  "
      "\"name\": \"ac2g\", \"bp\": \"e\"}",
      "{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"n\", \"pid\": 628, \"tid\": 628,\n    \"ts\":  "
      "4430935779136.913, \"dur\": 0.372\n  }",
      // Escaped, unknown and repeated keys; a key cut short.
      "{\n    \"p\\u0068\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": "
      "1}",
      "{\n    \"ph\": \"X\", \"phx\": 1, \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1}",
      "{\n    \"ph\": \"X\", \"ph\": \"i\", \"cat\": \"cpu_op\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1}",
      // Malformed: a missing ':' or ',', a doubled ',', a trailing ',', a value missing.
      "{\n    \"ph\": \"X\", \"cat\" \"kernel\", \"name\": \"k\"}",
      "{\n    \"ph\": \"X\" \"cat\": \"kernel\", \"name\": \"k\"}",
      "{\n    \"ph\": \"X\",, \"cat\": \"kernel\"}",
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\",\n  }",
      "{\n    \"ph\": \"X\", \"cat\": , \"name\": \"k\"}",
      "{}",
      "{ }",
      // Args in Kineto's layouts (ParseArgs' memory: per cat, per position, two layouts), then
      // the same keys with other spacing, an escaped key, an unknown key where a known one was, a
      // value of the wrong type, a separator longer than the memory's 48 bytes, and more args
      // than it has positions.
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7,\n    \"ts\": 1, "
      "\"dur\": 2,\n    \"args\": {\n      \"External id\": 7431687,      \"queued\": 0, \"device\": 0, "
      "\"context\": 1,      \"stream\": 7, \"correlation\": 7458181,      \"registers per thread\": 168,      "
      "\"shared memory\": 213188,      \"blocks per SM\": 1.000000,      \"warps per SM\": 12.000000,      "
      "\"grid\": [2, 66, 1],      \"block\": [384, 1, 1],      \"est. achieved occupancy %\": 0\n    }\n  }",
      "{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 628, \"tid\": 628,\n    \"ts\": "
      "1, \"dur\": 2,\n    \"args\": {\n      \"External id\": 1540,\"Sequence number\": 0, \"Fwd thread id\": 0, "
      "\"Record function id\": 0, \"Concrete Inputs\": [\"\", \"\"], \"Input type\": [\"c10::Half\", "
      "\"c10::Half\"], \"Input Strides\": [[4096, 1], [4096, 1]], \"Input Dims\": [[8192, 4096], [4096, 4096]], "
      "\"Ev Idx\": 3\n    }\n  }",
      "{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 628, \"tid\": "
      "628,\n    \"ts\": 1, \"dur\": 2,\n    \"args\": {\n      \"External id\": 1543,\"Record function id\": 0, "
      "\"Collective name\": \"all_to_allv\", \"dtype\": \"Half\", \"Rank\": 0, \"Out msg nelems\": 33554432, "
      "\"Process Group Name\": \"0\", \"Group size\": 2, \"Ev Idx\": 6, \"In msg nelems\": 33554432\n    }\n  }",
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7,\n    \"ts\": 1, "
      "\"dur\": 2,\n    \"args\": {\n      \"External id\":  7431687,      \"queued\":\t0, \"device\" : 0, "
      "\"cont\\u0065xt\": 1,      \"streamx\": 7, \"correlation\": \"9\",      \"registers per thread\": 168,"
      "\"shared memory\": 213188}}",
      "{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"n\", \"pid\": 628, \"tid\": 628, \"ts\": 1, "
      "\"args\": {\n      \"External id\": 1540,                                        \"Sequence number\": 0, "
      "\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4, \"e\": 5, \"f\": 6, \"g\": 7, \"h\": 8, \"i\": 9, \"j\": 10, "
      "\"Seq\": 1, \"Seq\": 2, \"Seq\": 3, \"Seq\": 4, \"Seq\": 5, \"Seq\": 6, \"Seq\": 7, \"Seq\": 8, "
      "\"Seq\": 9, \"Seq\": 10, \"Seq\": 11, \"Seq\": 12, \"Seq\": 13, \"Seq\": 14, \"stream\": N/A}}",
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"args\": {\"device\": 0 \"stream\": 7}}",
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"args\": {\"device\": 0,, \"stream\": 7}}",
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"args\": {\"device\": 0, }}",
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"args\": {\"device\" 0}}",
      "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"args\": { }}",
  };
  return kEvents;
}

struct Result {
  Scan scan;
  ptrdiff_t after = -1, err_pos = -1;
  std::string err, text;  // text: every field of the RawEvent
};

Result Parse(const std::string& text, RawEvent* ev) {
  const std::string data = text + std::string(scan::kPad, '\0');
  const char* base = data.data();
  const char *after = nullptr, *err_pos = nullptr, *err = nullptr;
  Result r;
  r.scan = ParseEvent(base, base + text.size(), &after, ev, &err_pos, &err);
  if (r.scan == Scan::kOk) r.after = after - base;
  if (r.scan == Scan::kError) r.err_pos = err_pos - base, r.err = err;
  if (r.scan != Scan::kOk) return r;
  // Values only where their flag or slot says they were read (Reset leaves the others).
  auto slot = [](Slot s, int64_t v) {
    return std::to_string(static_cast<int>(s)) + (s == Slot::kMissing ? "" : std::to_string(v));
  };
  r.text = std::string(ev->ph) + "|" + std::string(ev->cat) + "|" + std::string(ev->name) + "|" +
           (ev->has_ts ? std::to_string(ev->ts_ns) : "-") + "|" + (ev->has_dur ? std::to_string(ev->dur_ns) : "-") +
           "|" + slot(ev->pid_slot, ev->pid) + "|" + slot(ev->tid_slot, ev->tid) + "|" + slot(ev->id_slot, ev->id) +
           "|" + std::to_string(ev->has) + "|" + std::to_string(ev->bad_has) + "|" + (ev->bad ? ev->bad : "-") + "|" +
           std::to_string(ev->repaired) + "|" + std::to_string(ev->non_json);
  // Each arg that was read, where its value lives: grid and block in their own fields, the
  // string args in arg_str, the others in arg_int.
  for (int i = 0; i < static_cast<int>(ArgKey::kCount); ++i) {
    const auto k = static_cast<ArgKey>(i);
    if (!ev->Has(k)) continue;
    if (k == ArgKey::kGrid || k == ArgKey::kBlock) {
      const model::Dim3& d = k == ArgKey::kGrid ? ev->grid : ev->block;
      r.text += "|" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z);
    } else if (k == ArgKey::kCollectiveName || k == ArgKey::kDtype || k == ArgKey::kPgName || k == ArgKey::kName ||
               k == ArgKey::kLabels) {
      r.text += "|" + std::string(ev->Str(k));
    } else {
      r.text += "|" + std::to_string(ev->Int(k));
    }
  }
  for (const std::string& u : ev->unknown_args) r.text += "|" + u;
  return r;
}

TEST(EventParser, SeparatorMemoryNeverChangesAResult) {
  std::mt19937 rng(26);
  RawEvent warm;  // one parse's memory, across every event below
  int ok = 0, errors = 0, more = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = Events()[rng() % Events().size()];
    if (rng() % 4 == 0) text.resize(rng() % (text.size() + 1));  // cut by the window's end
    if (text.empty() || text[0] != '{') continue;
    const Result got = Parse(text, &warm);
    RawEvent cold;
    const Result want = Parse(text, &cold);
    ASSERT_EQ(got.scan, want.scan) << text;
    ASSERT_EQ(got.after, want.after) << text;
    ASSERT_EQ(got.err_pos, want.err_pos) << text;
    ASSERT_EQ(got.err, want.err) << text;
    ASSERT_EQ(got.text, want.text) << text;
    ok += got.scan == Scan::kOk, errors += got.scan == Scan::kError, more += got.scan == Scan::kNeedMore;
  }
  EXPECT_GT(ok, 10000);
  EXPECT_GT(errors, 1000);
  EXPECT_GT(more, 2000);
}

// ThreadOut::InternName's memory of names must give the table's ids, and leave the table as
// Intern alone leaves it (same names in the same order). The pool has more names than the
// memory has slots, names alike but for their middle (the same slot, told apart by the bytes),
// short ones (1-7 bytes) and the empty name.
TEST(ThreadOut, InternNameGivesInternsIds) {
  std::mt19937 rng(27);
  std::vector<std::string> pool = {"", "a", "ab", "abc", "ac2g", "kernel", "cudaLaunchKernel", "aten::mm"};
  for (int i = 0; i < 600; ++i) {
    std::string mid(rng() % 40, 'x');
    if (!mid.empty()) mid[rng() % mid.size()] = static_cast<char>('a' + rng() % 26);
    pool.push_back("nvjet_sm90_" + mid + "_NNT");  // same ends, often the same length
  }
  for (int i = 0; i < 400; ++i) pool.push_back(std::to_string(rng() % 100000));
  ThreadOut out;
  model::StringTable plain;
  int hits_possible = 0;
  for (int i = 0; i < 50000; ++i) {
    const std::string& name = pool[rng() % pool.size()];
    const size_t before = plain.size();
    const model::StringId want = plain.Intern(name);
    hits_possible += plain.size() == before;
    ASSERT_EQ(out.InternName(name), want) << name;
  }
  ASSERT_EQ(out.strings.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    ASSERT_EQ(out.strings.Get(static_cast<model::StringId>(i)), plain.Get(static_cast<model::StringId>(i)));
  }
  EXPECT_GT(hits_possible, 40000);
}

}  // namespace
}  // namespace overlapscope::import
