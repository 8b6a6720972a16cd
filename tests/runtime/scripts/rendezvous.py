"""Instances meet by hostname: algo-1 listens on algo-1:PORT, the others connect and say who they are;
algo-1 answers each with every name it heard, and every instance saves what it learned."""

import json
import os
import socket
import sys
import time

PORT = 29400
config = os.environ.get("SM_INPUT_CONFIG_DIR", "/opt/ml/input/config")  # a container has no SM_*
with open(os.path.join(config, "resourceconfig.json")) as handle:
    resources = json.load(handle)
host, hosts = resources["current_host"], resources["hosts"]
seen = {
    "hostname": socket.gethostname(),
    "addresses": {h: socket.gethostbyname(h) for h in hosts},
}
if host == hosts[0]:
    server = socket.create_server(("algo-1", PORT))
    peers = []
    for _ in hosts[1:]:
        connection, address = server.accept()
        peers.append((connection, connection.recv(64).decode(), address[0]))
    names = sorted([host] + [name for _, name, _ in peers])
    for connection, _, _ in peers:
        connection.sendall(json.dumps(names).encode())
        connection.close()
    seen["heard"] = names
else:
    for _attempt in range(600):
        try:
            connection = socket.create_connection(("algo-1", PORT))
            break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("algo-1 never listened")
    connection.sendall(host.encode())
    seen["heard"] = json.loads(connection.recv(4096).decode())
print("seen", json.dumps(seen, sort_keys=True), flush=True)
with open(os.path.join(os.environ.get("SM_MODEL_DIR", "/opt/ml/model"), "seen.json"), "w") as out:
    json.dump(seen, out)
