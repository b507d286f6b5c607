from enum import StrEnum


class PagerdutyEnqueueBodyEventAction(StrEnum):
    ACKNOWLEDGE = "acknowledge"
    RESOLVE = "resolve"
    TRIGGER = "trigger"

    def __str__(self) -> str:
        return str(self.value)
