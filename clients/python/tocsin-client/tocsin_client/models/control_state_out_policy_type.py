from enum import StrEnum


class ControlStateOutPolicyType(StrEnum):
    BYPASS = "BYPASS"
    METRIC = "METRIC"
    SET = "SET"

    def __str__(self) -> str:
        return str(self.value)
