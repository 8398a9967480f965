#!/usr/bin/env python3
"""Where the async all-to-all's small loss comes from (docs/RESULTS.md "Why the async all-to-all
predictions miss their small loss (branch h34c)"): every `a2a_sync -> a2a_async` pair of
tools/replay_pairs.py, read from the Kineto JSON (no replay, no overlapscope binary).

usage: tools/a2a_loss.py [--instances]

make_traces.py's program, per layer i (4 layers): the layer's GEMM G_i (host range "gemm"), the
all-to-all SR_i (ncclDevKernel_SendRecv, range "alltoall"), the independent GEMM I_i ("gemm_indep");
the next layer's G_{i+1} consumes SR_i. Sync: one stream, G_i SR_i I_i G_{i+1}. Async: SR_i on
NCCL's stream after G_i's end, I_i beside it, G_{i+1} behind a cross-stream event wait on SR_i.
Every GEMM is preceded by a ~1 µs memset on its stream (cuBLAS workspace); it counts as a gap.

Per rank, a layer's period is G_i's start to G_{i+1}'s start (the next iteration's G_0 after the
last layer), and it splits exactly into: G_i's duration, I_i's, the all-to-all's time on the path
after its rank was ready -- split into the wait for the later rank ("wait") and the rest
("transfer": end less the later rank's ready) -- and the gaps. Ready: the SR's start in the sync
program, its GEMM I_i's end (or its start, if later) in the async one, which is what the model
makes it wait for (analyze/replay/contention.h). Each term is summed over the iteration's 4 layers,
then the median over iterations is taken (per-term medians: their sum is near, not equal to, the
median period). The table prints, per pair and rank, sync -> async change in µs per iteration:
period, G, I, wait, transfer, gaps, and the sum of the five terms; then per instance (medians):
(1) SR's start less I's end (negative: inside I) and SR's end less (I's end + the rank's median
  sync SR duration, the "alone" figure), and less (the later rank's ready + the median sync
  transfer: the model's prediction of it);
(2) I beside SR (async) against the sync GEMMs that follow a GEMM (alone, same predecessor), and as
  a control of GPU-wide speed the async G_{i+1} (after SR, alone) against the sync I (after SR,
  alone); "contention" = the first difference less the second;
(3) the join: SR's end to the next activity of the compute stream (memset) in async (cross-stream
  event wait) against the same gap on one stream in sync, and the median gap between back-to-back
  activities of one stream in the sync trace (all kernels and memsets 0-20 µs apart);
(4) the host: per iteration the smallest slack (GPU start less the end of its launch call) of the
  GEMMs, median over iterations (host on the path where it is ~0), and the CUDA runtime/driver
  calls per layer (sync -> async).
(Below the tables: whether the SendRecv kernel's launch configuration and message are the same in
both programs, and the smallest slack of any GEMM of a profiled iteration.)
And per capture set the transfer (end less the later rank's ready) of the instances whose ranks were
ready within 5 µs of each other, sync -> async: the all-to-all's own change with the skew left out.
Then per pair the change split into the GEMMs with the wait for the slower GPU, the all-to-all's
transfer and the gaps (means over ranks, µs and % of the sync period), and per capture set the
per-instance figures (1)-(4) as min to max (median) over its pair-ranks.
--instances: also print one line per (pair, rank, iteration, layer) for the async program.
"""
import gzip, json, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replay_pairs  # noqa: E402

ROLE_RANGES = ("gemm", "gemm_indep", "alltoall")
SR_CONFIG = ("grid", "block", "registers per thread", "shared memory", "In msg nelems", "Out msg nelems")


def load(path):
    """Per iteration (ProfilerStep index), per layer: dict with G, I, SR (each {ts, end}), the memset
    before G and before I, and the runtime call count of the layer; plus the stream gaps and slacks."""
    ev = json.load(gzip.open(path))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("name", "").startswith("ProfilerStep"))
    ranges = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in ev
                    if e.get("cat") == "user_annotation" and e["name"] in ROLE_RANGES)
    calls = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    launch = {e["args"]["correlation"]: e for e in calls if "correlation" in e.get("args", {})}

    def where(ts):
        it = next((i for i, (s, t) in enumerate(steps) if s <= ts <= t), None)
        role = next((n for s, t, n in ranges if s <= ts <= t), None)
        return it, role

    gpu = sorted((e for e in ev if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")), key=lambda e: e["ts"])
    acts, sr_config = [], set()
    for e in gpu:
        call = launch.get(e["args"].get("correlation"))
        if call is None:
            continue
        it, role = where(call["ts"])
        kind = "sr" if "SendRecv" in e["name"] else "memset" if e["cat"] == "gpu_memset" else "gemm"
        if kind == "sr":
            sr_config.add(tuple(str(e["args"].get(k)) for k in SR_CONFIG))
        acts.append({"it": it, "role": role, "kind": kind, "ts": e["ts"], "end": e["ts"] + e["dur"],
                     "stream": e["args"].get("stream"), "slack": e["ts"] - (call["ts"] + call["dur"])})
    iters = {}
    for a in acts:
        if a["it"] is None:
            continue
        iters.setdefault(a["it"], []).append(a)
    layers = {}
    for it, xs in iters.items():
        g = [a for a in xs if a["kind"] == "gemm" and a["role"] == "gemm"]
        ind = [a for a in xs if a["kind"] == "gemm" and a["role"] == "gemm_indep"]
        sr = [a for a in xs if a["kind"] == "sr"]
        if not (len(g) == len(ind) == len(sr) and g):
            continue
        layers[it] = [{"G": a, "I": b, "SR": c} for a, b, c in zip(g, ind, sr)]
    by_stream = {}
    for a in acts:
        by_stream.setdefault(a["stream"], []).append(a)
    b2b = []
    for xs in by_stream.values():
        b2b += [y["ts"] - x["end"] for x, y in zip(xs, xs[1:]) if 0 <= y["ts"] - x["end"] < 20]
    # the next activity on the compute stream after each SR's end (the join in async, same stream in sync)
    compute = next(s for s, xs in by_stream.items() if any(a["kind"] == "gemm" for a in xs))
    after_sr = {}
    for a in acts:
        if a["kind"] == "sr":
            nxt = [x["ts"] for x in by_stream[compute] if x["ts"] >= a["end"] - 0.5]
            if nxt:
                after_sr[id(a)] = min(nxt) - a["end"]
    n_calls = len([c for c in calls if any(s <= c["ts"] <= t for s, t in steps)])
    n_layers = sum(len(v) for v in layers.values()) or 1
    slack_min = min((a["slack"] for a in acts if a["it"] is not None and a["kind"] == "gemm"), default=None)
    return {"sr_config": sr_config, "slack_min": slack_min, "layers": layers, "b2b": b2b, "after_sr": after_sr, "calls_per_layer": n_calls / n_layers}


def ready(layer, asynchronous):
    sr, ind = layer["SR"], layer["I"]
    return max(sr["ts"], ind["end"]) if asynchronous else sr["ts"]


def rank_terms(ranks, r, asynchronous):
    """Per iteration of rank r: the period and the five terms (µs, summed over the layers)."""
    its = sorted(set.intersection(*(set(x["layers"]) for x in ranks)))
    out = []
    for it in its:
        if it + 1 not in ranks[r]["layers"]:
            continue
        ls = ranks[r]["layers"][it]
        nxt = ranks[r]["layers"][it + 1][0]["G"]["ts"]
        t = {"period": nxt - ls[0]["G"]["ts"], "G": 0.0, "I": 0.0, "wait": 0.0, "transfer": 0.0}
        for k, lay in enumerate(ls):
            later = max(ready(x["layers"][it][k], asynchronous) for x in ranks)
            mine = ready(lay, asynchronous)
            t["G"] += lay["G"]["end"] - lay["G"]["ts"]
            t["I"] += lay["I"]["end"] - lay["I"]["ts"]
            t["wait"] += later - mine
            t["transfer"] += lay["SR"]["end"] - later
        t["gaps"] = t["period"] - t["G"] - t["I"] - t["wait"] - t["transfer"]
        out.append(t)
    return out


def instances(ranks, r, asynchronous):
    its = sorted(set.intersection(*(set(x["layers"]) for x in ranks)))
    for it in its:
        for k, lay in enumerate(ranks[r]["layers"][it]):
            later = max(ready(x["layers"][it][k], asynchronous) for x in ranks)
            yield it, k, lay, later


def even_transfer(xs):
    sync, asy = [v for x in xs for v in x["even"][0]], [v for x in xs for v in x["even"][1]]
    if not (sync and asy):
        return "- (no instance)"
    return f"{med(sync):.1f} -> {med(asy):.1f} µs ({len(sync)}, {len(asy)})"


def med(v):
    return statistics.median(v) if v else float("nan")


def pair_rows(base, target, show_instances):
    n = len([f for f in os.listdir(base) if f.startswith("rank") and f.endswith(".json.gz")])
    s = [load(os.path.join(base, f"rank{r}.json.gz")) for r in range(n)]
    a = [load(os.path.join(target, f"rank{r}.json.gz")) for r in range(n)]
    rows = []
    for r in range(n):
        ts, ta = rank_terms(s, r, False), rank_terms(a, r, True)
        d = {k: med([x[k] for x in ta]) - med([x[k] for x in ts]) for k in ts[0]}
        si = list(instances(s, r, False))
        ai = list(instances(a, r, True))
        sr_alone = med([l["SR"]["end"] - l["SR"]["ts"] for _, _, l, _ in si])
        transfer_alone = med([l["SR"]["end"] - later for _, _, l, later in si])
        start_vs_i = med([l["SR"]["ts"] - l["I"]["end"] for _, _, l, _ in ai])
        end_vs_alone = med([l["SR"]["end"] - (l["I"]["end"] + sr_alone) for _, _, l, _ in ai])
        end_vs_model = med([l["SR"]["end"] - (later + transfer_alone) for _, _, l, later in ai])
        beside = med([l["I"]["end"] - l["I"]["ts"] for _, _, l, _ in ai])
        # sync: G_{i+1} follows I_i (a GEMM); I_i follows SR_i. async: G_{i+1} follows SR_i (the join).
        alone_after_gemm = med([l["G"]["end"] - l["G"]["ts"] for _, _, l, _ in si])
        ctrl = med([l["G"]["end"] - l["G"]["ts"] for _, _, l, _ in ai]) - \
            med([l["I"]["end"] - l["I"]["ts"] for _, _, l, _ in si])
        join_a = med([a[r]["after_sr"][id(l["SR"])] for _, _, l, _ in ai if id(l["SR"]) in a[r]["after_sr"]])
        join_s = med([s[r]["after_sr"][id(l["SR"])] for _, _, l, _ in si if id(l["SR"]) in s[r]["after_sr"]])
        slack = lambda x: med([min(l[k]["slack"] for l in x["layers"][it] for k in ("G", "I"))
                               for it in x["layers"]])
        # the transfer where all ranks were ready within 5 µs (the skew that lengthens it left out)
        even = lambda x, asy: [l["SR"]["end"] - later for it, k, l, later in instances(x, r, asy)
                               if later - min(ready(y["layers"][it][k], asy) for y in x) < 5]
        rows.append({"same_sr": s[r]["sr_config"] == a[r]["sr_config"] and len(a[r]["sr_config"]) == 1,
                     "slack_min": min(s[r]["slack_min"], a[r]["slack_min"]), "even": (even(s, False), even(a, True)), "rank": r, "d": d, "sum": sum(d[k] for k in ("G", "I", "wait", "transfer", "gaps")),
                     "periods": (med([x["period"] for x in ts]), med([x["period"] for x in ta])),
                     "start_vs_i": start_vs_i, "end_vs_alone": end_vs_alone, "end_vs_model": end_vs_model,
                     "beside": beside, "alone": alone_after_gemm, "ctrl": ctrl,
                     "contention": beside - alone_after_gemm - ctrl, "join": (join_s, join_a),
                     "b2b": med(s[r]["b2b"]), "slack": (slack(s[r]), slack(a[r])),
                     "calls": (s[r]["calls_per_layer"], a[r]["calls_per_layer"])})
        if show_instances:
            for it, k, l, later in ai:
                print(f"  rank {r} it {it} layer {k}: SR start-I end {l['SR']['ts'] - l['I']['end']:+.1f}, "
                      f"SR end-(later ready+transfer) {l['SR']['end'] - later - transfer_alone:+.1f}, "
                      f"I {l['I']['end'] - l['I']['ts']:.1f}, G {l['G']['end'] - l['G']['ts']:.1f} µs")
    return rows


# Per-instance summaries by capture set: (label, (pair name, rank count) -> bool).
# kineto was captured on 2 x H200, whatif_h200 on 2 and 4 x H200; the others on H100.
def _h200(name):
    return name == "kineto" or "h200" in name


GROUPS = [
    ("2 × H100, last round not full", lambda n, r: r == 2 and not _h200(n) and "m8448" not in n),
    ("2 × H100, rows 8448 (last round full)", lambda n, r: "m8448" in n),
    ("2 × H200", lambda n, r: r == 2 and _h200(n)),
    ("4 × H100", lambda n, r: r == 4 and not _h200(n)),
    ("4 × H200", lambda n, r: r == 4 and _h200(n)),
]


def print_sets(per_pair):
    """Per capture set (GROUPS): the per-instance figures, then the median split of the pairs."""
    print("\n| captures | pair-ranks | (1) SR start − I end | SR end − (I end + alone) | SR end − model "
          "| (2) I beside SR − alone | control | contention | (3) join sync | join async | b2b sync "
          "| (4) host slack (min) | calls per layer | transfer, ranks ready within 5 µs (instances) |")
    print("|" + "---|" * 14)
    for label, sel in GROUPS:
        xs = [x for name, rows in per_pair if sel(name, len(rows)) for x in rows]
        if not xs:
            continue
        rng = lambda f, p=1: (f"{min(map(f, xs)):+.{p}f} to {max(map(f, xs)):+.{p}f} "
                              f"({statistics.median(map(f, xs)):+.{p}f})")
        print(f"| {label} | {len(xs)} | {rng(lambda x: x['start_vs_i'])} | {rng(lambda x: x['end_vs_alone'])} "
              f"| {rng(lambda x: x['end_vs_model'])} | {rng(lambda x: x['beside'] - x['alone'])} "
              f"| {rng(lambda x: x['ctrl'])} | {rng(lambda x: x['contention'])} | {rng(lambda x: x['join'][0], 2)} "
              f"| {rng(lambda x: x['join'][1], 2)} | {rng(lambda x: x['b2b'], 2)} "
              f"| {min(min(x['slack']) for x in xs):.0f} µs "
              f"| {statistics.median(x['calls'][0] for x in xs):.0f} -> "
              f"{statistics.median(x['calls'][1] for x in xs):.0f} "
              f"| {even_transfer(xs)} |")
    print("\n(median over the pairs of the split above, % of the sync period)\n")
    print("| captures | pairs | Δperiod | GEMMs and wait | transfer | gaps |")
    print("|" + "---|" * 6)
    for label, sel in GROUPS:
        ps = [rows for name, rows in per_pair if sel(name, len(rows))]
        if not ps:
            continue
        pct = lambda f: statistics.median(statistics.mean(f(x) for x in rows) / statistics.mean(
            x["periods"][0] for x in rows) * 100 for rows in ps)
        print(f"| {label} | {len(ps)} | {pct(lambda x: x['d']['period']):+.2f} % "
              f"| {pct(lambda x: x['d']['G'] + x['d']['I'] + x['d']['wait']):+.2f} % "
              f"| {pct(lambda x: x['d']['transfer']):+.2f} % | {pct(lambda x: x['d']['gaps']):+.2f} % |")


def main():
    show = "--instances" in sys.argv
    pairs = [(b, t) for b, t, ch in replay_pairs.PAIRS if b.endswith("a2a_sync")]
    print("| pair | rank | period sync -> async (µs) | Δperiod | ΔG | ΔI | Δwait | Δtransfer | Δgaps | sum "
          "| (1) SR start − I end | SR end − (I end + alone) | SR end − model | (2) I beside SR / alone | "
          "control | contention | (3) join sync, async / b2b | (4) host slack sync, async | calls per layer |")
    print("|" + "---|" * 19)
    per_pair = []
    tot = {k: [] for k in ("period", "G", "I", "wait", "transfer", "gaps", "end_vs_model", "contention", "ctrl")}
    for base, target in pairs:
        b, t = os.path.join(replay_pairs.ROOT, base), os.path.join(replay_pairs.ROOT, target)
        if not (os.path.isdir(b) and os.path.isdir(t)):
            print(f"skipped (absent): {base}")
            continue
        name = base.replace("tests/data/", "").replace("/a2a_sync", "")
        rows = pair_rows(b, t, show)
        per_pair.append((name, rows))
        for x in rows:
            d = x["d"]
            for k in ("period", "G", "I", "wait", "transfer", "gaps"):
                tot[k].append(d[k])
            for k in ("end_vs_model", "contention", "ctrl"):
                tot[k].append(x[k])
            print(f"| {name} | {x['rank']} | {x['periods'][0]:.1f} -> {x['periods'][1]:.1f} | {d['period']:+.1f} "
                  f"| {d['G']:+.1f} | {d['I']:+.1f} | {d['wait']:+.1f} | {d['transfer']:+.1f} | {d['gaps']:+.1f} "
                  f"| {x['sum']:+.1f} | {x['start_vs_i']:+.1f} | {x['end_vs_alone']:+.1f} | {x['end_vs_model']:+.1f} "
                  f"| {x['beside']:.1f} / {x['alone']:.1f} | {x['ctrl']:+.1f} | {x['contention']:+.1f} "
                  f"| {x['join'][0]:.2f}, {x['join'][1]:.2f} / {x['b2b']:.2f} "
                  f"| {x['slack'][0]:.0f}, {x['slack'][1]:.0f} | {x['calls'][0]:.1f} -> {x['calls'][1]:.1f} |")
    q = lambda v: f"{min(v):+.1f} / {med(v):+.1f} / {max(v):+.1f}"
    print("\n| pair | period sync | Δperiod | GEMMs and the wait for the slower GPU Δ(G + I + wait) "
          "| all-to-all after the later ready Δtransfer | Δgaps | SR end − model, per instance |")
    print("|" + "---|" * 7)
    for name, rows in per_pair:
        m = lambda f: statistics.mean(f(x) for x in rows)
        base = m(lambda x: x["periods"][0])
        pc = lambda v: f"{v:+.1f} µs ({v / base * 100:+.1f} %)"
        print(f"| {name} | {base:.1f} µs | {pc(m(lambda x: x['d']['period']))} "
              f"| {pc(m(lambda x: x['d']['G'] + x['d']['I'] + x['d']['wait']))} "
              f"| {pc(m(lambda x: x['d']['transfer']))} | {pc(m(lambda x: x['d']['gaps']))} "
              f"| {m(lambda x: x['end_vs_model']):+.1f} µs |")
    print_sets(per_pair)
    xs = [x for _, rows in per_pair for x in rows]
    print(f"\nSendRecv kernel ({', '.join(SR_CONFIG)}) the same in sync and async on {sum(x['same_sr'] for x in xs)} "
          f"of {len(xs)} pair-ranks; smallest host slack of any profiled GEMM: {min(x['slack_min'] for x in xs):.0f} µs")
    print(f"\nover {len(tot['period'])} pair-ranks, min / median / max (µs per iteration; the last three per "
          f"instance): Δperiod {q(tot['period'])}; ΔG {q(tot['G'])}; ΔI {q(tot['I'])}; Δwait {q(tot['wait'])}; "
          f"Δtransfer {q(tot['transfer'])}; Δgaps {q(tot['gaps'])}; SR end − model {q(tot['end_vs_model'])}; "
          f"GEMM contention {q(tot['contention'])}; GPU-wide control {q(tot['ctrl'])}")


if __name__ == "__main__":
    main()
