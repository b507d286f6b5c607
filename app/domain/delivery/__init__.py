"""Delivery of actions: push payloads (APNs, FCM), Standard Webhooks, the verdict of an attempt and
the items between attempts."""
