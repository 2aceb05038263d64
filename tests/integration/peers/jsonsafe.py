"""jsonsafe.py: the scalar rules shared by the peers that render rows as JSON-safe values
(spark_judge.py, arrow_rows.py), the same rules deltactl table scan prints by: timestamps
in UTC as "YYYY-MM-DDTHH:MM:SS.ffffff", NaN and infinities as strings."""
import datetime
import math


def timestamp(v):
    if v.tzinfo is not None:
        v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return v.strftime("%Y-%m-%dT%H:%M:%S.%f")


def floating(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v
