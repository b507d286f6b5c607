// Tocsin console: refreshes the incident list and runs WebAuthn ceremonies. Pages read without it.
"use strict";
(function () {
  function fromB64(text) {
    const s = text.replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(s + "===".slice((s.length + 3) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0)).buffer;
  }
  function toB64(buffer) {
    let raw = "";
    new Uint8Array(buffer).forEach((b) => { raw += String.fromCharCode(b); });
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  const ids = (list) => (list || []).map((c) => Object.assign({}, c, { id: fromB64(c.id) }));
  function creationOptions(o) {
    return Object.assign({}, o, {
      challenge: fromB64(o.challenge),
      user: Object.assign({}, o.user, { id: fromB64(o.user.id) }),
      excludeCredentials: ids(o.excludeCredentials),
    });
  }
  function requestOptions(o) {
    return Object.assign({}, o, { challenge: fromB64(o.challenge), allowCredentials: ids(o.allowCredentials) });
  }
  function credentialJSON(cred) {
    const r = cred.response;
    const response = { clientDataJSON: toB64(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = toB64(r.attestationObject);
    } else {
      response.authenticatorData = toB64(r.authenticatorData);
      response.signature = toB64(r.signature);
      if (r.userHandle) response.userHandle = toB64(r.userHandle);
    }
    return { id: cred.id, rawId: toB64(cred.rawId), type: cred.type, response: response, clientExtensionResults: {} };
  }
  const csrfMeta = document.querySelector('meta[name="csrf-token"]');
  async function post(path, body) {
    const headers = { "Content-Type": "application/json" };
    if (csrfMeta) headers["X-CSRF-Token"] = csrfMeta.content;
    const r = await fetch(path, { method: "POST", headers: headers, body: JSON.stringify(body), credentials: "same-origin" });
    const answer = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(answer.message || String(r.status));
    return answer;
  }
  const ceremonies = {
    async authenticate(button) {
      const challenge = button.dataset.challenge;
      const options = await post("/v1/signin/webauthn/authentication:options", { challenge: challenge });
      const cred = await navigator.credentials.get({ publicKey: requestOptions(options.public_key) });
      await post("/v1/signin/webauthn/authentication:verify", { challenge: challenge, credential: credentialJSON(cred) });
    },
    async enrol(button) {
      await register(button.dataset.challenge || null, "");
    },
    async register() {
      const name = document.querySelector("[data-webauthn-name]");
      await register(null, name ? name.value : "");
    },
  };
  async function register(challenge, name) {
    const start = challenge ? { challenge: challenge } : {};
    const options = await post("/v1/signin/webauthn/registration:options", start);
    const cred = await navigator.credentials.create({ publicKey: creationOptions(options.public_key) });
    const body = Object.assign({}, start, { ceremony: options.ceremony, name: name, credential: credentialJSON(cred) });
    await post("/v1/signin/webauthn/registration:verify", body);
  }
  if (window.PublicKeyCredential) {
    document.querySelectorAll("[data-webauthn-show]").forEach((el) => { el.hidden = false; });
    document.querySelectorAll("[data-webauthn]").forEach((button) => {
      button.hidden = false;
      button.addEventListener("click", async () => {
        const failed = button.parentElement.querySelector("[data-webauthn-error]");
        if (failed) failed.hidden = true;
        button.disabled = true;
        try {
          await ceremonies[button.dataset.webauthn](button);
          window.location.assign(button.dataset.next || "/console/incidents");
        } catch (err) {
          if (failed) { failed.hidden = false; failed.focus(); }
          button.disabled = false;
        }
      });
    });
  }
  const list = document.querySelector("[data-refresh]");
  const stamp = document.querySelector("[data-refresh-stamp]");
  if (list) {
    const every = Number(list.dataset.interval || 3000);
    let busy = false;
    setInterval(async () => {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const r = await fetch(list.dataset.refresh, { credentials: "same-origin", headers: { Accept: "text/html" } });
        if (r.ok && !r.redirected) {
          list.innerHTML = await r.text();
          if (stamp) stamp.textContent = list.dataset.updated + " " + new Date().toLocaleTimeString();
        }
      } finally {
        busy = false;
      }
    }, every);
  }
})();
