"""A corpus's time zone: where its dates are read and shown.

Dates are stored as naive UTC instants. A corpus imported with a zone (``--timezone Europe/Prague``)
reads the dates its file writes without an offset as wall times of that zone, and every page shows
and bins dates as wall times of it: a tweet of 00:30 in Prague (23:30 UTC the day before) counts on
its own day. Without one (and for every corpus imported before) the zone is UTC: nothing is moved.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import numpy as np
import pandas as pd

UTC = "UTC"


def check(zone: str | None) -> str:
    """The zone's IANA name ('' or None: UTC); ValueError naming it when it is not one."""
    zone = (zone or UTC).strip() or UTC
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        close = sorted(z for z in available_timezones() if zone.lower().split("/")[-1] in z.lower())[:3]
        raise ValueError(f"unknown time zone {zone!r}: use an IANA name such as Europe/Prague, UTC"
                         + (f" (did you mean {', '.join(close)}?)" if close else "")) from None
    return zone


def local(values, zone: str):
    """Naive UTC instants (a Series, DatetimeIndex or Timestamp) as naive wall times of ``zone``;
    unchanged for UTC."""
    if zone == UTC:
        return values
    if isinstance(values, pd.Series):
        return values.dt.tz_localize(UTC).dt.tz_convert(zone).dt.tz_localize(None)
    if isinstance(values, pd.Timestamp):
        return values if pd.isna(values) else values.tz_localize(UTC).tz_convert(zone).tz_localize(None)
    return values.tz_localize(UTC).tz_convert(zone).tz_localize(None)


def to_utc(wall: pd.Series, zone: str) -> pd.Series:
    """Naive wall times of ``zone`` as naive UTC instants (unchanged for UTC). A time the clocks skip
    in spring moves forward; one they repeat in autumn is taken as the earlier (summer) one."""
    if zone == UTC:
        return wall
    aware = wall.dt.tz_localize(zone, ambiguous=np.ones(len(wall), bool), nonexistent="shift_forward")
    return aware.dt.tz_convert(UTC).dt.tz_localize(None)


def day_start_utc(day: dt.date | str, zone: str) -> pd.Timestamp:
    """The naive UTC instant at which ``day`` begins in ``zone`` (its local midnight)."""
    start = pd.Timestamp(day).normalize()
    return start if zone == UTC else to_utc(pd.Series([start]), zone).iloc[0]


def shown(frame: pd.DataFrame, zone: str) -> pd.DataFrame:
    """``frame`` with its date column as wall times of ``zone``, for showing (the frame itself for UTC
    or without dates)."""
    if zone == UTC or "date" not in frame.columns:
        return frame
    return frame.assign(date=local(frame["date"], zone))


def wall(at: str, zone: str) -> str:
    """An instant the app recorded (ISO text, UTC with or without its offset) as 'YYYY-MM-DD HH:MM' of
    ``zone``: when a step was taken, in the corpus's time."""
    t = pd.Timestamp(at)
    t = t.tz_localize(UTC) if t.tzinfo is None else t
    return f"{t.tz_convert(zone):%Y-%m-%d %H:%M}"
