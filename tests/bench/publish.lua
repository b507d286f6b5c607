-- wrk script of `make bench`: POST the same JSON body with the same headers to any endpoint.
--
-- The body and the Authorization header come from the environment (BENCH_BODY,
-- BENCH_AUTHORIZATION) so the token never shows in a process list; `wrk ... -- BODY AUTH`
-- (wrk.args) overrides them. Every response's status is counted per class; done() prints
-- one machine-readable line that tests/bench/run.py parses:
--   BENCH_STATUS total=N ok=N non2xx=N first_bad=STATUS
-- (wrk's own "Non-2xx or 3xx responses" only counts statuses >= 400.)

wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY") or '{"status":"ACTUAL","data":{}}'
-- A body too large for the environment (a batch publish: the kernel caps one variable at 128 KiB)
-- comes from the file BENCH_BODY_FILE names.
local body_file = os.getenv("BENCH_BODY_FILE")
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"))
  wrk.body = f:read("*a")
  f:close()
end
wrk.headers["Content-Type"] = "application/json"
local auth = os.getenv("BENCH_AUTHORIZATION")
if auth and auth ~= "" then
  wrk.headers["Authorization"] = auth
end

-- Extra headers (BENCH_HEADERS, one "name: value" a line: CloudEvents' ce-* headers), and with
-- BENCH_UNIQUE set, "%ID%" in the body and in header values replaced by an id of its own for each
-- request (idempotency keys, CloudEvents ids: no request a duplicate of another).
local extra = os.getenv("BENCH_HEADERS") or ""
for name, value in extra:gmatch("([^:\n]+):%s*([^\n]*)") do
  wrk.headers[name] = value
end
if os.getenv("BENCH_UNIQUE") and os.getenv("BENCH_UNIQUE") ~= "" then
  local template, counter = wrk.body, 0
  local templated = {}
  for name, value in pairs(wrk.headers) do
    if value:find("%%ID%%") then
      templated[name] = value
    end
  end
  function request()
    counter = counter + 1
    -- the thread's own Lua state: its address tells the threads apart
    local id = os.getenv("BENCH_UNIQUE") .. tostring(templated):sub(8) .. "-" .. counter
    for name, value in pairs(templated) do
      wrk.headers[name] = value:gsub("%%ID%%", id)
    end
    return wrk.format(nil, nil, nil, (template:gsub("%%ID%%", id)))
  end
end

-- A pause after each response, per connection (BENCH_DELAY_MS): a steady offered load below
-- saturation, the same for the runs compared (wrk's delay() hook).
local delay_ms = tonumber(os.getenv("BENCH_DELAY_MS") or "0") or 0
if delay_ms > 0 then
  function delay()
    return delay_ms
  end
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  if args[1] and args[1] ~= "" then
    wrk.body = args[1]
  end
  if args[2] and args[2] ~= "" then
    wrk.headers["Authorization"] = args[2]
  end
  total = 0
  ok = 0
  first_bad = 0
end

function response(status, headers, body)
  total = total + 1
  if status >= 200 and status < 300 then
    ok = ok + 1
  elseif first_bad == 0 then
    first_bad = status
  end
end

function done(summary, latency, requests)
  local t, good, bad = 0, 0, 0
  for _, thread in ipairs(threads) do
    t = t + thread:get("total")
    good = good + thread:get("ok")
    if bad == 0 then
      bad = thread:get("first_bad")
    end
  end
  io.write(string.format("BENCH_STATUS total=%d ok=%d non2xx=%d first_bad=%d\n", t, good, t - good, bad))
end
