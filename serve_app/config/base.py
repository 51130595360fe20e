"""What every config section shares: the one-sentence :class:`ConfigError` and the strict model (an
unknown key is an error, never a setting accepted and ignored)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ConfigError(Exception):
    """A configuration problem, stated in one sentence fit for a terminal."""


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
