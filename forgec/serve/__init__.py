"""`forgec serve`: compiled environments over MCP (stdio, streamable HTTP) with an evaluation side channel.

`sessions` and `episodes` have no MCP dependency (envs per session, scoring with runtime.reward; eval's episode
with the agent's tool calls arriving from outside);
`server` and `evalroutes` need the `serve` extra (`pip install 'forgec[serve]'`).
See docs/serve.md.
"""
