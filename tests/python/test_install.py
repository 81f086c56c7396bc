# test_install.py — the package as users get it: `pip install` of python/ bundles the built
# libffn.so next to the package, which then loads it with no environment variable; without a
# bundled library it takes the system's (the loader path), and with none it fails saying where
# it looked. Each case runs in a fresh interpreter, from a copy of python/ (the source tree is
# not written to).
import ctypes.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import ffntest

PROBE = ("import ffn, numpy\n"
         "print('source:', ffn.library_source)\n"
         "print('path:', ffn.library_path)\n"
         "print('silu:', ffn.act(numpy.float32([1.0, -2.0]), 'silu').tolist())\n")


def built_library():
    lib = os.environ.get("FFN_LIBRARY")
    if not lib or not os.path.isfile(lib):
        raise unittest.SkipTest("FFN_LIBRARY (the built libffn.so) is not set")
    return lib


class TestInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lib = built_library()
        base = os.environ.get("FFN_TEST_TMP")
        if base:
            os.makedirs(base, exist_ok=True)
        cls.tmp = tempfile.mkdtemp(prefix="ffn-install-", dir=base)
        cls.src = os.path.join(cls.tmp, "src")
        shutil.copytree(os.path.join(ffntest.ROOT, "python"), cls.src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__",
                                                      "libffn.so*"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def child_env(self, **extra):
        env = {k: v for k, v in os.environ.items()
               if k not in ("FFN_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH")}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.update(extra)
        return env

    def probe(self, env):
        return subprocess.run([sys.executable, "-c", PROBE], cwd=self.tmp, env=env,
                              capture_output=True, text=True)

    def test_pip_install_bundles_the_library(self):
        site = os.path.join(self.tmp, "site")
        env = self.child_env(FFN_LIBRARY=self.lib)
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                            "--no-deps", "--no-index", "--disable-pip-version-check",
                            "--target", site, self.src], env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        bundled = os.path.join(site, "ffn", "libffn.so")
        self.assertTrue(os.path.isfile(bundled) and not os.path.islink(bundled))
        r = self.probe(self.child_env(PYTHONPATH=site))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("source: next to the package", r.stdout)
        self.assertIn("path: " + os.path.realpath(bundled), r.stdout)
        self.assertIn("silu: [0.731058", r.stdout)

    def test_system_loader_path(self):
        pkg = os.path.join(self.tmp, "bare")
        shutil.copytree(os.path.join(self.src, "ffn"), os.path.join(pkg, "ffn"))
        libdir = os.path.join(self.tmp, "lib")
        os.makedirs(libdir, exist_ok=True)
        shutil.copyfile(os.path.realpath(self.lib), os.path.join(libdir, "libffn.so.0"))
        r = self.probe(self.child_env(PYTHONPATH=pkg, LD_LIBRARY_PATH=libdir))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("source: the system", r.stdout)

    def test_not_found_says_where_it_looked(self):
        if ctypes.util.find_library("ffn"):
            self.skipTest("a libffn is installed on this system")
        pkg = os.path.join(self.tmp, "nolib")
        shutil.copytree(os.path.join(self.src, "ffn"), os.path.join(pkg, "ffn"))
        r = self.probe(self.child_env(PYTHONPATH=pkg))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("libffn was not found. Tried:", r.stderr)
        self.assertIn(os.path.join(pkg, "ffn", "libffn.so") + ": not there", r.stderr)
        self.assertIn("FFN_LIBRARY=/path/to/libffn.so", r.stderr)
        r = self.probe(self.child_env(PYTHONPATH=pkg, FFN_LIBRARY="/nonexistent/libffn.so"))
        self.assertIn("FFN_LIBRARY=/nonexistent/libffn.so could not be loaded", r.stderr)

    def test_setup_refuses_without_a_library(self):
        site = os.path.join(self.tmp, "site-none")
        env = self.child_env(FFN_LIBRARY="/nonexistent/libffn.so")
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                            "--no-deps", "--no-index", "--disable-pip-version-check",
                            "--target", site, self.src], env=env, capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("FFN_LIBRARY=/nonexistent/libffn.so is not a file", r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
