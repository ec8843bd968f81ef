/// The Python side of `aether-bench e2e`, written to the bench's temporary directory and run with the project's
/// `.venv` (moto, boto3, tuspyserver, uvicorn and tuspy from Tests/Interop/requirements.txt).
enum E2EPeerScript {
    static let text = #"""
        """aether-bench e2e: the Python side of the baselines (written to the bench's temporary directory and run with the
        project's .venv). One subcommand per role; servers print `ready` on stdout once listening and serve until their
        stdin closes; clients print one JSON line and exit 0 on success (`seconds` of the upload, and for boto3 and tuspy
        `started`: time.monotonic() at its start, CLOCK_MONOTONIC, the bench's clock).
          moto HOST PORT                    moto S3 (its app on hypercorn: keep-alive) with the bucket `aether-bench`
          tus HOST PORT DIR                 tuspyserver (FastAPI router `files`) on uvicorn
          sink HOST PORT                    raw TCP sink: reads one connection to EOF, answers one byte
          send HOST PORT FILE               raw TCP stream of FILE (sendfile), waits for the sink's byte
          boto3 ENDPOINT BUCKET KEY FILE    S3 upload_file with the default TransferConfig and standard retries
          tuspy URL FILE                    tuspy with 8 MiB chunks, retries, and resume from the server's offset
        """
        import json
        import os
        import socket
        import sys
        import threading
        import time

        os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
        os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


        def wait_for_stdin_close():
            for _ in sys.stdin:
                pass


        def wait_listening(host, port):
            for _ in range(600):
                try:
                    socket.create_connection((host, port), timeout=1).close()
                    return
                except OSError:
                    time.sleep(0.05)
            raise SystemExit(f"nothing listens on {host}:{port}")


        def moto(host, port):
            # moto's app on hypercorn, not on moto's ThreadedMotoServer: werkzeug's server answers every request with
            # `Connection: close`, so each 5 MiB part paid a new TCP handshake and congestion-control start-up (at 80 ms
            # that is 10-19 Mbit/s a part where the link carried 22-34), which S3 itself does not make clients pay.
            import asyncio
            import boto3
            from hypercorn.asyncio import serve
            from hypercorn.config import Config
            from moto.server import DomainDispatcherApplication, create_backend_app
            port = int(port)
            if port == 0:
                with socket.socket() as probe:
                    probe.bind((host, 0))
                    port = probe.getsockname()[1]
            config = Config()
            config.bind = [f"{host}:{port}"]
            config.wsgi_max_body_size = 1 << 31
            config.keep_alive_timeout = 75
            config.loglevel = "WARNING"
            app = DomainDispatcherApplication(create_backend_app)
            loop = asyncio.new_event_loop()
            stopping = asyncio.Event()

            async def run():
                await serve(app, config, mode="wsgi", shutdown_trigger=stopping.wait)

            thread = threading.Thread(target=loop.run_until_complete, args=(run(),), daemon=True)
            thread.start()
            wait_listening(host, port)
            boto3.client("s3", endpoint_url=f"http://{host}:{port}").create_bucket(Bucket="aether-bench")
            print(f"ready {port}", flush=True)
            wait_for_stdin_close()
            loop.call_soon_threadsafe(stopping.set)
            thread.join(timeout=10)


        def tus(host, port, directory):
            import uvicorn
            from fastapi import FastAPI
            from tuspyserver import create_tus_router
            app = FastAPI()
            app.include_router(create_tus_router(prefix="files", files_dir=directory, max_size=1 << 40))
            server = uvicorn.Server(uvicorn.Config(app, host=host, port=int(port), log_level="critical"))
            threading.Thread(target=server.run, daemon=True).start()
            wait_listening(host, int(port))
            print("ready", flush=True)
            wait_for_stdin_close()
            server.should_exit = True


        def sink(host, port):
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((host, int(port)))
            listener.listen(1)
            print("ready", flush=True)
            connection, _ = listener.accept()
            total = 0
            while True:
                data = connection.recv(1 << 20)
                if not data:
                    break
                total += len(data)
            connection.sendall(b"k")
            connection.close()
            print(json.dumps({"bytes": total}), flush=True)


        def send(host, port, path):
            start = time.monotonic()
            connection = socket.create_connection((host, int(port)))
            with open(path, "rb") as source:
                connection.sendfile(source)
            connection.shutdown(socket.SHUT_WR)
            if connection.recv(1) != b"k":
                raise SystemExit("the sink did not confirm")
            print(json.dumps({"seconds": time.monotonic() - start}), flush=True)


        def upload_boto3(endpoint, bucket, key, path):
            import boto3
            from botocore.config import Config
            start = time.monotonic()
            client = boto3.client("s3", endpoint_url=endpoint, config=Config(retries={"mode": "standard"}))
            client.upload_file(path, bucket, key)
            seconds = time.monotonic() - start
            size = client.head_object(Bucket=bucket, Key=key)["ContentLength"]
            if size != os.path.getsize(path):
                raise SystemExit(f"moto holds {size} bytes")
            print(json.dumps({"seconds": seconds, "started": start}), flush=True)


        def tus_uploader(tus_client, path, location):
            """8 MiB chunks, each retried; with `location` the upload resumes from the server's offset (a HEAD), which
            tuspyserver answers with 400 unless the upload was created with a filename and a filetype."""
            return tus_client.uploader(path, chunk_size=8 << 20, retries=1000, retry_delay=1, url=location,
                                       metadata={"filename": os.path.basename(path), "filetype": "application/octet-stream"})


        def upload_tuspy(url, path):
            from tusclient import client
            start = time.monotonic()
            tus_client = client.TusClient(url)
            location = None
            resumes = 0
            uploader = None
            while True:
                try:
                    uploader = tus_uploader(tus_client, path, location)
                    uploader.upload()
                    break
                except Exception:  # the connection dropped outside a chunk's retry loop: resume from the server's offset
                    if uploader is not None and uploader.url:
                        location = uploader.url
                    resumes += 1
                    time.sleep(1)
            print(json.dumps({"seconds": time.monotonic() - start, "started": start, "resumes": resumes}), flush=True)


        if __name__ == "__main__":
            roles = {"moto": moto, "tus": tus, "sink": sink, "send": send, "boto3": upload_boto3, "tuspy": upload_tuspy}
            if len(sys.argv) < 2 or sys.argv[1] not in roles:
                raise SystemExit("usage: e2e_peer.py ROLE ARGS...")
            roles[sys.argv[1]](*sys.argv[2:])
        """#
}
