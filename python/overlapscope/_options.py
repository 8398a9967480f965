"""Analysis options as the C API takes them (shared by analyze(), profile() and the torch hook)."""


def analysis_options(align_clocks=None, comm_kernel=None, compute_kernel=None, memory_kernel=None,
                     classes=None, iteration_marker=None, min_gap_ns=None, runtime_cutoff_ns=None,
                     launch_delay_cutoff_ns=None, top=None, threads=None, groups=None):
    """The options of analyze() as the C API takes them (None: the default)."""
    if classes is not None and not isinstance(classes, (list, tuple)):
        classes = [classes]
    if isinstance(groups, dict):  # {"NAME": "REGEX"} as well as ["NAME=REGEX", ...]
        groups = ["%s=%s" % (k, v) for k, v in groups.items()]
    elif isinstance(groups, str):
        groups = [groups]
    return {
        "align_clocks": align_clocks, "comm_kernel": comm_kernel, "compute_kernel": compute_kernel,
        "memory_kernel": memory_kernel, "iteration_marker": iteration_marker,
        "classes": None if classes is None else [str(c) for c in classes], "min_gap_ns": min_gap_ns,
        "runtime_cutoff_ns": runtime_cutoff_ns, "launch_delay_cutoff_ns": launch_delay_cutoff_ns,
        "top": top, "threads": threads, "groups": None if groups is None else [str(g) for g in groups]
    }
