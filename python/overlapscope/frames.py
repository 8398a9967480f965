"""pandas DataFrames of a report document (HTA users expect DataFrames). pandas is imported
only when a DataFrame is asked for; without it these raise ImportError saying so."""


def _pandas():
    try:
        import pandas
    except ImportError as e:
        raise ImportError("overlapscope's DataFrames need pandas (Debian: apt-get install python3-pandas; "
                          "or pip install pandas): %s" % e) from None
    return pandas


_RANK_COLUMNS = ("label", "rank", "pid", "host", "source")


def summary(doc):
    """One row per rank: its identity columns, then every key of its summary."""
    rows = []
    for r in doc["ranks"]:
        row = {k: r.get(k) for k in _RANK_COLUMNS}
        row.update(r["summary"])
        rows.append(row)
    return _pandas().DataFrame(rows)


def kernels(doc):
    """The report's top GPU activities (class, kind, name, count, total_ns, max_ns)."""
    return _pandas().DataFrame(list(doc["top_kernels"]))


def iterations(doc):
    """One row per rank, GPU and iteration (the per-iteration overlap of each device, and its
    idle time by cause as columns gap_<cause>_ns, report schema 1.7)."""
    rows = []
    for r in doc["ranks"]:
        for dev in r.get("devices", []):
            for it in dev.get("iterations", []):
                row = {"label": r["label"], "rank": r.get("rank"), "device": dev.get("device")}
                row.update({k: v for k, v in it.items() if k != "gap_ns"})
                row.update({"gap_" + cause + "_ns": ns for cause, ns in (it.get("gap_ns") or {}).items()})
                rows.append(row)
    return _pandas().DataFrame(rows)


def collectives(doc):
    """One row per matched collective instance and rank: the instance's fields (op,
    communicator, sequence, bytes, skew, busbw...) then that rank's (start, wait, duration...)."""
    rows = []
    for inst in doc.get("collectives_across_ranks", {}).get("instances", []):
        common = {k: v for k, v in inst.items() if k != "ranks"}
        for pr in inst.get("ranks", []):
            row = dict(common)
            row.update({"rank_" + k if k in common else k: v for k, v in pr.items()})
            rows.append(row)
    return _pandas().DataFrame(rows)
