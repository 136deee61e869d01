// The DOM side of the browser verifier: find the receipt (the path /v/<axiom_id>, ?src=, a dropped
// or pasted file), hand its exact bytes to CroviaVerify (verify-core.js) and show the report.
// Everything taken from a receipt is shown with textContent, never parsed as HTML.
"use strict";

(function () {
  const V = globalThis.CroviaVerify;
  const $ = (id) => document.getElementById(id);
  const AXIOM_PATH = /\/v\/(axm_[0-9a-f]{64})$/;

  function siteTrustRoot() {
    try {
      const root = JSON.parse($("site-trust-root").textContent);
      return root && typeof root.public_key_hex === "string" ? root : null;
    } catch (_) {
      return null;
    }
  }

  function el(tag, text, attrs) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  }

  const show = (v) => (v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));

  function stampText(stamps) {
    if (!stamps) return "";
    const parts = [`OpenTimestamps: ${stamps.opentimestamps}`];
    if (stamps.rfc3161.length) parts.push(`RFC 3161: ${stamps.rfc3161.join(", ")}`);
    const any = stamps.rfc3161.length || !["not_stamped", "pending_next_stamp"].includes(stamps.opentimestamps);
    return parts.join("; ") + (any ? " (not checked in the browser: use crovia verify --tsa-root)" : "");
  }

  function renderVouches(receipt, stamps) {
    const list = $("vouches");
    list.replaceChildren();
    if (!receipt || !receipt.envelope || !receipt.envelope.body) return;
    const body = V.plain(receipt.envelope.body);
    const env = V.plain(receipt.envelope);
    const seal = V.plain(receipt.seal || {});
    const record = body.spider_record || {};
    const rows = [
      ["vendor", body.vendor],
      ["title", body.title],
      ["url", record.url],
      ["observed_at", record.observed_at],
      ["issued_at", env.issued_at],
      ["leaf", `${V.plain(receipt.ledger.leaf_index)} of ${seal.leaf_count}`],
      ["sealed_at", seal.sealed_at],
      ["key_id", seal.key_id],
      ["stamps", stampText(stamps)],
    ];
    for (const [name, value] of rows) {
      list.append(el("dt", name), el("dd", show(value), { "data-field": name }));
    }
  }

  function renderChecks(report) {
    const list = $("checks");
    list.replaceChildren();
    for (const check of report.checks) {
      const item = el("li", null, { "data-check": check.name, "data-ok": String(check.ok) });
      item.append(el("span", check.ok ? "✓" : "✗", { class: "mark" }), el("code", check.name));
      if (check.message) item.append(el("span", ` ${check.message}`));
      if (!check.ok || check.name === "pinned_key") {
        const detail = el("dl", null, { class: "values" });
        detail.append(el("dt", "expected"), el("dd", show(check.expected)));
        detail.append(el("dt", "computed"), el("dd", show(check.computed)));
        item.append(detail);
      }
      list.append(item);
    }
  }

  const VERDICT_TEXT = {
    valid: "Valid: every check passed.",
    invalid: "Invalid: a check failed.",
    unsupported:
      "This browser cannot verify Ed25519 signatures (WebCrypto without Ed25519, or a page not " +
      "served over https or from this computer). Nothing was checked; use `crovia verify`.",
    error: "The receipt could not be read.",
  };

  function renderKey(report, pin) {
    const key = $("key-status");
    key.setAttribute("data-key", report.key);
    if (report.verdict !== "valid") {
      key.textContent = "";
    } else if (report.key === "site") {
      key.textContent = `Signed by this site's key (key id ${pin.key_id}).`;
    } else if (report.key === "other") {
      key.textContent =
        `Signed by ANOTHER key than this site's: key id ${V.plain(report.receipt.seal.key_id)},` +
        ` not ${pin.key_id}. The receipt is consistent, but this site does not vouch for it.`;
    } else {
      key.textContent = "No site key to compare with: the signer was not checked.";
    }
  }

  function render(report, pin) {
    const verdict = $("verdict");
    verdict.setAttribute("data-verdict", report.verdict);
    verdict.textContent = VERDICT_TEXT[report.verdict];
    if (report.failed) verdict.setAttribute("data-failed", report.failed);
    else verdict.removeAttribute("data-failed");
    renderKey(report, pin);
    renderVouches(report.verdict === "valid" ? report.receipt : null, report.stamps);
    renderChecks(report);
  }

  async function verify(bytes, source) {
    const pin = siteTrustRoot();
    $("source").textContent = source;
    try {
      render(await V.verifyReceiptBytes(bytes, pin), pin);
    } catch (err) {
      render({ verdict: "error", checks: [], failed: null, key: "unpinned" }, pin);
      $("source").textContent = `${source}: ${err}`;
    }
  }

  async function load(url, source) {
    const response = await fetch(url, { credentials: "same-origin", redirect: "error" });
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${source}`);
    await verify(new Uint8Array(await response.arrayBuffer()), source);
  }

  function sameOriginSrc(src) {
    // Only a path of this site: never another origin, never a protocol-relative URL.
    if (!src.startsWith("/") || src.startsWith("//") || src.includes("\\")) return null;
    const url = new URL(src, location.origin);
    return url.origin === location.origin ? url : null;
  }

  async function start() {
    const params = new URLSearchParams(location.search);
    const match = AXIOM_PATH.exec(location.pathname);
    try {
      if (location.protocol !== "file:" && params.has("src")) {
        const url = sameOriginSrc(params.get("src"));
        if (!url) throw new Error("?src= must be a path on this site");
        await load(url, url.pathname);
      } else if (location.protocol !== "file:" && match) {
        await load(new URL(`../receipts/${match[1]}.json`, location.href), match[1]);
      }
    } catch (err) {
      render({ verdict: "error", checks: [], failed: null, key: "unpinned" }, null);
      $("source").textContent = String(err.message || err);
    }
  }

  async function fromFile(file) {
    await verify(new Uint8Array(await file.arrayBuffer()), file.name);
  }

  function wire() {
    const zone = $("drop");
    zone.addEventListener("dragover", (e) => e.preventDefault());
    zone.addEventListener("drop", (e) => {
      e.preventDefault();
      const file = e.dataTransfer && e.dataTransfer.files[0];
      if (file) fromFile(file);
    });
    $("file").addEventListener("change", (e) => {
      if (e.target.files[0]) fromFile(e.target.files[0]);
    });
    $("paste-go").addEventListener("click", () => {
      verify(new TextEncoder().encode($("paste").value), "pasted text");
    });
    const pin = siteTrustRoot();
    $("site-key").textContent = pin ? `${pin.key_id} (${pin.public_key_hex})` : "none";
  }

  wire();
  start();
})();
