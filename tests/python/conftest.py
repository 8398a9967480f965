"""Shared set-up of the Python tests (run by ctest as python.* with PYTHONPATH=<build>/python and
OVERLAPSCOPE_CLI=<build>/cli/overlapscope; by hand: see tests/python/README.md)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden"

try:
    import overlapscope  # noqa: F401
except ImportError:  # run from a checkout without PYTHONPATH: the sources (library from the build tree)
    sys.path.insert(0, str(ROOT / "python"))


def golden_inputs():
    """Every trace the goldens cover (tests/data and samples/), as the source-relative paths the
    CLI is given: the inputs of tests/data/golden/inputs.txt, and each trace file in a directory
    among them (a directory with rank0.json and rank0.json.gz reads the .gz; the file tests the
    other)."""
    out = []
    for line in (GOLDEN / "inputs.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        out.append(line.strip())
        d = ROOT / line.strip()
        if d.is_dir():
            out += sorted(str(p.relative_to(ROOT)) for p in d.iterdir()
                          if p.name.endswith((".json", ".json.gz")) and p.name.startswith("rank"))
    return out


def golden_name(path):
    return path.replace("/", "_")


@pytest.fixture
def in_root(monkeypatch):
    """Runs the test in the source root, as the CLI's goldens were made (reports record inputs as given)."""
    monkeypatch.chdir(ROOT)
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """Runs the overlapscope CLI: cli(args...) -> CompletedProcess (bytes), in the source root."""
    exe = os.environ.get("OVERLAPSCOPE_CLI") or str(ROOT / "build" / "cli" / "overlapscope")
    if not os.path.exists(exe):
        pytest.fail("the overlapscope CLI is needed (set OVERLAPSCOPE_CLI; ctest sets it): %s missing" % exe)

    def run(*args):
        return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, timeout=300)

    return run
