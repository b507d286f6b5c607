from enum import StrEnum


class SecondFactorInMethod(StrEnum):
    RECOVERY_CODE = "recovery_code"
    TOTP = "totp"

    def __str__(self) -> str:
        return str(self.value)
