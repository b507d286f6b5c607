from enum import StrEnum


class TokenExchangeBodySubjectTokenType(StrEnum):
    URNIETFPARAMSOAUTHTOKEN_TYPEJWT = "urn:ietf:params:oauth:token-type:jwt"

    def __str__(self) -> str:
        return str(self.value)
