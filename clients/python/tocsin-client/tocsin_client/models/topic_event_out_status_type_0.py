from enum import StrEnum


class TopicEventOutStatusType0(StrEnum):
    ACTUAL = "ACTUAL"
    DRILL = "DRILL"
    TEST = "TEST"

    def __str__(self) -> str:
        return str(self.value)
