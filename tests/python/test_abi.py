# test_abi.py — the ctypes mirrors of python/ffn/_lib.py against include/ffn.h as the C compiler
# sees it (abi_dump, built by CMake from abi_dump.c): every mirrored struct's sizeof and each
# field's offset, and every enum constant's value (and each enum's COUNT). A field appended to a
# struct in the header, a changed type or a renumbered enum fails here, naming the struct and the
# field, instead of corrupting memory through the binding.
import ctypes
import json
import os
import subprocess
import unittest

import ffntest
from ffn import _lib


def dump():
    exe = os.environ.get("FFN_ABI_DUMP")
    if not exe:
        raise unittest.SkipTest("FFN_ABI_DUMP is not set (ctest sets it to the abi_dump program)")
    return json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)


class TestAbi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = dump()

    def test_every_mirror_is_dumped_and_vice_versa(self):
        self.assertEqual(sorted(self.c["structs"]), sorted(_lib.STRUCTS),
                         "abi_dump.c and _lib.STRUCTS list different structs")

    def test_struct_layouts(self):
        problems = []
        for name, py in _lib.STRUCTS.items():
            c = self.c["structs"][name]
            if ctypes.sizeof(py) != c["sizeof"]:
                problems.append("struct %s: sizeof is %d in C, %d in the ctypes mirror (a field "
                                "added or changed in ffn.h?)" % (name, c["sizeof"],
                                                                 ctypes.sizeof(py)))
            py_fields = [f[0] for f in py._fields_]
            if py_fields != list(c["fields"]):
                problems.append("struct %s: fields %s in C, %s in the mirror" % (
                    name, list(c["fields"]), py_fields))
            for f in py_fields:
                if f in c["fields"] and getattr(py, f).offset != c["fields"][f]:
                    problems.append("struct %s.%s: offset %d in C, %d in the mirror" % (
                        name, f, c["fields"][f], getattr(py, f).offset))
        self.assertFalse(problems, "\n".join(problems))

    def test_size_fields_match(self):
        # Every struct with a `size` first field: the mirror fills it with its own sizeof, which
        # the library then compares with the header's (ffn_ctx_create refuses a larger one,
        # the block calls a smaller one).
        for name, py in _lib.STRUCTS.items():
            if py._fields_[0][0] == "size":
                self.assertEqual(py.size.offset, 0, name)
                self.assertEqual(ctypes.sizeof(py), self.c["structs"][name]["sizeof"], name)

    def test_enum_values(self):
        problems = []
        known = set()
        for enum, names in _lib.ENUMS.items():
            for value, cname in enumerate(names):
                known.add(cname)
                if cname not in self.c["enums"]:
                    problems.append("%s: %s is not in abi_dump's table" % (enum, cname))
                elif self.c["enums"][cname] != value:
                    problems.append("%s: %s = %d in C, %d in the binding" % (
                        enum, cname, self.c["enums"][cname], value))
            count = _lib.ENUM_COUNTS.get(enum)
            if count is not None:
                known.add(count)
                if self.c["enums"].get(count) != len(names):
                    problems.append("%s: %s = %s in C, the binding knows %d values" % (
                        enum, count, self.c["enums"].get(count), len(names)))
        known.add("FFN_MAX_DIMS")
        if self.c["enums"]["FFN_MAX_DIMS"] != _lib.MAX_DIMS:
            problems.append("FFN_MAX_DIMS = %d in C, %d in the binding" % (
                self.c["enums"]["FFN_MAX_DIMS"], _lib.MAX_DIMS))
        for cname in self.c["enums"]:
            if cname not in known:
                problems.append("%s is dumped but the binding does not know it" % cname)
        self.assertFalse(problems, "\n".join(problems))

    def test_no_unmirrored_field(self):
        # Fields that fit in a struct's tail padding leave sizeof unchanged: the positional
        # initializers of abi_dump.c (one per mirror, field for field) catch them at compile time.
        cc = os.environ.get("FFN_CC")
        if not cc:
            self.skipTest("FFN_CC is not set (ctest sets it to the build's C compiler)")
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "abi_dump.c")
        inc = os.path.join(ffntest.ROOT, "include")
        r = subprocess.run([cc, "-std=gnu11", "-fsyntax-only", "-DFFN_ABI_FIELD_CHECK",
                            "-Werror=missing-field-initializers", "-Werror", "-I", inc, src],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, "the header's structs differ from the mirrors' field "
                         "lists (update python/ffn/_lib.py and abi_dump.c):\n" + r.stderr)

    def test_library_agrees_on_names(self):
        # The loaded library's own name tables agree with the binding's.
        from ffn._context import LIB
        for i, n in enumerate(_lib.ACT_NAMES):
            self.assertEqual(LIB.ffn_act_name(i).decode(), n)
        for i, n in enumerate(_lib.ISA_NAMES):
            self.assertEqual(LIB.ffn_isa_name(i).decode(), n)
        for i, n in enumerate(_lib.FILE_DTYPE_NAMES):
            self.assertEqual(LIB.ffn_file_dtype_name(i).decode(), n)
        for i, n in enumerate(_lib.DTYPE_SIZE):
            self.assertEqual(LIB.ffn_dtype_size(i), n)


if __name__ == "__main__":
    unittest.main(verbosity=2)
