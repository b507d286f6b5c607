from enum import StrEnum


class PublishBatchJsonBodyItemTocsinaction(StrEnum):
    ACKNOWLEDGE = "acknowledge"
    RESOLVE = "resolve"
    TRIGGER = "trigger"

    def __str__(self) -> str:
        return str(self.value)
