"""`forgec serve`: compiled environments over MCP (stdio, streamable HTTP) with an evaluation side channel.

`sessions` has no MCP dependency (envs per session, scoring with runtime.reward);
`server` and `evalroutes` need the `serve` extra (`pip install 'forgec[serve]'`).
See docs/serve.md.
"""
