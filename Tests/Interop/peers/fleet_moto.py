"""A moto S3 server on 127.0.0.1 for the receiver fleet tests that can stop answering and come back with its
objects: moto keeps its state in this process, so `stop` shuts the HTTP server down (connections refused) and
`start` serves the same buckets and objects on the same port again.

Prints one JSON line {"port": P, "bucket": B} once it listens, then answers one JSON command per stdin line with
one JSON line, until stdin closes:
  {"op": "stop"} / {"op": "start"}   -> {"ok": true}
  {"op": "get", "key": K}            -> {"size", "sha256"} of the object downloaded with boto3; {"missing": true}
  {"op": "list", "prefix": P}        -> {"keys": [...]} (ListObjectsV2, every page)
Any access key is accepted (moto's IAM checks are off).
"""
import hashlib
import json
import os
import sys

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

BUCKET = "aether-fleet"


def main():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                      aws_access_key_id="fleet", aws_secret_access_key="fleet",
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 10}))
    s3.create_bucket(Bucket=BUCKET)
    print(json.dumps({"port": port, "bucket": BUCKET}), flush=True)
    running = True
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "stop":
            if running:
                server.stop()
                running = False
            answer = {"ok": True}
        elif op == "start":
            if not running:
                server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
                server.start()
                running = True
            answer = {"ok": True}
        elif op == "get":
            try:
                body = s3.get_object(Bucket=BUCKET, Key=command["key"])["Body"].read()
                answer = {"size": len(body), "sha256": hashlib.sha256(body).hexdigest()}
            except s3.exceptions.NoSuchKey:
                answer = {"missing": True}
        elif op == "list":
            keys = []
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=command.get("prefix", "")):
                keys += [item["Key"] for item in page.get("Contents", [])]
            answer = {"keys": keys}
        else:
            answer = {"error": f"unknown op {op}"}
        print(json.dumps(answer), flush=True)
    if running:
        server.stop()


main()
