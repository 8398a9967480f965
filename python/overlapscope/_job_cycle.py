"""One profiling cycle's job report over torch.distributed (overlapscope.torch with job mode):
each rank reduces its own trace, one gather_object brings the parts to the group's first rank,
which assembles the job, prints its overview and checks the gates on every rank of the job; one
broadcast_object_list sends the verdict back, so that every rank raises (or logs) together."""

from . import errors
from .job import JobReport, reduce_rank
from .report import GateResult


def _group(dist, group):
    """(world size, this process's rank in the group, the global rank of the group's first)."""
    world, me = dist.get_world_size(group), dist.get_rank(group)
    if group is None:
        return world, me, 0
    get = getattr(dist, "get_global_rank", None) or getattr(dist.distributed_c10d, "_get_global_rank")
    return world, me, get(group, 0)


def _ms(ns):
    return "n/a" if ns is None else "%.3f ms" % (ns / 1e6)


def _pct(r):
    return "n/a" if r is None else "%.1f%%" % (100.0 * r)


def _rank_line(me, step, report, dst):
    """One line for a rank that does not print the job (its own figures)."""
    try:
        s = report.to_dict()["ranks"][0]["summary"]
    except (KeyError, IndexError, errors.Error):
        s = {}
    return ("overlapscope: rank %d, cycle at step %s: overlap %s, exposed comm %s, host blocked %s, GPU idle %s "
            "(job overview on rank %d)\n" % (me, step, _pct(s.get("overlap_ratio")), _ms(s.get("exposed_comm_ns")),
                                             _ms(s.get("blocked_ns")), _pct(s.get("gpu_idle_share")), dst))


def _assemble(handler, gathered):
    """On the gathering rank: the job's report, its overview text and the gates' answer."""
    failed = ["rank %d: %s" % (g["rank"], g["error"]) for g in gathered if g["error"]]
    if failed:
        return {"error": "the job's report needs every rank's part; " + "; ".join(failed), "text": "",
                "gates": None}
    try:
        job = JobReport.assemble([g["name"] for g in gathered], [g["part"] for g in gathered], **handler.analysis)
    except errors.Error as e:
        return {"error": "assembling the job's report failed: %s" % e, "text": "", "gates": None}
    if handler.job is not None:
        handler.job.close()  # one cycle's job report at a time
    handler.job = job
    gates = None
    if handler.require:
        result = job.gates(handler.require)
        gates = {"passed": result.passed, "checks": [{k: getattr(c, k) for k in c.__slots__} for c in result.checks]}
    return {"error": None, "text": job.overview(), "gates": gates}


def job_cycle(handler, dist, path, report, entry):
    """Runs on every rank of the group after its own trace was analyzed; returns the failure to
    raise or log (a GateError, an Error), or None."""
    world, me, dst = _group(dist, handler.group)
    mine = {"rank": me, "name": path, "part": None, "error": None}
    try:
        mine["part"] = reduce_rank(path, **handler.analysis)
    except Exception as e:  # sent along: the gathering rank says which rank failed
        mine["error"] = "%s: %s" % (type(e).__name__, e)
    gathered = [None] * world if me == 0 else None
    dist.gather_object(mine, gathered, dst=dst, group=handler.group)
    verdict = [_assemble(handler, gathered) if me == 0 else None]
    dist.broadcast_object_list(verdict, src=dst, group=handler.group)
    v = verdict[0]
    result = GateResult(v["gates"]) if v["gates"] is not None else None
    entry["job"] = {"ranks": world, "error": v["error"]}
    if result is not None:
        entry["passed"], entry["gates"] = result.passed, [c.line for c in result.checks]
    if handler.print_summary:
        if me == 0:
            head = "overlapscope: profiling cycle at step %s: job of %d ranks (this rank's trace %s)\n" % (
                entry["step"], world, path)
            tail = "".join("gate: %s\n" % line for line in entry["gates"])
            if v["error"]:
                tail += "overlapscope: %s\n" % v["error"]
            handler._say(head + v["text"] + tail)
        else:
            handler._say(_rank_line(me, entry["step"], report, dst))
    if v["error"]:
        return errors.Error(v["error"])
    return errors.GateError(result) if result is not None and not result.passed else None
