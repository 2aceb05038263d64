-- auth.lua: wrk script for the deltad REST benchmark. Sends the admin token from
-- $DELTAD_TOKEN on every request, counts non-2xx answers, and ends with one line
--   WRK_RESULT <requests> <duration_us> <p50_us> <p99_us> <errors>
-- that run.sh turns into a Markdown row.
local token = os.getenv("DELTAD_TOKEN") or ""
wrk.headers["Authorization"] = "Bearer " .. token

done = function(summary, latency, requests)
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.status + e.timeout
  io.write(string.format("WRK_RESULT %d %d %d %d %d\n", summary.requests, summary.duration,
                         latency:percentile(50), latency:percentile(99), errors))
end
