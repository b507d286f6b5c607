"""The console (issue 34): server-rendered pages under ``/console`` for people signed in with the
session cookie. Reading works without JavaScript; a little script refreshes the incident list and
runs the WebAuthn ceremonies. Every page is decided by the API's own IAM checks and route functions
(api/deps.py ``authorize``, api/routes/incidents.py, api/routes/topics.py), never by a copy of them.

- i18n.py: the message catalog (English, Japanese) and the language of a request
- render.py: templates, the signed-in person of a request, forms, errors, security headers
- pages.py: incidents, an incident, an event's trace, topics and their control state, the account
- signin_pages.py: sign-in with each method the organization's policy allows
"""
