-- query.lua: wrk script for tests/bench/catalog_pg/sharing.sh (run from the repository
-- root): tests/bench/grpc/auth.lua (the token from $DELTAD_TOKEN, the WRK_RESULT line),
-- with an empty QueryTable body POSTed.
dofile("tests/bench/grpc/auth.lua")
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
