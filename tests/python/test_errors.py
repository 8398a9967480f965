"""Errors become Python exceptions with the library's message (never a crash): unreadable input
is TraceError with path and byte offset, bad options OptionError, a missing library LibraryError."""

import ctypes
import gzip
import os
import subprocess
import sys

import pytest

import overlapscope
from overlapscope import _lib
from conftest import ROOT

REAL = ROOT / "tests/data/kineto/ag_overlap/rank0.json"


def cli_error(cli, path):
    p = cli("analyze", str(path))
    assert p.returncode == 2
    return p.stderr.decode().strip().removeprefix("overlapscope analyze: ")


def test_truncated_trace_names_path_and_offset(cli, tmp_path):
    bad = tmp_path / "rank0.json"
    bad.write_bytes(REAL.read_bytes()[:3000])
    with pytest.raises(overlapscope.TraceError) as e:
        overlapscope.analyze(bad)
    err = e.value
    assert err.code == 2
    assert str(err) == cli_error(cli, bad)
    assert err.path == str(bad)
    assert err.offset == 3000  # the reader ran out of data where the file ends
    assert "truncated" in err.reason


def test_truncated_gzip_and_garbage_and_missing(cli, tmp_path):
    gz = tmp_path / "rank1.json.gz"
    gz.write_bytes(gzip.compress(REAL.read_bytes())[:2000])
    junk = tmp_path / "junk.json"
    junk.write_text("garbage")
    missing = tmp_path / "nope.json"
    for path in (gz, junk, missing):
        with pytest.raises(overlapscope.TraceError) as e:
            overlapscope.analyze(path)
        assert str(e.value) == cli_error(cli, path)
        assert e.value.path == str(path) and isinstance(e.value.offset, int)
    with pytest.raises(overlapscope.TraceError) as e:
        overlapscope.info(missing)
    assert e.value.offset == 0 and "cannot open" in e.value.reason


@pytest.mark.parametrize("options, why", [
    ({"align_clocks": "sometimes"}, "align_clocks"),
    ({"comm_kernel": "([unclosed"}, "comm_kernel"),
    ({"top": 0}, "'top': expected an integer >= 1"),
    ({"min_gap_ns": -5}, "min_gap_ns"),
    ({"iteration_marker": ""}, "iteration_marker"),
    ({"threads": "two"}, "threads"),
])
def test_bad_options_are_option_errors(options, why, in_root):
    with pytest.raises(overlapscope.OptionError, match=why):
        overlapscope.analyze("tests/data/kineto/ag_overlap", **options)


def test_unknown_option_is_a_type_error():
    with pytest.raises(TypeError):
        overlapscope.analyze("x", no_such_option=1)


def test_unreadable_rules_file_is_input_error(tmp_path, in_root):
    with pytest.raises(overlapscope.TraceError, match="cannot read rules file"):
        overlapscope.analyze("tests/data/kineto/ag_overlap", classes=tmp_path / "missing.rules")
    bad = tmp_path / "bad.rules"
    bad.write_text("comm ([broken\n")
    with pytest.raises(overlapscope.TraceError) as e:
        overlapscope.analyze("tests/data/kineto/ag_overlap", classes=bad)
    assert str(bad) + ":1" in str(e.value)


def test_no_trace_given():
    with pytest.raises(overlapscope.OptionError, match="no trace given"):
        overlapscope.analyze([])


def test_export_to_an_unwritable_place_is_an_error(in_root, tmp_path):
    r = overlapscope.analyze("tests/data/kineto/ag_overlap")
    with pytest.raises(overlapscope.Error) as e:
        r.export(tmp_path / "no/such/dir/x.pftrace")
    assert e.value.code == 1 and "no/such/dir/x.pftrace" in str(e.value)
    with pytest.raises(overlapscope.OptionError, match="x.txt"):
        r.export(tmp_path / "x.txt")


def test_closed_report_raises(in_root):
    r = overlapscope.analyze("tests/data/kineto/ag_overlap")
    r.close()
    with pytest.raises(overlapscope.Error, match="closed"):
        r.text()
    r.close()  # twice is fine
    assert "closed" in repr(r)


def test_c_api_rejects_null_and_bad_arguments_without_crashing():
    lib = _lib.lib()
    out = ctypes.c_void_p()
    assert lib.ovs_analyze(None, 0, None, ctypes.byref(out)) == 64 and not out.value
    assert b"no trace given" in lib.ovs_last_error() and lib.ovs_last_error_code() == 64
    arr = (ctypes.c_char_p * 1)(None)
    assert lib.ovs_analyze(arr, 1, None, ctypes.byref(out)) == 64 and b"path 0 is NULL" in lib.ovs_last_error()
    assert lib.ovs_analyze(arr, 1, b"[1,2]", ctypes.byref(out)) == 64 and b"not a JSON object" in lib.ovs_last_error()
    assert lib.ovs_analyze(arr, 1, b"{\"top\": 1}", None) == 64
    s = ctypes.c_void_p()
    assert lib.ovs_report_render(None, b"json", None, ctypes.byref(s)) == 64
    assert lib.ovs_report_gates(None, b"[]", ctypes.byref(s)) == 64
    assert lib.ovs_report_export(None, b"x.pftrace", None, None) == 64
    assert lib.ovs_check_gates(b"not json") == 64 and b"JSON array" in lib.ovs_last_error()
    assert lib.ovs_check_gates(b"[\"overlap_ratio>=0.5\"]") == 0 and lib.ovs_last_error() == b""
    lib.ovs_free(None)
    lib.ovs_report_free(None)
    lib.ovs_capture_free(None)


def test_c_api_render_format_and_render_options(in_root):
    r = overlapscope.analyze("tests/data/kineto/ag_overlap")
    lib = _lib.lib()
    s = ctypes.c_void_p()
    assert lib.ovs_report_render(r._handle(), b"html", None, ctypes.byref(s)) == 64
    assert b"format 'html'" in lib.ovs_last_error()
    assert lib.ovs_report_render(r._handle(), b"text", b"{\"collectives\": -1}", ctypes.byref(s)) == 64
    assert lib.ovs_report_render(r._handle(), b"text", b"{\"colectives\": 1}", ctypes.byref(s)) == 64
    assert b"'colectives': unknown option" in lib.ovs_last_error()


def test_library_exports_only_versioned_ovs_symbols():
    nm = subprocess.run(["nm", "-D", "--defined-only", _lib.path()], capture_output=True, text=True)
    if nm.returncode != 0:
        pytest.skip("nm not available: %s" % nm.stderr)
    names = [l.split()[-1] for l in nm.stdout.splitlines() if l.split()]
    funcs = [n for n in names if n != "OVSCOPE_1"]
    assert funcs and all(n.startswith("ovs_") and n.endswith("@@OVSCOPE_1") for n in funcs), funcs
    assert "ovs_analyze@@OVSCOPE_1" in funcs and "ovs_capture_start@@OVSCOPE_1" in funcs


def test_abi_and_version():
    version, abi, path = overlapscope.library_version()
    assert version == "overlapscope " + overlapscope.__version__ and abi == _lib.ABI_VERSION
    assert os.path.exists(path)


def run_python(code, **env):
    e = dict(os.environ, **env)
    e["PYTHONPATH"] = os.pathsep.join(sys.path)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)


def test_missing_library_is_a_library_error(tmp_path):
    p = run_python("import overlapscope\n"
                   "try:\n overlapscope.analyze('x')\n"
                   "except overlapscope.LibraryError as e:\n print('LibraryError:', e)\n",
                   OVERLAPSCOPE_LIB=str(tmp_path / "libovscope.so"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("LibraryError: cannot load %s" % (tmp_path / "libovscope.so"))
