from enum import StrEnum


class FieldValueType(StrEnum):
    ANY = "any"
    BOOLEAN = "boolean"
    NUMBER = "number"
    STRING = "string"

    def __str__(self) -> str:
        return str(self.value)
