#!/usr/bin/env python3
"""Helper of bench/hta_side_by_side.sh (HTA beside overlapscope on one generated N-rank job).

Subcommands:
  merge-steps DIR S       rewrite DIR/rank*.json in place so that each rank holds S ProfilerSteps:
                          every run of consecutive steps becomes one step spanning them (the first
                          keeps its name, its dur becomes the run's span; the others are renamed
                          ProfilerPart#N, which no tool reads as a step). The generator tiles the
                          template's ~0.2 ms steps (about 80 steps per MB); real traces hold a few
                          long steps, and HTA's per-event loop over all steps (add_iteration) makes
                          its load time grow with events x steps.
  measure OUT -- CMD...   runs CMD (stdout to the file $STDOUT if set) under /usr/bin/time -v, samples the summed RSS of its process
                          tree every 0.2 s (HTA parses in a pool of worker processes), writes
                          {"rc", "wall_s", "cpu_s" (user + sys of
                          the command and its reaped children), "maxrss_mb" (time -v: the largest single process),
                          "tree_peak_mb" (sampled sum), "stopped"} to OUT. With STOP_MB=M the
                          tree is killed when its RSS passes M MB or the machine's MemAvailable
                          drops under 1 GiB (a stop short of the OOM killer on a shared machine).
  hta HTA_SRC DIR OUT     loads DIR with HTA's TraceAnalysis (rank -> file from each file's
                          distributedInfo) and times its load, get_comm_comp_overlap,
                          get_potential_stragglers and critical_path_analysis (rank 0, first
                          ProfilerStep); writes their results or errors to OUT (JSON).
  compare HTA_OUT REPORT  per rank: HTA's comp_comm_overlap_pctg vs the report's
                          ranks[].summary.hta_compat_overlap_pct; prints the largest difference,
                          and the rank the report finds last most often beside HTA's stragglers.
"""
import glob
import json
import os
import re
import subprocess
import sys
import time

STEP_LINE = re.compile(r'"name":\s*"ProfilerStep#(\d+)"')


def merge_steps(directory, steps):
    for path in sorted(glob.glob(os.path.join(directory, "rank*.json"))):
        with open(path) as f:
            lines = f.readlines()
        rows = []  # (ts, end, line index)
        for i, line in enumerate(lines):
            if STEP_LINE.search(line):
                ev = json.loads(line.rstrip().rstrip(","))
                rows.append((float(ev["ts"]), float(ev["ts"]) + float(ev["dur"]), i))
        rows.sort()
        if len(rows) <= steps:
            continue
        per = -(-len(rows) // steps)  # ceil: at most `steps` groups
        for g in range(0, len(rows), per):
            group = rows[g:g + per]
            first = group[0][2]
            span = max(r[1] for r in group) - group[0][0]
            lines[first] = re.sub(r'"dur":\s*[0-9.eE+-]+', f'"dur":{span:.3f}', lines[first], count=1)
            for _, _, i in group[1:]:
                lines[i] = lines[i].replace('"ProfilerStep#', '"ProfilerPart#', 1)
        with open(path, "w") as f:
            f.writelines(lines)


def tree_rss_kb(root_pid):
    """Summed VmRSS (kB) of root_pid and its descendants, from /proc."""
    children = {}
    rss = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{d}/status") as f:
                m = re.search(r"VmRSS:\s+(\d+)", f.read())
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d))
        rss[int(d)] = int(m.group(1)) if m else 0
    total, todo = 0, [root_pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, []))
    return total


def mem_available_kb():
    with open("/proc/meminfo") as f:
        return int(re.search(r"MemAvailable:\s+(\d+)", f.read()).group(1))


def kill_tree(root_pid):
    """SIGKILL the descendants of root_pid (the measured command and its workers), not root."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    pids.append((int(d), int(f.read().rsplit(")", 1)[1].split()[1])))
            except (OSError, IndexError, ValueError):
                pass
    kids, todo = [], [root_pid]
    while todo:
        p = todo.pop()
        for pid, ppid in pids:
            if ppid == p:
                kids.append(pid)
                todo.append(pid)
    for pid in kids:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def measure(out, cmd):
    tfile = out + ".time"
    t0 = time.monotonic()
    sink = open(os.environ["STDOUT"], "wb") if os.environ.get("STDOUT") else None
    proc = subprocess.Popen(["/usr/bin/time", "-v", "-o", tfile] + cmd, stdout=sink)
    peak, stopped = 0, None
    stop_kb = int(os.environ.get("STOP_MB", "0")) * 1024
    while proc.poll() is None:
        now = tree_rss_kb(proc.pid)
        peak = max(peak, now)
        if stop_kb and stopped is None and (now > stop_kb or mem_available_kb() < 1 << 20):
            stopped = f"tree RSS {now // 1024} MB, MemAvailable {mem_available_kb() // 1024} MB"
            kill_tree(proc.pid)
        time.sleep(0.2)
    wall = time.monotonic() - t0
    text = open(tfile).read()
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    e = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    sig = re.search(r"Command terminated by signal (\d+)", text)
    st = re.search(r"Exit status: (\d+)", text)
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", text))
    el = None
    if e:
        el = 0.0
        for part in e.group(1).split(":"):
            el = el * 60 + float(part)
    res = {"rc": int(st.group(1)) if st else None, "signal": int(sig.group(1)) if sig else None,
           "wall_s": el if el is not None else round(wall, 2), "cpu_s": round(cpu, 1),
           "maxrss_mb": round(int(m.group(1)) / 1024) if m else None,
           "tree_peak_mb": round(peak / 1024), "stopped": stopped}
    json.dump(res, open(out, "w"))
    print(json.dumps(res))


def rank_files(directory):
    files = {}
    rank_re = re.compile(r'"distributedInfo"\s*:\s*\{[^}]*?"rank"\s*:\s*(\d+)')
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as f:
            m = rank_re.search(f.read(1 << 16))
        if not m:
            sys.exit(f"{path}: no distributedInfo.rank in its first 64 KiB")
        files[int(m.group(1))] = os.path.abspath(path)
    return files


def timed(fn):
    t0 = time.perf_counter()
    try:
        return {"ok": True, "result": fn(), "s": round(time.perf_counter() - t0, 2)}
    except Exception as e:  # HTA's failures are results here
        return {"ok": False, "error": f"{type(e).__name__}: {e}"[:300],
                "s": round(time.perf_counter() - t0, 2)}


def run_hta(hta_src, directory, out):
    import logging
    import warnings
    sys.path.insert(0, hta_src)
    warnings.filterwarnings("ignore")
    from hta.configs.config import logger
    logger.setLevel(logging.ERROR)
    from hta.trace_analysis import TraceAnalysis
    res = {"files": rank_files(directory)}
    # HTA's own directory scan wants `"rank": N` with a space; the generator writes compact JSON,
    # so the rank -> file map is given explicitly (HTA's documented trace_files argument).
    ld = timed(lambda: TraceAnalysis(trace_files=res["files"], trace_dir=directory))
    ta = ld.pop("result", None)
    res["load"] = ld
    if ta is not None:
        def overlap():
            df = ta.get_comm_comp_overlap(visualize=False)
            return {str(int(r)): (None if v != v else float(v))
                    for r, v in zip(df["rank"], df["comp_comm_overlap_pctg"])}
        res["overlap"] = timed(overlap)
        res["stragglers"] = timed(lambda: [int(r) for r in ta.get_potential_stragglers(
            num_candidates=1, visualize=False)])

        def critical_path():
            g, ok = ta.critical_path_analysis(rank=min(res["files"]), annotation="ProfilerStep",
                                              instance_id=0)
            if not ok:
                return "not ok"
            s = g.summary()
            return {str(k): round(float(v), 2) for k, v in s.items()}
        res["critical_path"] = timed(critical_path)
    json.dump(res, open(out, "w"), indent=1)
    if ta is None:
        sys.exit(1)


def compare(hta_out, report):
    h = json.load(open(hta_out))
    r = json.load(open(report))
    got = h.get("overlap", {}).get("result") or {}
    worst, n = 0.0, 0
    for rk in r["ranks"]:
        rank = str(rk.get("rank", rk.get("label")))
        ours = rk["summary"].get("hta_compat_overlap_pct")
        theirs = got.get(rank)
        if ours is None or theirs is None:
            print(f"rank {rank}: report {ours}, HTA {theirs}")
            continue
        n += 1
        worst = max(worst, abs(ours - theirs))
    print(f"overlap per rank, HTA vs report hta_compat_overlap_pct: {n} ranks compared, "
          f"largest difference {worst:.2f} points; e.g. rank 0: HTA {got.get('0')}, report "
          f"{r['ranks'][0]['summary'].get('hta_compat_overlap_pct')}")
    x = r.get("collectives_across_ranks") or {}
    if x.get("ranks"):
        top = max(x["ranks"], key=lambda s: s["times_last"])
        print(f"report: rank most often last {top['rank']} ({top['times_last']} of "
              f"{x['matched_instances']} instances); HTA stragglers: "
              f"{h.get('stragglers', {}).get('result') or h.get('stragglers', {}).get('error')}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["merge-steps"] and len(a) == 3:
        merge_steps(a[1], int(a[2]))
    elif a[:1] == ["measure"] and len(a) > 3 and a[2] == "--":
        measure(a[1], a[3:])
    elif a[:1] == ["hta"] and len(a) == 4:
        run_hta(a[1], a[2], a[3])
    elif a[:1] == ["compare"] and len(a) == 3:
        compare(a[1], a[2])
    else:
        sys.exit(__doc__)
