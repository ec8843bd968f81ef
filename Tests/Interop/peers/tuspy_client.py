"""Uploads a file to a tus 1.0 server with the PyPI `tuspy` client (a client no one here wrote), stopping
part-way, then resuming with a fresh uploader that asks the server for its offset (HEAD) and sends the rest with
SHA-1 `Upload-Checksum`s.

    tuspy_client.py URL FILE CHUNK_SIZE STOP_AT [TOKEN]

Prints one JSON object: the upload URL, the offset after the first half and the one the resumed uploader found.
"""
import json
import sys

from tusclient import client


def main():
    url, path, chunk_size, stop_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    headers = {"Authorization": "Bearer " + sys.argv[5]} if len(sys.argv) > 5 else {}
    tus = client.TusClient(url, headers=headers)
    first = tus.uploader(path, chunk_size=chunk_size, metadata={"filename": "scan.bin"})
    first.upload(stop_at=stop_at)
    upload_url = first.url
    after_first = first.offset
    resumed = tus.uploader(path, url=upload_url, chunk_size=chunk_size, upload_checksum=True)
    found = resumed.get_offset()
    resumed.upload()
    print(json.dumps({"url": upload_url, "afterFirst": after_first, "resumedAt": found, "final": resumed.offset}))


if __name__ == "__main__":
    main()
