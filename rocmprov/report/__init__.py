"""One renderer per output format. Format choices are an Enum (an exhaustiveness test guards it)."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    TABLE = "table"
    JSON = "json"
    JUNIT = "junit"
    PROMETHEUS = "prometheus"
    HTML = "html"


FORMATS = tuple(f.value for f in Format)
