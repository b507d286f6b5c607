from enum import StrEnum


class MetricRuleInMode(StrEnum):
    ABSOLUTE = "ABSOLUTE"
    DELTA = "DELTA"

    def __str__(self) -> str:
        return str(self.value)
