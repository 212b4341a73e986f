#!/usr/bin/env python3
"""Write load for the fault runs: WRITERS threads post batches of line protocol to Sluice's
/write, each point unique (tag writer, field seq, its own timestamp), and record every point
acknowledged (204). A failed batch is sent again, as Telegraf does, until it is acknowledged
or the run ends. Then `verify` compares the acknowledged points with the rows in PostgreSQL.

    load.py run URL DB SECONDS ACKED_FILE
    load.py verify ACKED_FILE PRESENT_FILE
"""
import http.client
import sys
import threading
import time
import urllib.parse

WRITERS = 4
BATCH = 500
BASE_NS = 1_700_000_000_000_000_000


def run(url, db, seconds, acked_path):
    target = urllib.parse.urlparse(url)
    deadline = time.monotonic() + seconds
    acked = []
    lock = threading.Lock()
    stats = {"sent": 0, "failed": 0}

    def writer(w):
        seq = 0
        conn = None
        while time.monotonic() < deadline:
            lines = []
            for s in range(seq, seq + BATCH):
                ts = BASE_NS + (w * 1_000_000_000 + s) * 1000
                lines.append(f"load,writer=w{w} seq={s}i,batch={seq // BATCH}i {ts}")
            body = ("\n".join(lines) + "\n").encode()
            while time.monotonic() < deadline:
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                    conn.request("POST", f"/write?db={db}", body=body)
                    response = conn.getresponse()
                    response.read()
                    with lock:
                        stats["sent"] += 1
                    if response.status == 204:
                        with lock:
                            acked.extend((w, s) for s in range(seq, seq + BATCH))
                        break
                    with lock:
                        stats["failed"] += 1
                    time.sleep(0.1)
                except (OSError, http.client.HTTPException):
                    with lock:
                        stats["failed"] += 1
                    if conn is not None:
                        conn.close()
                    conn = None
                    time.sleep(0.1)
            seq += BATCH

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(acked_path, "w") as out:
        for w, s in acked:
            out.write(f"w{w}|{s}\n")
    print(f"requests {stats['sent']}, failed attempts {stats['failed']}, points acknowledged {len(acked)}")


def verify(acked_path, present_path):
    acked = set(open(acked_path).read().split())
    present_rows = open(present_path).read().split()
    present = set(present_rows)
    lost = acked - present
    print(
        f"acknowledged {len(acked)}, present {len(present)} "
        f"(rows {len(present_rows)}, duplicates {len(present_rows) - len(present)}), "
        f"present but not acknowledged {len(present - acked)}, LOST {len(lost)}"
    )
    if lost:
        print("lost, first few:", sorted(lost)[:10])
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    else:
        verify(sys.argv[2], sys.argv[3])
