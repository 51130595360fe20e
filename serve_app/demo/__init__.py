"""The fictional demo servers: a CKAN- and BPS-shaped open-data server over a SQLite table of invented
figures (``open_data.py``) and an MCP server (``mcp_server.py``). They stand in for the live sources in the
demo config and the tests; nothing in the service imports them."""
