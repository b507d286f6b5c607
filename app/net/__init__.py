"""The one outbound HTTP client and its SSRF policy.

- :mod:`app.net.errors` — :class:`FetchRefused` (retriable: a timeout, a failed connection) and
  :class:`TargetRefused` (final: the target itself is refused), one uniform message for both;
- :mod:`app.net.ssrf` — which addresses may be connected to, and the resolver that checks every
  answer before any connection;
- :mod:`app.net.target` — which URLs may be requested at all (scheme, credentials, host, port);
- :mod:`app.net.transport` — the :class:`Transport` Protocol webhooks and OIDC discovery/JWKS use
  (tests may replace it), and :class:`PostResult`;
- :mod:`app.net.client` — :class:`HttpClient`, the one implementation (aiohttp: the C HTTP/1.1
  parser, per-host connection limits, interim ``1xx`` answers and chunked trailers handled).
"""
