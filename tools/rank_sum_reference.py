#!/usr/bin/python3
"""Reference p-values for tests/report/rank_sum_test.cc, from scipy.stats.mannwhitneyu (two-sided).

Run with Debian's python3 and python3-scipy (apt-get install python3-scipy):
    /usr/bin/python3 tools/rank_sum_reference.py
The test carries the printed values; scipy is never used at run time.
"""
from scipy.stats import mannwhitneyu

CASES = {
    "ties_normal": ([1, 2, 2, 3, 4, 5, 5, 6], [3, 4, 5, 5, 6, 7, 8, 8, 9]),
    "no_ties_exact": ([1.1, 2.3, 3.7, 4.2, 5.9], [6.1, 7.4, 3.9, 8.8, 9.2, 10.5]),
    "no_ties_interleaved": ([10, 12, 14, 16, 18, 20, 22], [11, 13, 15, 17, 19, 21, 23, 25]),
    "large_normal": (list(range(0, 60, 2)), list(range(1, 30)) + [100.5, 101.5]),
}

for name, (a, b) in CASES.items():
    method = "exact" if len(set(a + b)) == len(a + b) and len(a) + len(b) <= 40 else "asymptotic"
    r = mannwhitneyu(a, b, alternative="two-sided", method=method)
    print(f"{name}: n={len(a)},{len(b)} method={method} U={r.statistic} p={r.pvalue!r}")
