"""dml_common.py: what test_dml.py and test_dml_random.py share: the paths of the tools,
tables made by Spark (the judge), copies, and the comparisons of a deltad table with the
table Spark changed the same way (rows by Spark, delta-rs and DuckDB, the last commit)."""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
IT = os.path.dirname(HERE)
sys.path.insert(0, IT)
import dd_harness as h  # noqa: E402

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
PY = os.path.join(VENV, "bin", "python")
ROWS_PEER = os.path.join(IT, "peers", "optimize_peer.py")
DC_PEER = os.path.join(HERE, "dml_connect.py")
DW_PEER = os.path.join(IT, "dwrite", "dwrite_connect.py")
DELTACTL = os.environ.get("DELTACTL_BIN", os.path.join(h.ROOT, "build-test", "cmd", "deltactl"))
RACE = os.environ.get("DML_RACE_BIN", os.path.join(h.ROOT, "build-test", "tests", "integration",
                                                   "dml", "dml_race"))


def q(path):
    return "delta.`%s`" % path


def make_table(judge, path, columns, values, part="", props=""):
    """A Delta table made by Spark: one INSERT (one commit, files) per entry of values
    (VALUES rows, or a SELECT)."""
    judge.sql("CREATE TABLE %s (%s) USING delta %s %s" % (q(path), columns, part, props))
    for v in values:
        judge.sql("INSERT INTO %s %s%s" % (q(path), "" if v.startswith("SELECT") else "VALUES ", v))


def copy_pair(base, dest_dir, tag):
    """Two copies of table base: (deltad's, Spark's)."""
    a = os.path.join(dest_dir, tag + "-dd")
    b = os.path.join(dest_dir, tag + "-spark")
    shutil.copytree(base, a)
    shutil.copytree(base, b)
    return a, b


def spark_rows(judge, path):
    return sorted(json.dumps(r, sort_keys=True) for r in judge.read(path))


def peer_rows(path):
    p = subprocess.run([PY, ROWS_PEER, json.dumps({"op": "rows", "path": path})],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError("optimize_peer failed: %s" % p.stderr[-2000:])
    return json.loads(p.stdout)


def last_commit(judge, path):
    return judge.sql("DESCRIBE HISTORY %s LIMIT 1" % q(path))[0]


def tree(path):
    """Every file under the table (log and data), for "nothing was written"."""
    out = set()
    for d, _, fs in os.walk(path):
        for f in fs:
            if not f.endswith(".crc"):
                out.add(os.path.relpath(os.path.join(d, f), path))
    return out


def deltactl(args, server=None, tls_ca=None, expect=0, timeout=600, cwd=None):
    cmd = [DELTACTL]
    if server:
        cmd += ["--server", server.grpc_target, "--token", server.token]
        if tls_ca:
            cmd += ["--tls-ca-file", tls_ca]
    cmd += ["--output", "jsonl", "table"] + list(args)
    if not server:
        cmd.append("--local")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    if p.returncode != expect:
        raise AssertionError("deltactl %s: exit %d (want %d): %s %s"
                             % (" ".join(args), p.returncode, expect, p.stdout, p.stderr))
    if expect:
        return p.stderr
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def affected(rows):
    """num_affected_rows of a result row list, as ints: Spark's rows and the client's use
    Delta's snake_case name, deltactl prints the API's camelCase (numAffectedRows)."""
    return [int(r["numAffectedRows"] if "numAffectedRows" in r else r["num_affected_rows"]) for r in rows]


def connect_url(server):
    port = server.grpc_target.rsplit(":", 1)[1]
    return "sc://127.0.0.1:%s/;use_ssl=true;token=%s" % (port, server.token)


def run_client(test, ops):
    """dml_connect.py's results of ops against test's server (TLS with test.certs)."""
    env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=test.certs.ca_cert)
    p = subprocess.run([PY, DC_PEER, connect_url(test.server), json.dumps(ops)],
                       capture_output=True, text=True, timeout=900, env=env)
    test.assertEqual(p.returncode, 0, p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_dwrite(test, ops):
    """dwrite/dwrite_connect.py's answers of DataFrame write ops against test's server."""
    env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=test.certs.ca_cert)
    p = subprocess.run([PY, DW_PEER, connect_url(test.server), json.dumps(ops)],
                       capture_output=True, text=True, timeout=900, env=env)
    test.assertEqual(p.returncode, 0, p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def merge_sql(target, op, source=None):
    """Spark's MERGE statement for a merge op of dml_connect.py on table target (source: a
    table name instead of the op's rows)."""
    if source is None:
        cols = [c.split()[0] for c in op["source_schema"].split(",")]
        vals = ", ".join("(%s)" % ", ".join(sql_lit(v) for v in r) for r in op["source_rows"])
        source = "(SELECT * FROM VALUES %s AS v(%s))" % (vals, ", ".join(cols))
    if op.get("source_filter"):
        source = "(SELECT * FROM %s WHERE %s)" % (source, op["source_filter"])
    out = "MERGE %sINTO %s %s USING %s %s ON %s" % ("WITH SCHEMA EVOLUTION " if op.get("evolve") else "",
                                                   target, op.get("target_alias") or "", source,
                                                op.get("source_alias") or "", op["on"])
    for cl in op["clauses"]:
        w = {"matched": "WHEN MATCHED", "not_matched": "WHEN NOT MATCHED",
             "nmbs": "WHEN NOT MATCHED BY SOURCE"}[cl["when"]]
        if cl.get("cond"):
            w += " AND " + cl["cond"]
        a = cl["action"]
        st = cl.get("set") or {}
        if a == "update":
            w += " THEN UPDATE SET " + ", ".join("%s = %s" % kv for kv in st.items())
        elif a == "update_all":
            w += " THEN UPDATE SET *"
        elif a == "delete":
            w += " THEN DELETE"
        elif a == "insert":
            w += " THEN INSERT (%s) VALUES (%s)" % (", ".join(st), ", ".join(st.values()))
        else:
            w += " THEN INSERT *"
        out += " " + w
    return out


def sql_lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'%s'" % v.replace("'", "''")
    return repr(v)


def merge_counts(rows):
    """The four counts of a MERGE result row, as ints."""
    r = rows[0]
    return [int(r[k]) for k in ("num_affected_rows", "num_updated_rows", "num_deleted_rows", "num_inserted_rows")]
