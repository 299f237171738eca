#!/usr/bin/env python3
"""Captures the request frames a real Kafka client sends, as golden bytes for codec tests.

Listens on 127.0.0.1:PORT for one connection and writes each size-prefixed frame the client sends to
OUT_PREFIX-<n>.bin, until `--frames` frames arrived or the client stops. Without --forward nothing is
answered, so only what a client sends first is recorded (ApiVersions, and kafka-python's Metadata v0 probe
right behind it). With --forward HOST:PORT the connection is relayed to a real broker, so whole
conversations (Metadata, Produce, Fetch, ...) are recorded.

Usage: capture_request.py PORT OUT_PREFIX [--frames N] [--timeout S] [--forward HOST:PORT]
"""
import argparse
import socket
import struct
import threading


def relay(source, sink):
    try:
        while True:
            chunk = source.recv(65536)
            if not chunk:
                break
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("out_prefix")
    parser.add_argument("--frames", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--forward")
    args = parser.parse_args()

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", args.port))
    server.listen(1)
    server.settimeout(args.timeout)
    conn, _ = server.accept()
    conn.settimeout(args.timeout)
    upstream = None
    if args.forward:
        host, port = args.forward.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=args.timeout)
        threading.Thread(target=relay, args=(upstream, conn), daemon=True).start()
    buffer = b""
    written = 0
    try:
        while written < args.frames:
            chunk = conn.recv(65536)
            if not chunk:
                break
            if upstream:
                upstream.sendall(chunk)
            buffer += chunk
            while len(buffer) >= 4 and written < args.frames:
                size = struct.unpack(">i", buffer[:4])[0]
                if len(buffer) < 4 + size:
                    break
                with open(f"{args.out_prefix}-{written}.bin", "wb") as out:
                    out.write(buffer[: 4 + size])
                buffer = buffer[4 + size:]
                written += 1
    except socket.timeout:
        pass
    conn.close()
    if upstream:
        upstream.close()
    print(f"captured {written} frame(s)")


if __name__ == "__main__":
    main()
