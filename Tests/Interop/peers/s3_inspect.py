"""boto3 against any S3 server (Ceph RGW in the tests): reads back what Aether stored, with a client of its own.

Usage: s3_inspect.py ENDPOINT ACCESS_KEY SECRET_KEY. Prints {"ready": true}, then answers one JSON command per
stdin line with one JSON line, until stdin closes:
  {"op": "get", "bucket": B, "key": K}     -> {"size", "sha256", "crc32c", "etag"} of the object as boto3
                                              downloads it (crc32c from the PyPI crc32c package); {"missing": true}
  {"op": "keys", "bucket": B, "prefix": P} -> {"keys": [...]} every key under the prefix
  {"op": "uploads", "bucket": B}           -> {"uploads": [{"key", "uploadId"}]} in progress
  {"op": "trailer", "bucket": B, "key": K} -> {"status", "code"} of a PutObject whose CRC32C travels in a trailer
                                              (STREAMING-UNSIGNED-PAYLOAD-TRAILER, aws-chunked), signed by botocore
"""
import base64
import hashlib
import json
import sys
import urllib.error
import urllib.request

import boto3
import crc32c
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials


def trailer_put(endpoint, credentials, bucket, key):
    data = b"trailing checksum"
    checksum = base64.b64encode(crc32c.crc32c(data).to_bytes(4, "big")).decode()
    body = (f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n"
            + f"x-amz-checksum-crc32c:{checksum}\r\n\r\n".encode())
    url = f"{endpoint}/{bucket}/{key}"
    request = AWSRequest(method="PUT", url=url, data=body, headers={
        "Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
        "x-amz-trailer": "x-amz-checksum-crc32c", "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "Content-Length": str(len(body))})
    SigV4Auth(credentials, "s3", "us-east-1").add_auth(request)
    prepared = urllib.request.Request(url, data=body, method="PUT", headers=dict(request.headers.items()))
    try:
        with urllib.request.urlopen(prepared, timeout=30) as response:
            return {"status": response.status, "code": ""}
    except urllib.error.HTTPError as error:
        text = error.read().decode("utf-8", "replace")
        code = text.split("<Code>")[1].split("</Code>")[0] if "<Code>" in text else ""
        return {"status": error.code, "code": code}


def main():
    endpoint, access, secret = sys.argv[1:4]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=access,
                      aws_secret_access_key=secret,
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2},
                                    request_checksum_calculation="when_required",
                                    response_checksum_validation="when_required"))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "get":
            try:
                response = s3.get_object(Bucket=command["bucket"], Key=command["key"])
                body = response["Body"].read()
                answer = {"size": len(body), "sha256": hashlib.sha256(body).hexdigest(),
                          "crc32c": crc32c.crc32c(body), "etag": response.get("ETag", "")}
            except s3.exceptions.NoSuchKey:
                answer = {"missing": True}
        elif op == "keys":
            pages = s3.get_paginator("list_objects_v2").paginate(Bucket=command["bucket"], Prefix=command["prefix"])
            answer = {"keys": [item["Key"] for page in pages for item in page.get("Contents", [])]}
        elif op == "uploads":
            listed = s3.list_multipart_uploads(Bucket=command["bucket"]).get("Uploads", [])
            answer = {"uploads": [{"key": u["Key"], "uploadId": u["UploadId"]} for u in listed]}
        elif op == "trailer":
            answer = trailer_put(endpoint, Credentials(access, secret), command["bucket"], command["key"])
        else:
            answer = {"error": f"unknown op {op}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
