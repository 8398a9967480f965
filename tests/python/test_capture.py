"""overlapscope.profile() on a machine without a GPU: the capture cannot start, and says why in
an exception (CaptureError, or UnavailableError in a build without CUDA), never a crash. The
capture itself is checked on the GPU machine (tools/python_gpu_check.py)."""

import glob
import os

import pytest

import overlapscope


def has_gpu():
    return bool(glob.glob("/dev/nvidia[0-9]*"))


def test_capture_availability_matches_the_build():
    built = os.environ.get("OVERLAPSCOPE_HAVE_CUDA")  # ctest passes CMake's OVERLAPSCOPE_HAVE_CUDA
    if built is None:
        pytest.skip("OVERLAPSCOPE_HAVE_CUDA not set (ctest sets it)")
    assert overlapscope.capture_available() == (built.upper() in ("ON", "1", "TRUE"))


def test_profile_without_gpu_raises_a_clear_error():
    if has_gpu():
        pytest.skip("a GPU is present: the capture would start (tools/python_gpu_check.py checks it)")
    with pytest.raises(overlapscope.CaptureError) as e:
        with overlapscope.profile():
            pass
    assert e.value.message
    if not overlapscope.capture_available():
        assert isinstance(e.value, overlapscope.UnavailableError) and "without CUDA" in str(e.value)


def test_bad_capture_option_is_an_option_error():
    if not overlapscope.capture_available():
        pytest.skip("this build has no in-process capture")
    with pytest.raises(overlapscope.OptionError, match="max_buffers"):
        overlapscope.profile(max_buffers=0).start()
    with pytest.raises(TypeError):
        overlapscope.profile(no_such_option=1)


def test_stop_without_start_is_an_error():
    with pytest.raises(overlapscope.CaptureError, match="not running"):
        overlapscope.profile().stop()
