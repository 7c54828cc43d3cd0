"""pytest configuration of the Python package's tests (ctest group "python"): where the CLI, the
test data and libhdf5 are, given by tests/CMakeLists.txt as options; run by hand from the
repository root after a build:

    PYTHONPATH=build/python python3 -m pytest python/tests

(the defaults then find build/app/tcsolve, inputs/ and docs/guide/ in the source tree). Tests of
torch and CuPy arrays skip when those are not installed or no GPU is present; numpy, scipy and
scikit-learn are required (scripts/bootstrap installs them).
"""

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def pytest_addoption(parser):
    parser.addoption("--tcsolve-cli", default=str(REPO / "build" / "app" / "tcsolve"), help="the tcsolve executable")
    parser.addoption("--testdata", default=str(REPO),
                     help="a folder holding inputs/ and docs/guide/ (the build's tests/testdata)")
    parser.addoption("--hdf5-library", default="", help="libhdf5 (default: found by name)")


@pytest.fixture(scope="session")
def cli(request):
    """Runs the tcsolve CLI: cli(*args) -> the parsed JSON object of ``--json`` (added), with the
    exit status as ``obj["_exit"]``."""
    path = request.config.getoption("--tcsolve-cli")
    if not os.access(path, os.X_OK):
        pytest.fail(f"the tcsolve CLI is not at {path} (build it, or pass --tcsolve-cli)")

    def run(*args, json_output=True):
        argv = [path, *map(str, args)] + (["--json"] if json_output else [])
        p = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
        if not json_output:
            return p
        obj = json.loads(p.stdout)
        obj["_exit"] = p.returncode
        return obj

    run.path = path
    return run


@pytest.fixture(scope="session")
def testdata(request):
    return pathlib.Path(request.config.getoption("--testdata"))


@pytest.fixture(scope="session")
def inputs(testdata):
    return testdata / "inputs"


@pytest.fixture(scope="session")
def hdf5(request):
    from hdf5_reader import Hdf5
    return Hdf5(request.config.getoption("--hdf5-library") or None)
