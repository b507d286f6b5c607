from enum import StrEnum


class ListTopicEventsDecisionType0(StrEnum):
    NOTIFY = "NOTIFY"
    RESOLVE = "RESOLVE"
    SUPPRESS = "SUPPRESS"

    def __str__(self) -> str:
        return str(self.value)
