-- query.lua: wrk script for tests/bench/catalog_pg/sharing.sh: POSTs an empty QueryTable
-- body with the recipient token from $DELTAD_TOKEN, counts non-2xx answers, and ends with
--   WRK_RESULT <requests> <duration_us> <p50_us> <p99_us> <errors>
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("DELTAD_TOKEN") or "")

done = function(summary, latency, requests)
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.status + e.timeout
  io.write(string.format("WRK_RESULT %d %d %d %d %d\n", summary.requests, summary.duration,
                         latency:percentile(50), latency:percentile(99), errors))
end
