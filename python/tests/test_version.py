"""tcsolve.__version__: importlib.metadata's for the copy pip installed, else the library's
(python/tcsolve/__init__.py); the python_pip test checks the installed case end to end."""

import os

import tcsolve


class FakeDistribution:
    def __init__(self, root, version):
        self.root, self.version = root, version

    def locate_file(self, path):
        return os.path.join(self.root, path)


def test_the_build_tree_reports_the_library_version():
    assert tcsolve.__version__ == tcsolve._lib.version()
    assert tcsolve.__license__ == "BSD-3-Clause"


def test_the_version_pip_recorded_for_this_very_package_is_used(monkeypatch):
    here = os.path.dirname(os.path.dirname(os.path.abspath(tcsolve.__file__)))
    monkeypatch.setattr(tcsolve._metadata, "distribution", lambda name: FakeDistribution(here, "9.9.9"))
    assert tcsolve._package_version() == "9.9.9"


def test_another_installed_copy_does_not_lend_its_version(monkeypatch, tmp_path):
    monkeypatch.setattr(tcsolve._metadata, "distribution", lambda name: FakeDistribution(str(tmp_path), "0.0.1"))
    assert tcsolve._package_version() == tcsolve._lib.version()
