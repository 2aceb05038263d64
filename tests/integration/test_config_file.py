#!/usr/bin/python3
"""test_config_file.py: deltad's config file with lines of any length. A line is one
setting however long it is: a long comment stays a comment (no tail of it is read as a
setting), a long value is one value, and a value too long for its option is refused with
the file and line number."""
import os
import shutil
import subprocess
import tempfile
import unittest

import dd_harness as h


class ConfigFileLines(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="dd-cfg-")
        self.cfg = os.path.join(self.dir, "deltad.conf")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, text):
        with open(self.cfg, "w") as f:
            f.write(text)

    def test_long_comment_is_one_comment(self):
        # the tail after byte 2,048 looks like a setting; it is still part of the comment
        pad = "#" + "x" * 2046
        self.write("threads = 1\nbase-path = /mine\n%sbase-path = /injected\n%s%s\n"
                   % (pad, "# " + "y" * 9000, " = also a comment"))
        s = h.Server(data_dir=os.path.join(self.dir, "data"), extra_args=["--config", self.cfg])
        try:
            s.start()
            self.assertTrue(s.rest.endswith("/mine"), s.rest)
            code, body = s.curl("GET", "/catalogs")
            self.assertEqual(code, 200, body)
            self.assertEqual(s.stop(), 0)
        finally:
            s.cleanup()

    def test_long_value_is_one_value(self):
        base = "/" + "b" * 100
        self.write("# first\nbase-path = %s%s\n" % (base, " " * 3000))  # trailing blanks trimmed
        s = h.Server(data_dir=os.path.join(self.dir, "data"), extra_args=["--config", self.cfg])
        try:
            s.start()
            self.assertTrue(s.rest.endswith(base), s.rest)
            self.assertEqual(s.stop(), 0)
        finally:
            s.cleanup()

    def test_too_long_value_names_the_line(self):
        self.write("threads = 1\n\npublic-url = https://%s.example\n" % ("a" * 5000))
        out = subprocess.run([os.environ["DELTAD_BIN"], "--config", self.cfg,
                              "--data-dir", os.path.join(self.dir, "data")],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 2)
        self.assertIn("%s:3: public-url: value too long" % self.cfg, out.stderr)

    def test_nul_byte_refused(self):
        with open(self.cfg, "wb") as f:
            f.write(b"threads = 1\nbase-path = /a\x00/b\n")
        out = subprocess.run([os.environ["DELTAD_BIN"], "--config", self.cfg,
                              "--data-dir", os.path.join(self.dir, "data")],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 2)
        self.assertIn("%s:2: NUL byte in the line" % self.cfg, out.stderr)


if __name__ == "__main__":
    h.main()
