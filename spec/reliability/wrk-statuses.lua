-- wrk script of the overload test: POSTs a small message and counts the answers by status across
-- wrk's threads, plus the 503 answers that lack Retry-After; done() prints one JSON line.
wrk.method = "POST"
wrk.body = '{"x":["1"]}'
wrk.headers["Content-Type"] = "application/json"

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  counts = {}
  no_retry_after = 0
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
  if status == 503 and headers["retry-after"] == nil and headers["Retry-After"] == nil then
    no_retry_after = no_retry_after + 1
  end
end

function done(summary, latency, requests)
  local total = {}
  local missing = 0
  for _, t in ipairs(threads) do
    for status, n in pairs(t:get("counts")) do
      total[status] = (total[status] or 0) + n
    end
    missing = missing + t:get("no_retry_after")
  end
  local parts = {}
  for status, n in pairs(total) do
    table.insert(parts, string.format('"%d":%d', status, n))
  end
  io.write(string.format('WRK_RESULT {"statuses":{%s},"noRetryAfter":%d,"socketErrors":%d,"seconds":%.3f}\n',
    table.concat(parts, ","), missing,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration / 1e6))
end
