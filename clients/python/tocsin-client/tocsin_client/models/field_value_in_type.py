from enum import StrEnum


class FieldValueInType(StrEnum):
    ANY = "any"
    BOOLEAN = "boolean"
    NUMBER = "number"
    STRING = "string"

    def __str__(self) -> str:
        return str(self.value)
