from enum import StrEnum


class PublishJsonBodyTocsinaction(StrEnum):
    ACKNOWLEDGE = "acknowledge"
    RESOLVE = "resolve"
    TRIGGER = "trigger"

    def __str__(self) -> str:
        return str(self.value)
