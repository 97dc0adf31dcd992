#!/usr/bin/env python3
"""Several memcached clients at once against one server, each setting and then
getting back its own keys (text protocol), with values of 1 B to 200 KiB.

Usage: memcached_clients.py PORT CLIENTS KEYS
Prints "clients=C keys=K set=S hits=H mismatches=M errors=E" and exits 0
only when every value came back byte for byte.
"""
import random
import socket
import sys
import threading


def recv_line(sock, buf):
    while b"\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        buf += chunk
    line, _, rest = buf.partition(b"\r\n")
    return line, rest


def recv_exact(sock, buf, n):
    while len(buf) < n:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        buf += chunk
    return buf[:n], buf[n:]


def client(cid, port, keys, result):
    rng = random.Random(cid)
    values = {}
    stored = hits = mismatches = 0
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        buf = b""
        for k in range(keys):
            key = b"c%d-k%d" % (cid, k)
            value = bytes(rng.getrandbits(8) for _ in range(8)) * (rng.choice((1, 16, 512, 25600)))
            values[key] = value
            sock.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value))
            line, buf = recv_line(sock, buf)
            stored += line == b"STORED"
        for key, value in values.items():
            sock.sendall(b"get %s\r\n" % key)
            line, buf = recv_line(sock, buf)
            if line.startswith(b"VALUE "):
                size = int(line.split()[3])
                data, buf = recv_exact(sock, buf, size + 2)
                line, buf = recv_line(sock, buf)
                hits += 1
                mismatches += data[:-2] != value or line != b"END"
        sock.close()
        result[cid] = (stored, hits, mismatches, 0)
    except (OSError, ValueError) as e:
        print(f"client {cid}: {e}", file=sys.stderr)
        result[cid] = (stored, hits, mismatches, 1)


def main():
    port, clients, keys = (int(a) for a in sys.argv[1:4])
    result = {}
    threads = [threading.Thread(target=client, args=(c, port, keys, result)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored, hits, mismatches, errors = (sum(r[i] for r in result.values()) for i in range(4))
    print(f"clients={clients} keys={clients * keys} set={stored} hits={hits} "
          f"mismatches={mismatches} errors={errors}")
    sys.exit(0 if stored == hits == clients * keys and mismatches == errors == 0 else 1)


if __name__ == "__main__":
    main()
