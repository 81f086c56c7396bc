# setup.py — only what pyproject.toml cannot say: copy libffn into the package at build time.
# The library is taken from $FFN_LIBRARY, else from the repository's build folder (../build,
# made by `make`). FFN_NO_BUNDLE=1 builds the package without it (it then loads libffn from
# FFN_LIBRARY or the system at import). The wheel is tagged py3-none-<platform>: the code is pure
# Python for any Python 3, the bundled library is for one platform.
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def find_library():
    env = os.environ.get("FFN_LIBRARY")
    if env:
        if not os.path.isfile(env):
            raise SystemExit("ffn setup: FFN_LIBRARY=%s is not a file" % env)
        return env
    for name in ("libffn.so", "libffn.dylib"):
        p = os.path.normpath(os.path.join(HERE, os.pardir, "build", name))
        if os.path.isfile(p):
            return p
    return None


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        if os.environ.get("FFN_NO_BUNDLE") == "1":
            return
        lib = find_library()
        if lib is None:
            raise SystemExit(
                "ffn setup: libffn not found: build it first (`make` in the repository makes "
                "build/libffn.so), or set FFN_LIBRARY=/path/to/libffn.so, or FFN_NO_BUNDLE=1 to "
                "install without it (libffn is then looked up at import)")
        dst = os.path.join(self.build_lib, "ffn", os.path.basename(lib).split(".so")[0] + ".so"
                           if ".so" in lib else os.path.basename(lib))
        shutil.copyfile(os.path.realpath(lib), dst)  # the file itself, not a symlink
        print("ffn setup: bundled %s as %s" % (os.path.realpath(lib), dst))


cmdclass = {"build_py": BuildPyWithLibrary}
try:
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheelPlatform(bdist_wheel):
        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheelPlatform
except ImportError:
    pass

setup(cmdclass=cmdclass)
