"""The package the build assembles in <build>/python installs with pip offline and works from
wherever it was installed (libovscope.so travels inside it)."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import overlapscope
from conftest import ROOT

BUILT = Path(overlapscope.__file__).resolve().parent.parent


def test_package_finds_the_library_next_to_it():
    if not (BUILT / "pyproject.toml").exists():
        pytest.skip("not run from the build's package (<build>/python)")
    assert Path(overlapscope.library_version()[2]).resolve() == BUILT / "overlapscope" / "libovscope.so"


def test_pip_installs_the_built_package_offline(tmp_path):
    if not (BUILT / "pyproject.toml").exists():
        pytest.skip("not run from the build's package (<build>/python)")
    missing = [m for m in ("pip", "setuptools", "wheel") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip("pip install check needs %s (Debian: python3-pip python3-setuptools python3-wheel)" % missing)
    src = tmp_path / "src"
    shutil.copytree(BUILT, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    site = tmp_path / "site"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OVERLAPSCOPE_LIB")}
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-index",
                          "--no-deps", "--target", str(site), str(src)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    code = ("import overlapscope\n"
            "print(overlapscope.library_version()[2])\n"
            "r = overlapscope.analyze('tests/data/kineto/ag_overlap')\n"
            "print(len(r.ranks), r.ranks[1].summary.exposed_comm_ns)\n"
            "maps = open('/proc/self/maps').read().split()\n"
            "print(sorted(set(p for p in maps if 'libabsl_' in p)))\n")
    run = subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=str(site)), cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lib_path, counts, absl = run.stdout.splitlines()
    assert Path(lib_path).resolve() == (site / "overlapscope" / "libovscope.so").resolve()
    # Abseil comes from the package (the machine need not have it), none from the system.
    absl = eval(absl)
    assert absl and all(Path(p).parent == (site / "overlapscope").resolve() for p in absl), absl
    want = overlapscope.analyze(ROOT / "tests/data/kineto/ag_overlap").ranks[1].summary.exposed_comm_ns
    assert counts == "2 %d" % want
