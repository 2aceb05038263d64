"""deltars_load.py: the delta-rs side of compare_duckdb.sh. Opens a table with the
deltalake package (DeltaTable(path), the snapshot load) and takes its file list
(get_add_actions(), an Arrow table), printing one line of key=value figures.

    python deltars_load.py TABLE_DIR      (a venv with deltalake, e.g. deltalake==1.6.6)
"""
import resource
import sys
import time


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    t0 = time.perf_counter()
    import deltalake  # noqa: E402  (import time is delta-rs's fixed cost, kept apart)
    t1, c1 = time.perf_counter(), cpu()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    dt = deltalake.DeltaTable(sys.argv[1])
    adds = dt.get_add_actions()
    rows = adds.num_rows
    t2, c2 = time.perf_counter(), cpu()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"deltars: mode=open+files rows={rows} version={dt.version()} init_ms={(t1 - t0) * 1000:.1f} "
          f"query_ms={(t2 - t1) * 1000:.1f} rss_init_kb={rss1} maxrss_kb={rss} "
          f"cpu_ms={c2 * 1000:.0f} query_cpu_ms={(c2 - c1) * 1000:.0f} "
          f"deltalake={deltalake.__version__}")


if __name__ == "__main__":
    main()
