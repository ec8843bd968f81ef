"""A moto S3 server for the receiver's S3 blob store tests (and `aether serve --blobs`), without access checks
(moto's IAM check refuses a correctly signed ListObjectsV2 whose prefix holds a '/', boto3's too), on 127.0.0.1 with a port the kernel picks, that can
stop refusing and serve again with its objects kept (moto keeps its state in this process, so a new server on
the same port sees the same buckets).

Creates the bucket "aether-fleet", prints one JSON line {"port": P}, then answers one command per stdin line with one JSON line, until stdin closes:
  {"op": "stop"}          -> {"stopped": true}   the port refuses connections
  {"op": "start"}         -> {"started": true}   serves again on the same port, same objects
  {"op": "get", "bucket": B, "key": K} -> {"size", "sha256"} of the object as boto3 downloads it; {"missing": true}
  {"op": "keys", "bucket": B, "prefix": P} -> {"keys": [...]} every key under the prefix
"""
import hashlib
import json
import os
import sys

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402


def main():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                      aws_access_key_id="test", aws_secret_access_key="test",
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    s3.create_bucket(Bucket="aether-fleet")
    print(json.dumps({"port": port}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "stop":
            server.stop()
            answer = {"stopped": True}
        elif op == "start":
            server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
            server.start()
            answer = {"started": True}
        elif op == "get":
            try:
                body = s3.get_object(Bucket=command["bucket"], Key=command["key"])["Body"].read()
                answer = {"size": len(body), "sha256": hashlib.sha256(body).hexdigest()}
            except s3.exceptions.NoSuchKey:
                answer = {"missing": True}
        elif op == "keys":
            pages = s3.get_paginator("list_objects_v2").paginate(Bucket=command["bucket"], Prefix=command["prefix"])
            answer = {"keys": [item["Key"] for page in pages for item in page.get("Contents", [])]}
        else:
            answer = {"error": f"unknown op {op}"}
        print(json.dumps(answer), flush=True)
    server.stop()


if __name__ == "__main__":
    main()
