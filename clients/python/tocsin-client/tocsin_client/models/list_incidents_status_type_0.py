from enum import StrEnum


class ListIncidentsStatusType0(StrEnum):
    ACKNOWLEDGED = "ACKNOWLEDGED"
    OPEN = "OPEN"
    RESOLVED = "RESOLVED"

    def __str__(self) -> str:
        return str(self.value)
