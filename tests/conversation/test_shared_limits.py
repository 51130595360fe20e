"""The store's shared rate limit is a moving window: a window edge never admits twice the limit (issue 35).
Times are given to the function, not slept through."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from serve_app.conversation.shared_limits import hit_moving_window
from serve_app.conversation.store import Store
from serve_app.conversation.tables import t_rate_hits

T0 = 1_700_000_040.0  # 20 s into a wall-clock minute


def _hit(store: Store, key: str, limit: int, at: float) -> float | None:
    with store._write() as conn:
        return hit_moving_window(conn, store.dialect, key, limit, 60.0, at)


def test_the_limit_before_an_edge_and_after_it_is_not_admitted_twice(store: Store) -> None:
    assert [_hit(store, "admin", 3, T0 + 39.0) for _ in range(3)] == [None] * 3  # 59 s into the minute
    late = [_hit(store, "admin", 3, T0 + 41.0) for _ in range(3)]  # 1 s into the next minute
    assert late == [pytest.approx(58.0)] * 3, "a fixed window admitted these"
    assert _hit(store, "admin", 3, T0 + 98.5) == pytest.approx(0.5)
    assert _hit(store, "admin", 3, T0 + 99.0) is None  # one window after the first three: they left it
    assert _hit(store, "other", 3, T0 + 41.0) is None, "keys are independent"


def test_a_steady_caller_gets_the_limit_per_window_and_old_hits_are_deleted(store: Store) -> None:
    admitted = [at for at in range(0, 180, 2) if _hit(store, "steady", 10, T0 + at) is None]
    assert max(sum(1 for t in admitted if start <= t < start + 60) for start in admitted) == 10
    with store.engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(t_rate_hits)).scalar_one()
    assert rows <= 10, "a key keeps at most its limit of rows"


def test_refusals_and_errors(store: Store) -> None:
    assert _hit(store, "none", 0, T0) == 60.0
    with pytest.raises(ValueError), store._write() as conn:
        hit_moving_window(conn, store.dialect, "k", 1, 0.0, T0)
