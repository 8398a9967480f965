#!/usr/bin/env python3
"""Condenses every report.json (overlapscope.report/1) under DIR, for the GPU-check summary.

usage: multirank_summary.py DIR

Per report: how participants were identified and instances matched; per GPU: communication time,
hidden share; per op: instance count, whether EVERY participant of EVERY instance has a sequence
number (else it is named by its order, "#k") and a byte count, the algorithms/protocols/channels
NCCL's profiler plugin reported, and the median skew. Prints FAIL lines for reports whose
collectives lack bytes or that have no communication; exit status 1 if any FAIL was printed.
"""
import json
import os
import statistics
import sys


def summarize(path):
    r = json.load(open(path))
    fails = []
    lines = [f"{os.path.relpath(path, sys.argv[1])}:"]
    for rk in r.get("ranks", []):
        for d in rk.get("devices", []):
            o = d.get("overlap", {})
            ratio = o.get("overlap_ratio")
            lines.append(f"  {rk.get('label')} GPU {d.get('device')}: comm {o.get('comm_ns', 0) / 1e6:.3f} ms, "
                         f"hidden {o.get('hidden_comm_ns', 0) / 1e6:.3f} ms, overlap "
                         f"{'n/a' if ratio is None else f'{100 * ratio:.1f} %'}")
            if not o.get("comm_ns"):
                fails.append(f"FAIL {path}: {rk.get('label')} GPU {d.get('device')} has no communication")
    xr = r.get("collectives_across_ranks") or {}
    inst = xr.get("instances") or []
    lines.append(f"  collectives: {xr.get('matched_instances')} matched by {xr.get('matched_by')}, participants "
                 f"by {xr.get('identified_by')}, unmatched {xr.get('unmatched')}, duplicates {xr.get('duplicates')}")
    by_op = {}
    for i in inst:
        by_op.setdefault(i.get("op"), []).append(i)
    for op, li in sorted(by_op.items(), key=lambda kv: str(kv[0])):
        parts = [p for i in li for p in i.get("ranks", [])]
        no_seq = sum(1 for i in li if i.get("sequence") is None)
        no_bytes = sum(1 for i in li if (i.get("bytes") or -1) <= 0 and (i.get("size_bytes") or -1) <= 0)
        algos = sorted({f"{i.get('algorithm')}/{i.get('protocol')}" for i in li if i.get("algorithm")}) or "unknown"
        chans = sorted({p.get("channels") for p in parts if p.get("channels") is not None})
        seqs = [i.get("sequence") for i in li if i.get("sequence") is not None]
        sizes = sorted({i.get("size_bytes") for i in li})
        comms = sorted({i.get("communicator") or "-" for i in li})
        extra = sorted({f"{i.get('reduce_op')}" for i in li if i.get("reduce_op")} |
                       {f"root/peer {i.get('root_or_peer')}" for i in li if i.get("root_or_peer") is not None})
        lines.append(f"  {op}: {len(li)} instances x {len(parts) // max(1, len(li))} participants; sizes {sizes} B; "
                     f"sequence {min(seqs) if seqs else '-'}..{max(seqs) if seqs else '-'} "
                     f"({no_seq} by order only); bytes missing on {no_bytes}; algorithm/protocol {algos}; "
                     f"channels {chans}; communicators {comms}{'; ' + ', '.join(extra) if extra else ''}; median skew {statistics.median(i['skew_ns'] for i in li) / 1e3:.1f} us")
        # NCCL gives its plugin no sequence number for copy-engine collectives: those are named by
        # their order on the communicator ("#k"), which is how they are matched.
        if no_bytes:
            fails.append(f"FAIL {path}: {op}: {no_bytes} instances without bytes")
    if not inst:
        fails.append(f"FAIL {path}: no collective matched across ranks")
    return lines, fails


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    all_fails = []
    for root, _, files in sorted(os.walk(sys.argv[1])):
        if "report.json" in files:
            try:
                lines, fails = summarize(os.path.join(root, "report.json"))
            except (OSError, ValueError, KeyError, TypeError) as e:
                lines, fails = [], [f"FAIL {root}/report.json: {e}"]
            print("\n".join(lines))
            all_fails += fails
    for f in all_fails:
        print(f)
    print(f"{'FAIL' if all_fails else 'PASS'} multirank reports: {len(all_fails)} problem(s)")
    return 1 if all_fails else 0


if __name__ == "__main__":
    sys.exit(main())
