"""Throwaway OpenSearch nodes for the benchmarks: the test install
(scripts/install-test-opensearch.sh: OpenSearch 2.19.1 with k-NN), fresh data folders, free
loopback ports; as root each node runs as the user `quarry-search` (OpenSearch refuses root).
One node is a single-node cluster; several form one cluster. Use as a context manager:

    with OsCluster(nodes=3, heap="1g") as cluster:
        url = cluster.url("bench")       # opensearch+http://127.0.0.1:P1,127.0.0.1:P2,…/bench
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

SERVER_USER = "quarry-search"
DROPPED_JVM_OPTIONS = ("-Xlog:gc", "Xloggc", "HeapDumpPath", "ErrorFile", "-Xms", "-Xmx", "G1GC",
                       "G1Reserve", "InitiatingHeapOccupancy")


def install():
    home = os.environ.get("QUARRY_TEST_OPENSEARCH_HOME") or (
        "/opt/quarry/test-opensearch" if os.geteuid() == 0 else
        os.path.join(os.environ.get("XDG_DATA_HOME", os.path.expanduser("~/.local/share")), "quarry/test-opensearch"))
    server = os.path.join(home, "opensearch")
    if not os.path.exists(os.path.join(server, "plugins/opensearch-knn")):
        sys.exit(f"no OpenSearch in {server}: run scripts/install-test-opensearch.sh")
    with open(os.path.join(home, "java-home")) as f:
        return server, f.read().strip()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OsCluster:
    def __init__(self, nodes=1, heap="1g"):
        self.count, self.heap = nodes, heap
        self.server, self.java = install()

    def __enter__(self):
        self.work = tempfile.mkdtemp(prefix="quarry-os-bench-")
        os.chmod(self.work, 0o755)
        ports = [(free_port(), free_port()) for _ in range(self.count)]
        names = [f"bench-{i}" for i in range(self.count)]
        self.http_ports = [h for h, _ in ports]
        self.procs = []
        for i, (http, transport) in enumerate(ports):
            folder = os.path.join(self.work, names[i])
            config = os.path.join(folder, "config")
            for sub in ("config/jvm.options.d", "data", "logs", "tmp"):
                os.makedirs(os.path.join(folder, sub))
            for name in ("opensearch.yml", "log4j2.properties"):
                shutil.copy(os.path.join(self.server, "config", name), config)
            with open(os.path.join(self.server, "config/jvm.options")) as f:
                kept = [l for l in f.read().splitlines() if not any(d in l for d in DROPPED_JVM_OPTIONS)]
            with open(os.path.join(config, "jvm.options"), "w") as f:
                f.write("\n".join(kept) + "\n")
            settings = [f"cluster.name=quarry-bench-{os.getpid()}", f"node.name={names[i]}", "network.host=127.0.0.1",
                        f"http.port={http}", f"transport.port={transport}",
                        f"path.data={folder}/data", f"path.logs={folder}/logs",
                        "cluster.routing.allocation.disk.threshold_enabled=false"]
            if self.count == 1:
                settings.append("discovery.type=single-node")
            else:
                settings.append("discovery.seed_hosts=" + ",".join(f"127.0.0.1:{t}" for _, t in ports))
                settings.append("cluster.initial_cluster_manager_nodes=" + ",".join(names))
            command = [os.path.join(self.server, "bin/opensearch")] + [f"-E{s}" for s in settings]
            if os.geteuid() == 0:
                subprocess.run(["chown", "-R", SERVER_USER, folder], check=True)
                command = ["setpriv", f"--reuid={SERVER_USER}", f"--regid={SERVER_USER}", "--clear-groups", "--"] + command
            env = dict(os.environ, OPENSEARCH_JAVA_HOME=self.java, OPENSEARCH_PATH_CONF=config,
                       OPENSEARCH_TMPDIR=os.path.join(folder, "tmp"),
                       OPENSEARCH_JAVA_OPTS=f"-Xms{self.heap} -Xmx{self.heap} -XX:+UseG1GC")
            env.pop("JAVA_TOOL_OPTIONS", None)
            log = open(os.path.join(self.work, f"{names[i]}.out"), "w")
            self.procs.append(subprocess.Popen(command, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                               stdout=log, stderr=log))
        deadline = time.time() + 180
        while time.time() < deadline:
            try:
                health = self.get(f"/_cluster/health?wait_for_nodes={self.count}&timeout=1s")
                if health.get("number_of_nodes") == self.count:
                    return self
            except OSError:
                time.sleep(0.5)
        raise SystemExit(f"OpenSearch did not start: see {self.work}")

    def get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_ports[0]}{path}", timeout=60) as r:
            return json.load(r)

    def request(self, method, path, body=None):
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_ports[0]}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/x-ndjson" if isinstance(body, bytes) else "application/json"})
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.load(r)

    def url(self, prefix, query=""):
        hosts = ",".join(f"127.0.0.1:{p}" for p in self.http_ports)
        return f"opensearch+http://{hosts}/{prefix}{query}"

    def store_bytes(self, prefix):
        """Bytes on disk of every index of PREFIX, primaries and replicas."""
        stats = self.get(f"/{prefix}-*/_stats/store")
        return stats["_all"]["total"]["store"]["size_in_bytes"]

    def __exit__(self, *exc):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.work, ignore_errors=True)
