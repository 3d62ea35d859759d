-- wrk: cycles through the paths listed one a line in the file $PATHS, starting at a place
-- set by $SEED, so that two wrk processes do not ask in lockstep.
local paths = {}
for line in io.lines(os.getenv("PATHS")) do
  paths[#paths + 1] = line
end
math.randomseed(tonumber(os.getenv("SEED") or "1"))
local i = math.random(#paths)

request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
