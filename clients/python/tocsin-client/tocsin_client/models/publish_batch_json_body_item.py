from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.publish_batch_json_body_item_tocsinaction import (
    PublishBatchJsonBodyItemTocsinaction,
)
from ..models.publish_batch_json_body_item_tocsinstatus import (
    PublishBatchJsonBodyItemTocsinstatus,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.publish_batch_json_body_item_data import PublishBatchJsonBodyItemData


T = TypeVar("T", bound="PublishBatchJsonBodyItem")


@_attrs_define
class PublishBatchJsonBodyItem:
    """
    Attributes:
        data (PublishBatchJsonBodyItemData): data
        id (str): with source: the idempotency key
        source (str):
        specversion (Literal['1.0']):
        type_ (str): event.name
        datacontenttype (str | Unset): absent or JSON
        partitionkey (str | Unset): event_control.partition_key
        subject (str | Unset): event.description
        tocsinaction (PublishBatchJsonBodyItemTocsinaction | Unset): event_control.action
        tocsinareas (str | Unset): event_control.areas as JSON text
        tocsinmetrics (str | Unset): event_control.metrics as JSON text
        tocsinstatus (PublishBatchJsonBodyItemTocsinstatus | Unset): status (default ACTUAL)
    """

    data: PublishBatchJsonBodyItemData
    id: str
    source: str
    specversion: Literal["1.0"]
    type_: str
    datacontenttype: str | Unset = UNSET
    partitionkey: str | Unset = UNSET
    subject: str | Unset = UNSET
    tocsinaction: PublishBatchJsonBodyItemTocsinaction | Unset = UNSET
    tocsinareas: str | Unset = UNSET
    tocsinmetrics: str | Unset = UNSET
    tocsinstatus: PublishBatchJsonBodyItemTocsinstatus | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        id = self.id

        source = self.source

        specversion = self.specversion

        type_ = self.type_

        datacontenttype = self.datacontenttype

        partitionkey = self.partitionkey

        subject = self.subject

        tocsinaction: str | Unset = UNSET
        if not isinstance(self.tocsinaction, Unset):
            tocsinaction = self.tocsinaction.value

        tocsinareas = self.tocsinareas

        tocsinmetrics = self.tocsinmetrics

        tocsinstatus: str | Unset = UNSET
        if not isinstance(self.tocsinstatus, Unset):
            tocsinstatus = self.tocsinstatus.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "id": id,
                "source": source,
                "specversion": specversion,
                "type": type_,
            }
        )
        if datacontenttype is not UNSET:
            field_dict["datacontenttype"] = datacontenttype
        if partitionkey is not UNSET:
            field_dict["partitionkey"] = partitionkey
        if subject is not UNSET:
            field_dict["subject"] = subject
        if tocsinaction is not UNSET:
            field_dict["tocsinaction"] = tocsinaction
        if tocsinareas is not UNSET:
            field_dict["tocsinareas"] = tocsinareas
        if tocsinmetrics is not UNSET:
            field_dict["tocsinmetrics"] = tocsinmetrics
        if tocsinstatus is not UNSET:
            field_dict["tocsinstatus"] = tocsinstatus

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.publish_batch_json_body_item_data import (
            PublishBatchJsonBodyItemData,
        )

        d = dict(src_dict)
        data = PublishBatchJsonBodyItemData.from_dict(d.pop("data"))

        id = d.pop("id")

        source = d.pop("source")

        specversion = cast(Literal["1.0"], d.pop("specversion"))
        if specversion != "1.0":
            raise ValueError(f"specversion must match const '1.0', got '{specversion}'")

        type_ = d.pop("type")

        datacontenttype = d.pop("datacontenttype", UNSET)

        partitionkey = d.pop("partitionkey", UNSET)

        subject = d.pop("subject", UNSET)

        _tocsinaction = d.pop("tocsinaction", UNSET)
        tocsinaction: PublishBatchJsonBodyItemTocsinaction | Unset
        if isinstance(_tocsinaction, Unset):
            tocsinaction = UNSET
        else:
            tocsinaction = PublishBatchJsonBodyItemTocsinaction(_tocsinaction)

        tocsinareas = d.pop("tocsinareas", UNSET)

        tocsinmetrics = d.pop("tocsinmetrics", UNSET)

        _tocsinstatus = d.pop("tocsinstatus", UNSET)
        tocsinstatus: PublishBatchJsonBodyItemTocsinstatus | Unset
        if isinstance(_tocsinstatus, Unset):
            tocsinstatus = UNSET
        else:
            tocsinstatus = PublishBatchJsonBodyItemTocsinstatus(_tocsinstatus)

        publish_batch_json_body_item = cls(
            data=data,
            id=id,
            source=source,
            specversion=specversion,
            type_=type_,
            datacontenttype=datacontenttype,
            partitionkey=partitionkey,
            subject=subject,
            tocsinaction=tocsinaction,
            tocsinareas=tocsinareas,
            tocsinmetrics=tocsinmetrics,
            tocsinstatus=tocsinstatus,
        )

        publish_batch_json_body_item.additional_properties = d
        return publish_batch_json_body_item

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
