"""The publish path's other formats (CloudEvents, Alertmanager's webhook, PagerDuty Events v2):
each reads its format, maps it onto native publish requests (app/domain/formats/) and checks them
exactly as a native publish, answering a refusal in its own format's terms."""
