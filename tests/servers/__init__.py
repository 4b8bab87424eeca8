"""MCP servers the tests put behind Colony's gate: third-party ones (node/) and a hostile one of our own."""
