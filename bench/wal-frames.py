#!/usr/bin/env python3
"""Which tables and indexes the WAL's frames belong to.

Reads a copy of a live database and its WAL (taken while `serve` runs
under load, before it stops and checkpoints), keeps the frames of the
WAL's current generation (those whose salt is the header's), and counts
them per table or index (SQLite's `dbstat`), per commit. Several copies
(taken at different times: the WAL starts again every few thousand
frames) are added up, each generation of the WAL once.

    cp DB DB-wal /tmp/copy/ && bench/wal-frames.py /tmp/copy/DB
    bench/wal-frames.py /tmp/copy1/DB /tmp/copy2/DB ...
"""
import collections
import shutil
import sqlite3
import struct
import sys
import tempfile
from pathlib import Path

def count(db):
    """The frames of the WAL's current generation, by table or index, and its commits."""
    wal = Path(f"{db}-wal").read_bytes()
    page_size = struct.unpack(">I", wal[8:12])[0]
    salt = wal[16:24]
    frames, commits, off = [], 0, 32
    while off + 24 + page_size <= len(wal):
        page, db_size = struct.unpack(">II", wal[off : off + 8])
        if wal[off + 8 : off + 16] != salt:
            break
        frames.append(page)
        commits += db_size != 0
        off += 24 + page_size
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.db"
        shutil.copy(db, copy)
        shutil.copy(f"{db}-wal", f"{copy}-wal")
        names = {page: name for name, page in sqlite3.connect(copy).execute("SELECT name, pageno FROM dbstat")}
    return page_size, salt, collections.Counter(names.get(p, "?") for p in frames), commits


# Two copies of the same generation (the same salt): the longer one counts.
generations = {}
for db in sys.argv[1:]:
    page_size, salt, by_name, n = count(Path(db))
    if n > generations.get(salt, (None, -1))[1]:
        generations[salt] = (by_name, n)
totals = sum((by_name for by_name, _ in generations.values()), collections.Counter())
commits = sum(n for _, n in generations.values())
frames = sum(totals.values())
print(f"page size {page_size}, copies {len(sys.argv) - 1}, generations {len(generations)}, frames {frames}, commits {commits}, "
      f"frames per commit {frames / max(commits, 1):.1f}")
for name, n in totals.most_common():
    print(f"{name:40s} {n:7d} {n / max(commits, 1):6.2f} per commit")
