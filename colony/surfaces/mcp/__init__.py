"""The MCP server: the kernel and approval tools and every catalog tool, over stdio and streamable HTTP.

``server`` builds it, ``listing`` says what a principal is shown, ``results`` turns
outcomes and errors into tool results, ``changes`` tells clients the tools changed.
"""
