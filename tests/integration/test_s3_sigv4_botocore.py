"""test_s3_sigv4_botocore.py: deltad's SigV4 presigned S3 URLs against AWS's own signer.

For a fixed time, the same request (method, bucket, key, extra query parameters, region,
endpoint, addressing style, credential with or without a session token) is presigned by
deltad (store/sign/sign_s3.c, through the test-only command s3_presign_print built in
tests/unit/sign) and by botocore (Debian's python3-botocore, the signer of the AWS CLI and
boto3), and the two must agree exactly: scheme, host and path of the URL, the canonical
query string (every parameter, as encoded), the canonical request and the signature.

botocore reads its clock with datetime.datetime.utcnow() in botocore/auth.py; the test
replaces the module's `datetime` name with one whose utcnow() returns the fixed time.
botocore adds encoding-type=url to ListObjectsV2 by itself (a before-parameter-build
handler); the cases that mirror deltad's own listing request unregister that handler, and
one case keeps it and gives deltad the same parameter.

The s3_presign_print path comes from $DD_S3_PRESIGN_BIN, or is found in the build tree that
holds $DELTAD_BIN (tests/unit/sign/s3_presign_print).
"""
import datetime
import logging
import os
import subprocess
import types
import unittest
import urllib.parse
from unittest import mock

import botocore.auth
import botocore.handlers
import botocore.session
from botocore.config import Config

AKID = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEJr//////////wEaDG+token/with+odd=chars"
WHEN = datetime.datetime(2024, 3, 15, 9, 30, 0)
EPOCH = 1710495000  # WHEN as seconds since the epoch (UTC)

KEYS = [
    "k",
    "a b/c d.txt",
    "100%/x%41y",
    "a+b=c&d.parquet",
    "\u00fc/\u65e5\u672c/\u00e9t\u00e9.parquet",
    "~user/file~.json",
    "t/a=2021-01-01 00%3A00%3A00/part-0.snappy.parquet",
    "odd !'()*,;:@$[]#?.txt",
    "dir//double/./dot/../x",
    "_delta_log/00000000000000000010.checkpoint.parquet",
]

OPS = {"GET": "get_object", "HEAD": "head_object", "PUT": "put_object",
       "DELETE": "delete_object"}

LIST_PARAMS = [  # (ours: sorted name=value, botocore: ListObjectsV2 parameters)
    ([("delimiter", "/"), ("list-type", "2"), ("prefix", "tables/t/_delta_log/")],
     {"Prefix": "tables/t/_delta_log/", "Delimiter": "/"}),
    ([("delimiter", "/"), ("list-type", "2"), ("prefix", "")], {"Prefix": "", "Delimiter": "/"}),
    ([("continuation-token", "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=+x"),
      ("delimiter", "/"), ("list-type", "2"), ("prefix", "a b/\u00fc %+=~/")],
     {"Prefix": "a b/\u00fc %+=~/", "Delimiter": "/",
      "ContinuationToken": "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=+x"}),
]

# (name, region, our endpoint or None, our style, botocore endpoint_url, botocore style)
TARGETS = [
    ("path-custom", "us-east-1", "http://127.0.0.1:9000", "auto", "http://127.0.0.1:9000",
     "path"),
    ("path-custom-region", "eu-west-1", "http://127.0.0.1:9000", "path",
     "http://127.0.0.1:9000", "path"),
    ("virtual-aws", "eu-west-1", None, "auto", "https://s3.eu-west-1.amazonaws.com", "virtual"),
    ("virtual-aws-us-east-1", "us-east-1", None, "virtual", "https://s3.us-east-1.amazonaws.com",
     "virtual"),
    ("path-aws", "us-west-2", None, "path", "https://s3.us-west-2.amazonaws.com", "path"),
    ("virtual-aws-cn", "cn-north-1", None, "auto", "https://s3.cn-north-1.amazonaws.com.cn",
     "virtual"),
    ("path-custom-default-port", "us-east-1", "http://127.0.0.1:80", "path",
     "http://127.0.0.1:80", "path"),
    ("path-custom-upper-host", "us-east-1", "http://LocalHost:9000", "path",
     "http://LocalHost:9000", "path"),
]


def presign_bin():
    b = os.environ.get("DD_S3_PRESIGN_BIN")
    if b:
        return b
    d = os.path.dirname(os.path.abspath(os.environ["DELTAD_BIN"]))
    while not os.path.exists(os.path.join(d, "CMakeCache.txt")):
        parent = os.path.dirname(d)
        if parent == d:
            raise RuntimeError("no build tree above $DELTAD_BIN")
        d = parent
    return os.path.join(d, "tests", "unit", "sign", "s3_presign_print")


class _FixedDateTime(datetime.datetime):
    at = WHEN  # what utcnow() says; a test may move it

    @classmethod
    def utcnow(cls):
        return cls.at


class _Capture(logging.Handler):
    """Keeps the canonical request and string to sign botocore logs at DEBUG."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())

    def last(self, prefix):
        for m in reversed(self.records):
            if m.startswith(prefix):
                return m[len(prefix):]
        raise AssertionError("botocore logged no %r" % prefix)


def split_url(url):
    """(scheme, host, path, sorted raw query pairs without the signature, signature). The
    host is compared as a client sends it: lower case, without the scheme's default port
    (botocore keeps both in the URL text but signs the normalised host)."""
    p = urllib.parse.urlsplit(url)
    host = p.netloc.lower()
    default = {"http": ":80", "https": ":443"}[p.scheme]
    if host.endswith(default):
        host = host[:-len(default)]
    pairs = [tuple(kv.partition("=")[::2]) for kv in p.query.split("&")]
    sig = [v for k, v in pairs if k == "X-Amz-Signature"]
    rest = sorted((k, v) for k, v in pairs if k != "X-Amz-Signature")
    return p.scheme, host, p.path, rest, sig[0] if sig else None


class SigV4VersusBotocore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin = presign_bin()
        if not os.access(cls.bin, os.X_OK):
            raise RuntimeError("s3_presign_print not built at %s" % cls.bin)
        cls.proc = subprocess.Popen([cls.bin, "-"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True, encoding="utf-8")
        cls.session = botocore.session.get_session()
        cls.log = _Capture()
        lg = logging.getLogger("botocore.auth")
        lg.addHandler(cls.log)
        lg.setLevel(logging.DEBUG)
        cls.clock = mock.patch.object(botocore.auth, "datetime",
                                      types.SimpleNamespace(datetime=_FixedDateTime))
        cls.clock.start()

    @classmethod
    def tearDownClass(cls):
        cls.clock.stop()
        cls.proc.stdin.close()
        rc = cls.proc.wait()
        cls.proc.stdout.close()
        assert rc == 0, "s3_presign_print exited with %d" % rc
        logging.getLogger("botocore.auth").removeHandler(cls.log)

    def client(self, region, endpoint, style, token, url_encoding_type=True):
        c = self.session.create_client(
            "s3", region_name=region, endpoint_url=endpoint, aws_access_key_id=AKID,
            aws_secret_access_key=SECRET, aws_session_token=token,
            config=Config(signature_version="s3v4", s3={"addressing_style": style}))
        if not url_encoding_type:
            c.meta.events.unregister("before-parameter-build.s3.ListObjectsV2",
                                     botocore.handlers.set_list_objects_encoding_type_url)
        return c

    def ours(self, method, region, bucket, key, expires, endpoint, style, token, params=()):
        """Asks s3_presign_print (one process for the whole test, requests on stdin)."""
        fields = [method, region, bucket, key or "\x01", str(EPOCH), str(expires),
                  endpoint or "-", style, AKID, SECRET, token or "-"]
        fields += ["%s=%s" % kv for kv in params]
        self.proc.stdin.write("\t".join(fields) + "\n")
        self.proc.stdin.flush()
        lines = []
        while True:
            line = self.proc.stdout.readline()
            self.assertTrue(line, "s3_presign_print died")
            if line == "--END--\n":
                break
            lines.append(line)
        out = "".join(lines)
        self.assertFalse(out.startswith("--ERROR--"), out)
        url, _, rest = out.partition("\n")
        cr, _, sts = rest.partition("\n--STS--\n")
        return url, cr, sts.rstrip("\n")

    def botocore_presign(self, client, op, params, method, expires):
        url = client.generate_presigned_url(op, Params=params, ExpiresIn=expires,
                                            HttpMethod=method)
        return url, self.log.last("CanonicalRequest:\n"), self.log.last("StringToSign:\n")

    def check_same(self, what, ours, theirs):
        our_url, our_cr, our_sts = ours
        bc_url, bc_cr, bc_sts = theirs
        self.assertEqual(our_cr, bc_cr, "%s: canonical requests differ" % what)
        self.assertEqual(our_sts, bc_sts, "%s: strings to sign differ" % what)
        o, b = split_url(our_url), split_url(bc_url)
        self.assertEqual(o[:3], b[:3], "%s: scheme/host/path differ" % what)
        self.assertEqual(o[3], b[3], "%s: query parameters differ" % what)
        self.assertIsNotNone(o[4], what)
        self.assertEqual(o[4], b[4], "%s: signatures differ" % what)

    def test_published_example_through_both(self):
        """AWS's documented presign example (us-east-1 global endpoint): both signers give
        the signature the S3 API Reference prints, aeeed9bb..."""
        c = self.client("us-east-1", None, "virtual", None)
        with mock.patch.object(_FixedDateTime, "at", datetime.datetime(2013, 5, 24)):
            theirs = self.botocore_presign(c, "get_object",
                                           {"Bucket": "examplebucket", "Key": "test.txt"}, "GET",
                                           86400)
        ours = subprocess.run(
            [self.bin, "GET", "us-east-1", "examplebucket", "test.txt", "1369353600", "86400",
             "https://s3.amazonaws.com", "virtual", AKID, SECRET, "-"],
            capture_output=True, check=True).stdout.decode().partition("\n")[0]
        doc = "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
        self.assertEqual(split_url(theirs[0])[4], doc)
        self.assertEqual(split_url(ours)[4], doc)
        self.assertEqual(split_url(ours)[:4], split_url(theirs[0])[:4])

    def test_object_requests(self):
        n = 0
        for name, region, ep, style, bc_ep, bc_style in TARGETS:
            for token in (None, TOKEN):
                c = self.client(region, bc_ep, bc_style, token)
                for method, op in OPS.items():
                    for key in KEYS:
                        what = "%s %s %r token=%s" % (name, method, key, bool(token))
                        with self.subTest(what):
                            theirs = self.botocore_presign(c, op, {"Bucket": "lake-01",
                                                                   "Key": key}, method, 900)
                            ours = self.ours(method, region, "lake-01", key, 900, ep, style,
                                             token)
                            self.check_same(what, ours, theirs)
                        n += 1
        self.assertEqual(n, len(TARGETS) * 2 * len(OPS) * len(KEYS))

    def test_list_objects_v2(self):
        for name, region, ep, style, bc_ep, bc_style in TARGETS:
            for token in (None, TOKEN):
                c = self.client(region, bc_ep, bc_style, token, url_encoding_type=False)
                for ours_params, bc_params in LIST_PARAMS:
                    what = "%s LIST %r token=%s" % (name, bc_params, bool(token))
                    with self.subTest(what):
                        theirs = self.botocore_presign(c, "list_objects_v2",
                                                       dict(bc_params, Bucket="lake-01"), "GET",
                                                       3600)
                        ours = self.ours("GET", region, "lake-01", "", 3600, ep, style, token,
                                         ours_params)
                        self.check_same(what, ours, theirs)

    def test_list_with_botocore_default_encoding_type(self):
        c = self.client("eu-west-1", "http://127.0.0.1:9000", "path", None)
        theirs = self.botocore_presign(c, "list_objects_v2",
                                       {"Bucket": "lake", "Prefix": "p/", "Delimiter": "/"},
                                       "GET", 600)
        self.assertIn("encoding-type=url", theirs[0])
        ours = self.ours("GET", "eu-west-1", "lake", "", 600, "http://127.0.0.1:9000", "path",
                         None, [("delimiter", "/"), ("encoding-type", "url"),
                                ("list-type", "2"), ("prefix", "p/")])
        self.check_same("list encoding-type=url", ours, theirs)


if __name__ == "__main__":
    unittest.main()
