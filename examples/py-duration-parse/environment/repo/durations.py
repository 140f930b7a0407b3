"""Human-friendly durations: "45s", "5m", "1h30m" <-> seconds."""

import re

UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+)([dhms])")


def parse_duration(text):
    """Return the number of seconds in a duration such as "45s", "2m" or "1h30m".

    Units are d (days), h (hours), m (minutes) and s (seconds); case and surrounding
    whitespace are ignored. Raises ValueError for anything else.
    """
    cleaned = text.strip().lower()
    if not cleaned or _PART.sub("", cleaned):
        raise ValueError(f"invalid duration: {text!r}")
    seconds = 0
    for value, unit in _PART.findall(cleaned):
        seconds = int(value) * UNITS[unit]
    return seconds


def format_duration(seconds):
    """Return the shortest duration string for a whole number of seconds, e.g. 5400 -> "1h30m"."""
    if seconds < 0:
        raise ValueError(f"negative duration: {seconds}")
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in UNITS.items():
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
