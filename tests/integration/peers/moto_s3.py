"""moto_s3.py: runs under build-test/venv-stores (scripts/peers.sh with
scripts/peers-stores.txt). Starts moto's S3 server (an S3 stand-in that, unlike s3rver,
honours If-None-Match: * on PutObject and implements DeleteObjects) on 127.0.0.1 with a free
port, creates the buckets named on the command line, uploads every file under DIR as
BUCKET/PREFIX/<relative path> for each BUCKET/PREFIX=DIR, prints "PORT <n>" and serves until
killed.

usage: moto_s3.py BUCKET... [BUCKET/PREFIX=DIR]..."""
import os
import signal
import sys
import time

import boto3
from moto.server import ThreadedMotoServer


def upload_tree(s3, arg):
    """Uploads every file under DIR as BUCKET/PREFIX/<relative path> (arg: BUCKET/PREFIX=DIR)."""
    where, d = arg.split("=", 1)
    bucket, prefix = where.split("/", 1)
    for root, _, files in os.walk(d):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), d)
            s3.upload_file(os.path.join(root, f), bucket, prefix + "/" + rel)


def main():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    s3 = boto3.client("s3", endpoint_url="http://%s:%d" % (host, port), region_name="us-east-1",
                      aws_access_key_id="test", aws_secret_access_key="test")
    for a in sys.argv[1:]:
        if "=" not in a:
            s3.create_bucket(Bucket=a)
            continue
        upload_tree(s3, a)
    print("PORT %d" % port, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
