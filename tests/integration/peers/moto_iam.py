"""moto_iam.py: runs under build-test/venv-stores. Starts moto's server (S3, IAM and STS on one
port) on 127.0.0.1 for the temporary-credentials test, with AWS as a data team would set it up:
bucket "lake" holding BUCKET/PREFIX=DIR uploads and an object outside every table
(other/secret.txt); an IAM user "deltad" whose only permission is sts:AssumeRole on role
"reader"; role "reader", trusting that user, allowed to read and write the whole bucket.
Prints "PORT <n>", "USER <access key id> <secret>" and "ROLE <arn>", then serves.

Authentication is off until a line "auth" arrives on stdin (deltad registers its table through
presigned URLs first, which moto's IAM check does not take), then on for every request:
moto checks each request's SigV4 signature against the keys or STS session it names, and the
IAM policies of the user or role. moto does not evaluate session policies: the test reads the
one deltad sent from /moto-api/data.json.

usage: moto_iam.py [BUCKET/PREFIX=DIR]..."""
import json
import os
import signal
import sys
import threading

import boto3
from moto import settings
from moto.server import ThreadedMotoServer

ACCOUNT = "123456789012"


def main():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    kw = dict(endpoint_url="http://%s:%d" % (host, port), region_name="us-east-1",
              aws_access_key_id="test", aws_secret_access_key="test")
    s3, iam = boto3.client("s3", **kw), boto3.client("iam", **kw)
    s3.create_bucket(Bucket="lake")
    s3.put_object(Bucket="lake", Key="other/secret.txt", Body=b"not yours")
    for a in sys.argv[1:]:
        where, d = a.split("=", 1)
        bucket, prefix = where.split("/", 1)
        for root, _, files in os.walk(d):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), d)
                s3.upload_file(os.path.join(root, f), bucket, prefix + "/" + rel)
    iam.create_user(UserName="deltad")
    key = iam.create_access_key(UserName="deltad")["AccessKey"]
    trust = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"AWS": "arn:aws:iam::%s:user/deltad" % ACCOUNT}}]}
    role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    iam.put_role_policy(RoleName="reader", PolicyName="lake", PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "s3:*", "Resource": ["arn:aws:s3:::lake", "arn:aws:s3:::lake/*"]}]}))
    iam.put_user_policy(UserName="deltad", PolicyName="assume", PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": role["Arn"]}]}))
    print("PORT %d" % port, flush=True)
    print("USER %s %s" % (key["AccessKeyId"], key["SecretAccessKey"]), flush=True)
    print("ROLE %s" % role["Arn"], flush=True)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))

    def control():
        for line in sys.stdin:
            if line.strip() == "auth":
                settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
                print("AUTH", flush=True)
        os._exit(0)

    threading.Thread(target=control, daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
