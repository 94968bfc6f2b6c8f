-- Whether `state` is one of `states`, a comma list (a move's from-states, from moves.ts).
local function stateIn(state, states)
  for s in string.gmatch(states, '[^,]+') do
    if s == state then return true end
  end
  return false
end
