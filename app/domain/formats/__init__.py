"""Events in the formats publishers already send (CloudEvents, Alertmanager's webhook, PagerDuty
Events v2), each mapped onto the native publish request by a pure function (issue 33)."""
