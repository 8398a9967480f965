// Builds .ovnccl files by hand for the reader and merge tests (format: ovnccl_format.h). Version 2
// (the default) frames records into checksummed blocks: Flush() ends a block, bytes() ends the
// last one; version 1 writes bare records.
#pragma once

#include <cstring>
#include <string>

#include "formats/block_framing.h"
#include "formats/ovnccl_format.h"

namespace overlapscope::testing {

class OvncclWriter {
 public:
  using K = formats::OvncclKind;
  explicit OvncclWriter(uint32_t version = formats::kOvncclVersion) : version_(version) {
    head_.assign(formats::kOvncclMagic, 8);
    head_.append(reinterpret_cast<const char*>(&version), 4);
    head_.append(4, '\0');
  }
  template <typename T>
  OvncclWriter& Rec(K kind, const T& payload, const std::string& tail = "") {
    formats::OvncclRecordHeader h{static_cast<uint16_t>(kind), static_cast<uint16_t>(sizeof(T) + tail.size()), 0};
    Put(&h, sizeof(h));
    Put(&payload, sizeof(T));
    bytes_ += tail;
    ++records_;
    return *this;
  }
  OvncclWriter& Process(int64_t pid) { return Rec(K::kProcess, formats::OvncclProcess{pid, 1, 0, 5}); }
  OvncclWriter& Comm(uint64_t ctx, uint64_t comm_id, int nranks, int rank, const std::string& name = "") {
    return Rec(K::kComm, formats::OvncclComm{ctx, comm_id, 1, 1, nranks, rank, static_cast<uint32_t>(name.size())},
               name);
  }
  OvncclWriter& Api(uint64_t id, uint64_t parent, uint64_t ctx, uint32_t type, int64_t t, int64_t tid,
                    const char* func = "", uint64_t count = 0, const char* dtype = "", int64_t ordinal = -1) {
    formats::OvncclApiStart r{};
    r.id = id, r.parent = parent, r.context = ctx, r.type = type, r.host_ns = t, r.tid = tid, r.count = count;
    r.root = -1, r.ordinal = ordinal;
    std::strncpy(r.func, func, 15), std::strncpy(r.dtype, dtype, 15);
    return Rec(K::kApiStart, r);
  }
  OvncclWriter& Coll(uint64_t id, uint64_t parent, uint64_t ctx, int64_t t, int64_t tid, const char* func,
                     uint64_t count, const char* dtype, int64_t seq, int nch, const char* algo, const char* proto,
                     int rank, uint32_t type = formats::kTypeColl) {
    formats::OvncclCollStart r{};
    r.id = id, r.parent = parent, r.context = ctx, r.host_ns = t, r.tid = tid, r.type = type, r.rank = rank;
    r.seq = seq, r.count = count, r.nchannels = static_cast<uint8_t>(nch), r.root_or_peer = 0;
    std::strncpy(r.func, func, 15), std::strncpy(r.dtype, dtype, 15);
    std::strncpy(r.algo, algo, 15), std::strncpy(r.proto, proto, 15);
    return Rec(K::kCollStart, r);
  }
  OvncclWriter& ChStart(uint64_t id, uint64_t parent, uint64_t ptimer, uint32_t ch) {
    return Rec(K::kKernelChStart, formats::OvncclKernelChStart{id, parent, 1, 0, ptimer, ch, 0});
  }
  OvncclWriter& ChStop(uint64_t id, uint64_t ptimer) {
    return Rec(K::kKernelChStop, formats::OvncclKernelChStop{id, 0, ptimer});
  }
  OvncclWriter& Stop(uint64_t id, int64_t t, int64_t tid = 0) { return Rec(K::kStop, formats::OvncclStop{id, t, tid}); }
  // Ends the current block (version 2).
  OvncclWriter& Flush() {
    if (version_ >= 2 && !bytes_.empty()) {
      char h[formats::kBlockHeaderBytes];
      formats::SealBlock(bytes_.data(), static_cast<uint32_t>(bytes_.size()), h);
      body_.append(h, sizeof(h));
    }
    body_ += bytes_;
    bytes_.clear();
    return *this;
  }
  std::string bytes() const {
    OvncclWriter copy = *this;
    copy.Flush();
    return copy.head_ + copy.body_;
  }
  int records() const { return records_; }

 private:
  void Put(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  uint32_t version_;
  std::string head_, body_;
  std::string bytes_;  // records of the block being written
  int records_ = 0;
};

}  // namespace overlapscope::testing
