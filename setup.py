"""`pip install .` and `pip wheel .` (pyproject.toml): setuptools with one added build step that
builds the C library through CMake and installs it into the package.

The package (python/tcsolve) is pure Python over libtcsolve through ctypes, so the wheel is tagged
py3-none-<platform>: one library for every Python 3. `build_cmake`, run by `build` after
`build_py` has copied the .py files:
  1. configures the project in <build>/cmake (Release, no tests, CMAKE_INSTALL_LIBDIR=lib, then
     TCSOLVE_CMAKE_ARGS: e.g. "-DTCSOLVE_CUDA=OFF" for a build without the CUDA backend, which
     AUTO builds whenever nvcc is found), unless TCSOLVE_CMAKE_BUILD_DIR names an existing
     configured build to use as it is (e.g. the build/ of scripts/bootstrap: nothing is rebuilt);
  2. builds the target tcsolve_python (libtcsolve and the libraries it links, nothing else);
  3. `cmake --install --component python_wheel` into the wheel's build/lib: tcsolve/lib/ with the
     shared libraries and tcsolve/_location.py (python/CMakeLists.txt says how they find each other).
Environment: TCSOLVE_CMAKE_ARGS, TCSOLVE_CMAKE_BUILD_DIR, TCSOLVE_BUILD_DIR (setuptools' build
folder, default build-pip/ in the checkout), CMAKE (the cmake to run), CMAKE_BUILD_PARALLEL_LEVEL
(jobs, default all cores), CMAKE_GENERATOR.

The version is the project's, read from CMakeLists.txt's project(tcsolve VERSION ...).
"""

import os
import re
import shlex
import shutil

from setuptools import Command, Distribution, setup

try:  # setuptools >= 62.4
    from setuptools.command.build import build
except ImportError:
    from distutils.command.build import build

try:  # setuptools >= 70.1 has its own; before, the wheel package's (Debian: python3-wheel)
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:
        bdist_wheel = None

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.abspath(os.environ.get("TCSOLVE_BUILD_DIR") or os.path.join(ROOT, "build-pip"))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(\s*tcsolve\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", f.read())
    if not match:
        raise RuntimeError("setup.py: no project(tcsolve VERSION ...) in CMakeLists.txt")
    return match.group(1)


class build_cmake(Command):
    """Builds libtcsolve with CMake and installs it into the package (see the module's docstring)."""

    description = "build libtcsolve with CMake and install it into the package"
    user_options = []

    def initialize_options(self):
        self.build_base = None
        self.build_lib = None

    def finalize_options(self):
        self.set_undefined_options("build", ("build_base", "build_base"), ("build_lib", "build_lib"))

    def run(self):
        cmake = os.environ.get("CMAKE", "cmake")
        existing = os.environ.get("TCSOLVE_CMAKE_BUILD_DIR")
        if existing:
            cmake_dir = os.path.abspath(existing)
            if not os.path.isfile(os.path.join(cmake_dir, "CMakeCache.txt")):
                raise RuntimeError(f"setup.py: TCSOLVE_CMAKE_BUILD_DIR={existing} is not a configured CMake build")
        else:
            cmake_dir = os.path.join(os.path.abspath(self.build_base), "cmake")
            self.spawn([cmake, "-S", ROOT, "-B", cmake_dir, "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
                        "-DCMAKE_INSTALL_LIBDIR=lib"] + shlex.split(os.environ.get("TCSOLVE_CMAKE_ARGS", "")))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        self.spawn([cmake, "--build", cmake_dir, "--target", "tcsolve_python", "--parallel", jobs])
        # No library of an earlier build (another SOVERSION) may stay in the wheel.
        shutil.rmtree(os.path.join(self.build_lib, "tcsolve", "lib"), ignore_errors=True)
        self.spawn([cmake, "--install", cmake_dir, "--prefix", os.path.abspath(self.build_lib),
                    "--component", "python_wheel"])


class build_with_cmake(build):
    sub_commands = build.sub_commands + [("build_cmake", None)]


class BinaryDistribution(Distribution):
    """Holds shared libraries: a platform wheel, installed to platlib."""

    def has_ext_modules(self):
        return True


cmdclass = {"build": build_with_cmake, "build_cmake": build_cmake}

if bdist_wheel is not None:
    class bdist_wheel_py3_platform(bdist_wheel):
        """The platform's wheel for every Python 3 (ctypes, no extension module): py3-none-<platform>."""

        def get_tag(self):
            _, _, platform = super().get_tag()
            return "py3", "none", platform

    cmdclass["bdist_wheel"] = bdist_wheel_py3_platform

os.makedirs(BUILD_DIR, exist_ok=True)
setup(
    version=project_version(),
    cmdclass=cmdclass,
    distclass=BinaryDistribution,
    # Not build/ (scripts/bootstrap's CMake build) and no egg-info in the source tree.
    options={"build": {"build_base": BUILD_DIR}, "egg_info": {"egg_base": BUILD_DIR}},
)
