"""Real-program workload for python3 under libmemtop.so: many allocations
(dicts, lists, strings), threads, a subprocess, deterministic output, and
exit code 3."""
import hashlib
import json
import subprocess
import sys
import threading

data = {i: str(i) * (i % 50) for i in range(200000)}
lists = [[j * 2 for j in range(i % 100)] for i in range(20000)]
results = [None] * 4


def work(k):
    h = hashlib.sha256()
    chunks = []
    for i in range(20000):
        s = ("%d-%d;" % (k, i)) * 3
        chunks.append(s)
        h.update(s.encode())
    results[k] = (h.hexdigest()[:16], len("".join(chunks)))


threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(len(data), sum(len(v) for v in data.values()), sum(map(len, lists)))
print(json.dumps(results))
del data, lists
child = subprocess.run(["sh", "-c", "echo from a child"], capture_output=True, text=True)
print(child.stdout.strip(), child.returncode)
sys.stdout.flush()
sys.exit(3)
