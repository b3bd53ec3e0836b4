#!/usr/bin/env python3
# bench/backfill_store.py INDEX.sqlite — the store side of an embedding backfill, no model: every
# pending text fetched in batches of 128 and a 3 KB vector stored for each, on copies of a
# lexical index (`quarry index --no-embed`), with the SQL quarry used before 1ba6aa8/c1b7825
# (pending texts from the start of the index, the coverage recounted, every batch) and the SQL
# it uses now (pending texts after the last batch's hash, coverage counted from the batch's own
# chunks): the first grows with the square of the index's size, the second with its size.
import json, os, shutil, sqlite3, sys, time
src = sys.argv[1]
PENDING_OLD = """SELECT c.embed_hash FROM chunks c JOIN files f ON f.id = c.file_id
 WHERE c.embed_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.embed_hash)
 GROUP BY c.embed_hash LIMIT 128"""
PENDING_NEW = """SELECT c.embed_hash FROM chunks c JOIN files f ON f.id = c.file_id
 WHERE c.embed_hash > ?1 AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.embed_hash)
 GROUP BY c.embed_hash ORDER BY c.embed_hash LIMIT 128"""
RECOUNT = """SELECT r.name, count(c.id), count(e.hash) FROM repos r LEFT JOIN files f ON f.repo_id = r.id
 LEFT JOIN chunks c ON c.file_id = f.id LEFT JOIN embeddings e ON e.hash = c.embed_hash GROUP BY r.id"""
PER_HASH = """SELECT r.name, count(*) FROM chunks c JOIN files f ON f.id = c.file_id
 JOIN repos r ON r.id = f.repo_id WHERE c.embed_hash = ?1 GROUP BY r.id"""
blob = os.urandom(3072)
for variant in ["old", "new"]:
    db = f"{src}.backfill-{variant}"
    shutil.copy(src, db)
    c = sqlite3.connect(db)
    c.execute("DELETE FROM embeddings"); c.commit()
    cov = {r[0]: [r[2], r[1]] for r in c.execute(RECOUNT)}
    t = time.time(); last = ""; n = 0
    while True:
        rows = c.execute(PENDING_OLD).fetchall() if variant == "old" else c.execute(PENDING_NEW, (last,)).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        c.execute("BEGIN")
        c.executemany("INSERT OR REPLACE INTO embeddings(hash, vector) VALUES (?, ?)", [(h, blob) for (h,) in rows])
        if variant == "old":
            cov = {r[0]: [r[2], r[1]] for r in c.execute(RECOUNT)}
        else:
            for (h,) in rows:
                for name, k in c.execute(PER_HASH, (h,)):
                    cov[name][0] += k
        c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('coverage', ?)", (json.dumps(cov),))
        c.execute("COMMIT")
        n += len(rows)
    print(f"{variant}: {n} vectors stored in {time.time() - t:.1f} s; coverage {cov}", flush=True)
    c.close()
    os.remove(db)
