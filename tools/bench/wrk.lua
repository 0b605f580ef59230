-- wrk script of tools/bench/compare.py: one call, described by the
-- environment, and a JSON line of figures at the end.
--
--   BENCH_METHOD  GET (default) or POST
--   BENCH_BODY    the request body; "%d" in it becomes BENCH_RUN and a
--                 number unique to the run (device profile names)
--
-- The headers are those of a noauth Cyborg: an admin of project "bench"
-- with Nova's service role.

local method = os.getenv("BENCH_METHOD") or "GET"
local body = os.getenv("BENCH_BODY")
local run = os.getenv("BENCH_RUN") or ""
local counter = 0

wrk.method = method
wrk.headers["Accept"] = "application/json"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Roles"] = "admin,member,reader"
wrk.headers["X-Service-Roles"] = "service"
-- The existing service wants UUIDs (compare.py's HEADERS).
wrk.headers["X-Project-Id"] = "0b1e7a6d5c4f4e3d9a8b7c6d5e4f3a2b"
wrk.headers["X-User-Id"] = "5f4e3d2c1b0a49f88e7d6c5b4a392817"

function request()
   if body == nil then
      return wrk.format(nil, nil)
   end
   counter = counter + 1
   local unique = run .. "-" .. tostring(counter)
   return wrk.format(nil, nil, nil, (string.gsub(body, "%%d", unique)))
end

function done(summary, latency, requests)
   local errors = summary.errors
   io.write(string.format(
      '{"requests": %d, "duration_us": %d, "bytes": %d, ' ..
      '"errors": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, ' ..
      '"mean_us": %.1f}\n',
      summary.requests, summary.duration, summary.bytes,
      errors.connect + errors.read + errors.write + errors.status +
      errors.timeout, latency:percentile(50), latency:percentile(90),
      latency:percentile(99), latency.mean))
end
