from enum import StrEnum


class TokenExchangeBodyGrantType(StrEnum):
    URNIETFPARAMSOAUTHGRANT_TYPETOKEN_EXCHANGE = (
        "urn:ietf:params:oauth:grant-type:token-exchange"
    )

    def __str__(self) -> str:
        return str(self.value)
