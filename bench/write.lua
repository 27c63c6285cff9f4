-- Durable comment writes spread over many documents (DESIGN.md §6).
-- Needs REVIEW_IDS_FILE (one review id per line) and TOKEN in the environment.
local ids = {}
for line in io.lines(os.getenv("REVIEW_IDS_FILE")) do
  ids[#ids + 1] = line
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
local body = '{"body":"A benchmark comment on the fox.","category":"note","locator":{"quote":{"exact":"quick brown fox"}}}'

request = function()
  local id = ids[math.random(#ids)]
  return wrk.format(nil, "/api/reviews/" .. id .. "/comments", nil, body)
end
