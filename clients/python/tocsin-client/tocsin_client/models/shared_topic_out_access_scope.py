from enum import StrEnum


class SharedTopicOutAccessScope(StrEnum):
    PRIVATE = "private"
    PUBLIC = "public"
    RESTRICTED = "restricted"

    def __str__(self) -> str:
        return str(self.value)
