#!/usr/bin/env python3
"""Captures the first request frames a real Kafka client sends, as golden bytes for codec tests.

Listens on 127.0.0.1:PORT, accepts one connection, writes each size-prefixed frame it receives to
OUT_PREFIX-<n>.bin until the client stops sending or `--frames` frames arrived, then closes. Clients give
up after the connection closes; only what they sent first is recorded (an ApiVersions request, and for
kafka-python the Metadata v0 probe sent right behind it).

Usage: capture_request.py PORT OUT_PREFIX [--frames N] [--timeout S]
"""
import argparse
import socket
import struct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("out_prefix")
    parser.add_argument("--frames", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", args.port))
    server.listen(1)
    server.settimeout(args.timeout)
    conn, _ = server.accept()
    conn.settimeout(args.timeout)
    buffer = b""
    written = 0
    try:
        while written < args.frames:
            chunk = conn.recv(65536)
            if not chunk:
                break
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
    print(f"captured {written} frame(s)")


if __name__ == "__main__":
    main()
