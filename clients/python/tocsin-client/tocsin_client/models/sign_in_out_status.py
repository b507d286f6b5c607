from enum import StrEnum


class SignInOutStatus(StrEnum):
    ENROLMENT_REQUIRED = "enrolment_required"
    SECOND_FACTOR_REQUIRED = "second_factor_required"
    SIGNED_IN = "signed_in"

    def __str__(self) -> str:
        return str(self.value)
