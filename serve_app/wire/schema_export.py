"""``python -m serve_app.schema_export``: rewrite the committed JSON Schemas from the pydantic models."""

from __future__ import annotations

from serve_app.openapi import write_wire_schemas

if __name__ == "__main__":
    for path in write_wire_schemas():
        print(path)
