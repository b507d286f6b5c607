from enum import StrEnum


class CheckSubjectKind(StrEnum):
    SERVICE_ACCOUNT = "service_account"
    USER_ACCOUNT = "user_account"

    def __str__(self) -> str:
        return str(self.value)
