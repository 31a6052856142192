#!/usr/bin/env python3
"""Counting helpers of bench/pg-profile.sh (not run by hand).

  pg_profile.py statements DB            < log lines    -> JSON {kind: count}
  pg_profile.py wal DBOID FILENODES.csv  < pg_waldump   -> JSON (records, bytes, FPIs, by relation)
  pg_profile.py case NAME UNIT UNITS DIR                -> JSON of one case, from DIR's snapshots
  pg_profile.py report CASE.json...                     -> the profile's tables (text)

statements: counts the statements PostgreSQL logged (log_statement = all)
for database DB, by their first SQL word (BEGIN, SELECT, WITH, ...);
statements whose text carries the marker `pg-profile` (the script's own
queries) are left out. One logged statement is one round trip: sqlx and
pgbench send each statement and wait for its answer (sqlx's Parse of a
statement not yet prepared on its connection is one more, not logged).

wal: sums the WAL records pg_waldump printed that belong to database DBOID:
a record with a block of a relation of that database (`rel TS/DBOID/NODE`),
or a record of a transaction that wrote such a block (its commit record).
FILENODES.csv maps relfilenode to relation name (`relfilenode,relname`).
"""
import collections
import csv
import json
import re
import sys

STMT = re.compile(r"\] \S*@(\S+) LOG:  (?:statement|execute [^:]*): ?(.*)$")
RECORD = re.compile(
    r"^rmgr: (\S+)\s+len \(rec/tot\):\s*(\d+)/\s*(\d+), tx:\s*(\d+), lsn: \S+, prev \S+, desc: (\S+)(.*)$"
)
BLOCK = re.compile(r"rel (\d+)/(\d+)/(\d+)(?: fork \S+)? blk \d+( FPW)?")


def statements(db):
    counts = collections.Counter()
    pending = False  # the statement's text starts on the next line
    for line in sys.stdin:
        m = STMT.search(line)
        if m:
            pending = False
            if m.group(1) != db or "pg-profile" in line:
                continue
            text = m.group(2).strip()
            if text:
                counts[text.split()[0].rstrip(";").upper()] += 1
            else:
                pending = True
        elif pending and line.startswith("\t") and line.strip():
            counts[line.split()[0].rstrip(";").upper()] += 1
            pending = False
    json.dump(dict(counts), sys.stdout)


def wal(dboid, filenodes):
    names = {}
    with open(filenodes) as f:
        for row in csv.reader(f):
            names[row[0]] = row[1]
    ours = collections.Counter()  # records, bytes, fpi, fpi_bytes
    by_rel = collections.defaultdict(collections.Counter)
    by_kind = collections.Counter()
    kind_bytes = collections.Counter()
    xids = set()
    pending = []  # records without a block: attributed if their transaction is ours
    for line in sys.stdin:
        m = RECORD.match(line)
        if not m:
            continue
        rmgr, rec, tot, tx, desc, rest = m.groups()
        rec, tot = int(rec), int(tot)
        blocks = BLOCK.findall(rest)
        mine = [b for b in blocks if b[1] == dboid]
        if mine:
            if tx != "0":
                xids.add(tx)
            rel = names.get(mine[0][2], "filenode " + mine[0][2])
            fpw = sum(1 for b in mine if b[3])
            for c in (ours, by_rel[rel]):
                c["records"] += 1
                c["bytes"] += tot
                c["fpi"] += fpw
                c["fpi_bytes"] += (tot - rec) if fpw else 0
            by_kind[rmgr + " " + desc] += 1
            kind_bytes[rmgr + " " + desc] += tot
        elif not blocks and tx != "0":
            pending.append((rmgr, desc, tx, tot))
    for rmgr, desc, tx, tot in pending:
        if tx in xids:
            ours["records"] += 1
            ours["bytes"] += tot
            by_rel["(transaction records)"]["records"] += 1
            by_rel["(transaction records)"]["bytes"] += tot
            by_kind[rmgr + " " + desc] += 1
            kind_bytes[rmgr + " " + desc] += tot
            if rmgr == "Transaction" and desc == "COMMIT":
                ours["commits"] += 1
    ours["write_transactions"] = len(xids)
    json.dump({"total": ours, "by_relation": by_rel, "by_kind": by_kind, "kind_bytes": kind_bytes}, sys.stdout)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def delta(before, after):
    return {k: int(after[k]) - int(before[k]) for k in after if k not in ("relname",)}


def case(name, unit, units, d):
    """DIR holds {tables,db,wal}_{begin,end}.csv, index_parent.csv, statements.json, wal.json."""
    tb = {r["relname"]: r for r in read_csv(f"{d}/tables_begin.csv")}
    tables = {}
    for r in read_csv(f"{d}/tables_end.csv"):
        t = delta(tb.get(r["relname"], {k: 0 for k in r}), r)
        t["indexes"] = int(r["indexes"])
        # a row inserted or updated outside HOT gets an entry in every index
        t["index_entries"] = t["indexes"] * (t["n_tup_ins"] + t["n_tup_upd"] - t["n_tup_hot_upd"])
        tables[r["relname"]] = t
    db = delta(read_csv(f"{d}/db_begin.csv")[0], read_csv(f"{d}/db_end.csv")[0])
    cluster = delta(read_csv(f"{d}/wal_begin.csv")[0], read_csv(f"{d}/wal_end.csv")[0])
    cluster["lsn_bytes"] = cluster.pop("lsn")
    json.dump(
        {
            "name": name,
            "unit": unit,
            "units": int(units),
            "tables": tables,
            "db": db,
            "cluster": cluster,
            "index_parent": {r["index"]: r["table"] for r in read_csv(f"{d}/index_parent.csv")},
            "statements": json.load(open(f"{d}/statements.json")),
            "wal": json.load(open(f"{d}/wal.json")),
        },
        sys.stdout,
    )


def per(n, d):
    return f"{n / d:.2f}" if d else "-"


def report(files):
    cases = [json.load(open(f)) for f in files]
    width = 26
    print(f"{'per unit of work':<38}" + "".join(f"{c['name']:>{width}}" for c in cases))
    print(f"{'(units)':<38}" + "".join(f"{str(c['units']) + ' ' + c['unit']:>{width}}" for c in cases))

    def line(label, get):
        print(f"{label:<38}" + "".join(f"{per(get(c), c['units']):>{width}}" for c in cases))

    kinds = sorted({k for c in cases for k in c["statements"]}, key=lambda k: -sum(c["statements"].get(k, 0) for c in cases))
    line("statements (round trips)", lambda c: sum(c["statements"].values()))
    for k in kinds:
        line(f"  {k}", lambda c, k=k: c["statements"].get(k, 0))
    line("commits (pg_stat_database)", lambda c: c["db"]["xact_commit"])
    line("rollbacks (pg_stat_database)", lambda c: c["db"]["xact_rollback"])
    line("write transactions (WAL)", lambda c: c["wal"]["total"].get("write_transactions", 0))
    line("rows inserted", lambda c: sum(t["n_tup_ins"] for t in c["tables"].values()))
    line("rows updated", lambda c: sum(t["n_tup_upd"] for t in c["tables"].values()))
    line("  of which HOT", lambda c: sum(t["n_tup_hot_upd"] for t in c["tables"].values()))
    line("rows deleted", lambda c: sum(t["n_tup_del"] for t in c["tables"].values()))
    line("index entries written (computed)", lambda c: sum(t["index_entries"] for t in c["tables"].values()))
    line("btree insert records (WAL)", lambda c: sum(v for k, v in c["wal"]["by_kind"].items() if k.startswith("Btree INSERT")))
    line("rows returned (tup_returned)", lambda c: c["db"]["tup_returned"])
    line("rows fetched (tup_fetched)", lambda c: c["db"]["tup_fetched"])
    line("buffer reads + hits", lambda c: c["db"]["blks_read"] + c["db"]["blks_hit"])
    line("WAL records (this database)", lambda c: c["wal"]["total"].get("records", 0))
    line("WAL bytes (this database)", lambda c: c["wal"]["total"].get("bytes", 0))
    line("  of which full-page images", lambda c: c["wal"]["total"].get("fpi_bytes", 0))
    line("  without full-page images", lambda c: c["wal"]["total"].get("bytes", 0) - c["wal"]["total"].get("fpi_bytes", 0))
    line("full-page images", lambda c: c["wal"]["total"].get("fpi", 0))
    line("WAL bytes (cluster, LSN diff)", lambda c: c["cluster"]["lsn_bytes"])
    line("WAL syncs (cluster, pg_stat_wal)", lambda c: c["cluster"]["wal_sync"])
    line("WAL writes (cluster, pg_stat_wal)", lambda c: c["cluster"]["wal_write"])
    for c in cases:
        print()
        print(f"{c['name']}: by table, per {c['unit']} ({c['units']})")
        print(
            f"  {'table':<28}{'indexes':>8}{'ins':>8}{'upd':>8}{'hot':>8}{'del':>8}{'idx ent':>9}{'WAL B':>9}{'FPI':>7}"
            f"{'seq scans':>10}{'seq rows':>10}{'idx scans':>10}{'idx rows':>10}"
        )
        wal_rel = c["wal"]["by_relation"]
        index_wal = collections.Counter()
        index_fpi = collections.Counter()
        for rel, v in wal_rel.items():
            parent = c["index_parent"].get(rel)
            if parent:
                index_wal[parent] += v.get("bytes", 0)
                index_fpi[parent] += v.get("fpi", 0)
        rows = sorted(c["tables"].items(), key=lambda kv: -(wal_rel.get(kv[0], {}).get("bytes", 0) + index_wal[kv[0]]))
        for name, t in rows:
            w = wal_rel.get(name, {})
            if not (t["n_tup_ins"] or t["n_tup_upd"] or t["n_tup_del"] or w.get("bytes") or t["seq_scan"] or t["idx_scan"]):
                continue
            u = c["units"]
            print(
                f"  {name:<28}{t['indexes']:>8}{per(t['n_tup_ins'], u):>8}{per(t['n_tup_upd'], u):>8}"
                f"{per(t['n_tup_hot_upd'], u):>8}{per(t['n_tup_del'], u):>8}{per(t['index_entries'], u):>9}"
                f"{per(w.get('bytes', 0) + index_wal[name], u):>9}{per(w.get('fpi', 0) + index_fpi[name], u):>7}"
                f"{per(t['seq_scan'], u):>10}{per(t['seq_tup_read'], u):>10}{per(t['idx_scan'], u):>10}"
                f"{per(t['idx_tup_fetch'], u):>10}"
            )
        print(f"  WAL per {c['unit']} by relation (heap, index, transaction records), top 12:")
        for rel, v in sorted(wal_rel.items(), key=lambda kv: -kv[1].get("bytes", 0))[:12]:
            print(
                f"    {rel:<40}{per(v.get('bytes', 0), c['units']):>10} B {per(v.get('records', 0), c['units']):>7} records"
                f" {per(v.get('fpi_bytes', 0), c['units']):>9} B in {per(v.get('fpi', 0), c['units'])} full-page images"
            )
        print(f"  WAL records per {c['unit']} by kind, top 10:")
        for k, v in sorted(c["wal"]["by_kind"].items(), key=lambda kv: -kv[1])[:10]:
            b = c["wal"]["kind_bytes"].get(k, 0)
            print(f"    {k:<44}{per(v, c['units']):>10} records {per(b, c['units']):>9} B")


def main():
    cmd = sys.argv[1]
    if cmd == "statements":
        statements(sys.argv[2])
    elif cmd == "wal":
        wal(sys.argv[2], sys.argv[3])
    elif cmd == "case":
        case(*sys.argv[2:6])
    elif cmd == "report":
        report(sys.argv[2:])
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
