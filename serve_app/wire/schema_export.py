"""``python -m serve_app.wire.schema_export``: rewrite the committed JSON Schemas from the pydantic models."""

from __future__ import annotations

from serve_app.wire.openapi import write_wire_schemas

if __name__ == "__main__":
    for path in write_wire_schemas():
        print(path)
