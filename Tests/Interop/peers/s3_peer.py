"""A moto S3 server for the S3 backend's tests, on 127.0.0.1 with a port the kernel picks.

moto's IAM access control is on (INITIAL_NO_AUTH_ACTION_COUNT): the first five requests, made here, create an
IAM user with an access key and an allow-everything policy, a role anyone may assume, and the bucket; every later
request must carry a valid SigV4 signature of a known key (moto recomputes it with botocore), so a wrong secret is
refused with SignatureDoesNotMatch. The user then assumes the role (STS AssumeRole) for temporary credentials
with a session token, which moto checks too (a wrong token is InvalidToken).

Prints one JSON line {port, accessKeyID, secretAccessKey, bucket, temporary: {accessKeyID, secretAccessKey,
sessionToken}}, then answers one JSON command per stdin line
with one JSON line, until stdin closes:
  {"op": "get", "key": K}                -> {"size", "sha256", "crc32c"} of the object downloaded with boto3
                                            (crc32c from the PyPI crc32c package); {"missing": true} if absent
  {"op": "uploads"}                      -> {"uploads": [{"key", "uploadId"}]} in progress (ListMultipartUploads)
  {"op": "crc32c", "hex": H}             -> {"crc32c": N, "base64": S3's x-amz-checksum-crc32c form}
"""
import base64
import hashlib
import json
import os
import sys

os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "5"
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

import boto3  # noqa: E402
import crc32c  # noqa: E402
from botocore.config import Config  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

BUCKET = "aether-test"
POLICY = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})
TRUST = json.dumps({"Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})


def main():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    endpoint = f"http://127.0.0.1:{port}"
    setup = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup",
                 aws_secret_access_key="setup")
    iam = boto3.client("iam", **setup)
    iam.create_user(UserName="aether")
    key = iam.create_access_key(UserName="aether")["AccessKey"]
    iam.put_user_policy(UserName="aether", PolicyName="all", PolicyDocument=POLICY)
    role = iam.create_role(RoleName="uploader", AssumeRolePolicyDocument=TRUST)["Role"]
    user = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=key["AccessKeyId"],
                aws_secret_access_key=key["SecretAccessKey"])
    s3 = boto3.client("s3", config=Config(s3={"addressing_style": "path"}), **user)
    s3.create_bucket(Bucket=BUCKET)
    boto3.client("iam", **user).put_role_policy(RoleName="uploader", PolicyName="all", PolicyDocument=POLICY)
    temporary = boto3.client("sts", **user).assume_role(RoleArn=role["Arn"], RoleSessionName="aether")["Credentials"]
    print(json.dumps({"port": port, "accessKeyID": key["AccessKeyId"],
                      "secretAccessKey": key["SecretAccessKey"], "bucket": BUCKET,
                      "temporary": {"accessKeyID": temporary["AccessKeyId"],
                                    "secretAccessKey": temporary["SecretAccessKey"],
                                    "sessionToken": temporary["SessionToken"]}}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "get":
            try:
                body = s3.get_object(Bucket=BUCKET, Key=command["key"])["Body"].read()
                answer = {"size": len(body), "sha256": hashlib.sha256(body).hexdigest(),
                          "crc32c": crc32c.crc32c(body)}
            except s3.exceptions.NoSuchKey:
                answer = {"missing": True}
        elif op == "uploads":
            listed = s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])
            answer = {"uploads": [{"key": u["Key"], "uploadId": u["UploadId"]} for u in listed]}
        elif op == "crc32c":
            value = crc32c.crc32c(bytes.fromhex(command["hex"]))
            answer = {"crc32c": value, "base64": base64.b64encode(value.to_bytes(4, "big")).decode()}
        else:
            answer = {"error": f"unknown op {op}"}
        print(json.dumps(answer), flush=True)
    server.stop()


if __name__ == "__main__":
    main()
