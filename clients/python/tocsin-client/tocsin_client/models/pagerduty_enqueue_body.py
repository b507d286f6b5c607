from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.pagerduty_enqueue_body_event_action import PagerdutyEnqueueBodyEventAction
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.pagerduty_enqueue_body_images_item import (
        PagerdutyEnqueueBodyImagesItem,
    )
    from ..models.pagerduty_enqueue_body_links_item import PagerdutyEnqueueBodyLinksItem
    from ..models.pagerduty_enqueue_body_payload import PagerdutyEnqueueBodyPayload


T = TypeVar("T", bound="PagerdutyEnqueueBody")


@_attrs_define
class PagerdutyEnqueueBody:
    """
    Attributes:
        event_action (PagerdutyEnqueueBodyEventAction):
        routing_key (str): an integration key of the topic (tpk_…)
        client (str | Unset):
        client_url (str | Unset):
        dedup_key (str | Unset):
        images (list[PagerdutyEnqueueBodyImagesItem] | Unset):
        links (list[PagerdutyEnqueueBodyLinksItem] | Unset):
        payload (PagerdutyEnqueueBodyPayload | Unset):
    """

    event_action: PagerdutyEnqueueBodyEventAction
    routing_key: str
    client: str | Unset = UNSET
    client_url: str | Unset = UNSET
    dedup_key: str | Unset = UNSET
    images: list[PagerdutyEnqueueBodyImagesItem] | Unset = UNSET
    links: list[PagerdutyEnqueueBodyLinksItem] | Unset = UNSET
    payload: PagerdutyEnqueueBodyPayload | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_action = self.event_action.value

        routing_key = self.routing_key

        client = self.client

        client_url = self.client_url

        dedup_key = self.dedup_key

        images: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.images, Unset):
            images = []
            for images_item_data in self.images:
                images_item = images_item_data.to_dict()
                images.append(images_item)

        links: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.links, Unset):
            links = []
            for links_item_data in self.links:
                links_item = links_item_data.to_dict()
                links.append(links_item)

        payload: dict[str, Any] | Unset = UNSET
        if not isinstance(self.payload, Unset):
            payload = self.payload.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event_action": event_action,
                "routing_key": routing_key,
            }
        )
        if client is not UNSET:
            field_dict["client"] = client
        if client_url is not UNSET:
            field_dict["client_url"] = client_url
        if dedup_key is not UNSET:
            field_dict["dedup_key"] = dedup_key
        if images is not UNSET:
            field_dict["images"] = images
        if links is not UNSET:
            field_dict["links"] = links
        if payload is not UNSET:
            field_dict["payload"] = payload

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.pagerduty_enqueue_body_images_item import (
            PagerdutyEnqueueBodyImagesItem,
        )
        from ..models.pagerduty_enqueue_body_links_item import (
            PagerdutyEnqueueBodyLinksItem,
        )
        from ..models.pagerduty_enqueue_body_payload import PagerdutyEnqueueBodyPayload

        d = dict(src_dict)
        event_action = PagerdutyEnqueueBodyEventAction(d.pop("event_action"))

        routing_key = d.pop("routing_key")

        client = d.pop("client", UNSET)

        client_url = d.pop("client_url", UNSET)

        dedup_key = d.pop("dedup_key", UNSET)

        _images = d.pop("images", UNSET)
        images: list[PagerdutyEnqueueBodyImagesItem] | Unset = UNSET
        if _images is not UNSET:
            images = []
            for images_item_data in _images:
                images_item = PagerdutyEnqueueBodyImagesItem.from_dict(images_item_data)

                images.append(images_item)

        _links = d.pop("links", UNSET)
        links: list[PagerdutyEnqueueBodyLinksItem] | Unset = UNSET
        if _links is not UNSET:
            links = []
            for links_item_data in _links:
                links_item = PagerdutyEnqueueBodyLinksItem.from_dict(links_item_data)

                links.append(links_item)

        _payload = d.pop("payload", UNSET)
        payload: PagerdutyEnqueueBodyPayload | Unset
        if isinstance(_payload, Unset):
            payload = UNSET
        else:
            payload = PagerdutyEnqueueBodyPayload.from_dict(_payload)

        pagerduty_enqueue_body = cls(
            event_action=event_action,
            routing_key=routing_key,
            client=client,
            client_url=client_url,
            dedup_key=dedup_key,
            images=images,
            links=links,
            payload=payload,
        )

        pagerduty_enqueue_body.additional_properties = d
        return pagerduty_enqueue_body

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
