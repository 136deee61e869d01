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

  // What third parties vouch for, from checked stamps only (verify-stamps.js); the unsigned
  // tsa_url is never shown as a source of time.
  function stampRows(stamps) {
    if (!stamps) return [];
    const rows = [];
    const tokens = stamps.rfc3161 || [];
    if (!tokens.length) rows.push(["RFC 3161 timestamp", "rfc3161", "not stamped"]);
    tokens.forEach((token, n) => {
      const label = tokens.length > 1 ? `RFC 3161 timestamp ${n + 1}` : "RFC 3161 timestamp";
      const text = !token.checked
        ? `not checked in this browser (${token.why}); use crovia verify`
        : `${token.gen_time} by the TSA ${token.tsa_subject}` +
          (token.pinned ? " (its certificate chains to a TSA root this site trusts)"
            : " (signature checked; this site names no TSA root, so the TSA is not vouched for)");
      rows.push([label, `rfc3161-${n}`, text]);
    });
    const proof = stamps.opentimestamps || {};
    let text;
    if (!proof.proof) {
      text = proof.status === "pending_next_stamp" ? "pending (no proof yet)" : "not stamped";
    } else if (!proof.checked) {
      text = `not checked in this browser (${proof.why || "the proof could not be read"}); use crovia verify`;
    } else if (!proof.bitcoin.length) {
      text = `pending: submitted to ${proof.calendars.join(", ") || "no calendar"}, not yet in Bitcoin`;
    } else {
      const blocks = proof.bitcoin.map((b) => `Bitcoin block ${b.block_height} (Merkle root ${b.merkle_root})`).join("; ");
      const times = proof.times.map((t) => `${t.source} at ${t.at}`).join("; ");
      text = times ? `confirmed: ${blocks}; block header checked: ${times}`
        : `claims ${blocks}; not checked against a block header: paste the block's header below`;
    }
    rows.push(["OpenTimestamps", "opentimestamps", text]);
    const vouched = tokens.filter((t) => t.checked && t.pinned).map((t) => ({ at: t.gen_time, who: `the TSA ${t.tsa_subject}` }))
      .concat((proof.times || []).map((t) => ({ at: t.at, who: t.source })));
    vouched.sort((x, y) => Date.parse(x.at) - Date.parse(y.at));
    rows.push(["earliest time vouched for by a pinned third party", "earliest-time",
      vouched.length ? `${vouched[0].at} (${vouched[0].who})` : "none"]);
    return rows;
  }

  // What a receipt is of, in words, by its envelope's axiom_type (the one thing that tells them
  // apart): an item seen in a feed (AX.OBS), one fetch of a feed (AX.FETCH, a fetch record) or
  // one capture of an item's page (AX.CAPTURE, a capture record).
  const KINDS = {
    "AX.OBS": "an item seen in a feed",
    "AX.FETCH": "a feed fetch: what one request for the feed found (a fetch record)",
    "AX.CAPTURE": "a page capture: what one request for an item's page found (a capture record)",
    "AX.COVERAGE": "arXiv's coverage of a category and day: what RSS and OAI-PMH saw (a coverage record)",
  };
  const DATA_KINDS = { "AX.FETCH": "fetch", "AX.CAPTURE": "capture", "AX.COVERAGE": "coverage" };

  // What a coverage record states, as crovia verify words it (describe_coverage): the category and
  // day, how far each read went, and each set by its count (its ids listed when the record lists
  // them). Every value is the record's, shown as text.
  function coverageRows(body) {
    const read = (r) => (r && typeof r === "object" ? `${show(r.state)} (${Array.isArray(r.fetches) ? r.fetches.length : 0} fetch record(s))` : "");
    const set = (s) => {
      if (!s || typeof s !== "object") return "";
      const ids = Array.isArray(s.ids) && s.ids.length ? `: ${s.ids.join(" ")}` : "";
      return `${show(s.count)}${ids}`;
    };
    return [
      ["vendor", "vendor", body.vendor],
      ["category", "category", body.category],
      ["announcement day", "day", body.day],
      ["computed at", "computed_at", body.computed_at],
      ["RSS", "rss", read(body.rss)],
      ["OAI-PMH", "oai", read(body.oai)],
      ["announced by the RSS", "announced", show(body.announced && body.announced.count)],
      ["listed by OAI-PMH", "harvested", show(body.harvested && body.harvested.count)],
      ["in both", "both", show(body.both && body.both.count)],
      ["missed by OAI-PMH", "rss_only", set(body.rss_only)],
      ["not announced by the RSS", "oai_only", set(body.oai_only)],
      ["deleted (OAI-PMH)", "deleted", set(body.deleted)],
    ];
  }

  // What a fetch record vouches for, as crovia verify words it (describe_fetch): the feed, the
  // fetch, the HTTP status, the body, the entries read and what the body held besides.
  function fetchRows(env, body) {
    const entries = body.entries && typeof body.entries === "object" ? body.entries : {};
    const fetch = env.object && env.object.fetch && typeof env.object.fetch === "object" ? env.object.fetch : {};
    const rows = [
      ["vendor", "vendor", body.vendor],
      ...relayRows(body),
      ["feed", "feed_url", body.feed_url],
      ["fetched at", "fetched_at", body.fetched_at],
      ["outcome", "outcome", body.outcome],
      ["HTTP status", "status", fetch.status === undefined ? "no response" : `HTTP ${show(fetch.status)}`],
    ];
    if (body.body_sha256 !== undefined) {
      const label = body.outcome === "not_modified" ? "body it confirms" : "body";
      rows.push([label, "body_sha256", body.body_sha256]);
    }
    if (entries.count !== undefined) {
      rows.push(["entries read", "entries_read", `${show(entries.count)} (limit ${show(entries.limit)})`]);
    }
    if (entries.in_body !== undefined) {
      rows.push(["entries in the body", "entries_in_body",
        `${show(entries.in_body)}: ${show(entries.over_limit)} over the limit, ${show(entries.unread)} unreadable`]);
    }
    if (body.error !== undefined) rows.push(["error", "error", body.error]);
    return rows.concat(readingRows(body));
  }

  // What a capture record vouches for, as crovia verify words it (describe_capture): the page and
  // its item, what the capture found, the response (where it came from, what it said it was) and
  // the digests of the body and of its main text. Every value is the record's, shown as text.
  function captureRows(body) {
    const headers = body.headers && typeof body.headers === "object" ? body.headers : {};
    const text = body.text && typeof body.text === "object" ? body.text : null;
    const rows = [
      ["vendor", "vendor", body.vendor],
      ["page", "url", body.url],
      ["item", "item", body.item],
      ["captured at", "captured_at", body.captured_at],
      ["outcome", "outcome", body.outcome],
      ["HTTP status", "status", body.status === undefined ? "no response" : `HTTP ${show(body.status)}`],
    ];
    const optional = [
      ["final address", "final_url", body.final_url],
      ["redirected from", "redirects", Array.isArray(body.redirects) ? body.redirects.join(" → ") : undefined],
      ["content type", "content_type", headers.content_type],
      ["content encoding", "content_encoding", headers.content_encoding],
      ["last modified", "last_modified", headers.last_modified],
      ["ETag", "etag", headers.etag],
      ["server address", "ip_address", body.ip_address],
      ["certificate sha256", "tls_certificate_sha256", body.tls_certificate_sha256],
      ["body", "body_sha256", body.body_sha256 === undefined ? undefined : `${body.body_sha256} (${show(body.body_length)} bytes)`],
      ["main text", "text", text ? `${show(text.sha256)} (${show(text.length)} characters, by ${show(text.extractor)})` : undefined],
      ["error", "error", body.error],
    ];
    return rows.concat(optional.filter(([, , value]) => value !== undefined), browserRows(body));
  }

  // What a browser capture adds (body.mode "browser"), as crovia verify words it
  // (describe_browser): the verdict and why, what the page asked for, what was kept of what the
  // browser showed, the browser, and the plain capture of the same run it is the twin of.
  function browserRows(body) {
    const browser = body.mode === "browser" && body.browser && typeof body.browser === "object" ? body.browser : null;
    if (!browser) return [];
    const reasons = Array.isArray(browser.reasons) ? browser.reasons : [];
    const shot = browser.screenshot && typeof browser.screenshot === "object" ? browser.screenshot : null;
    const dom = browser.dom && typeof browser.dom === "object" ? browser.dom : null;
    const software = browser.software && typeof browser.software === "object" ? browser.software : {};
    const viewport = browser.viewport && typeof browser.viewport === "object" ? browser.viewport : {};
    const rows = [
      ["capture", "mode", "by a browser: the page as it rendered"],
      ["browser verdict", "verdict", browser.verdict],
      ["because", "reasons", reasons.length ? reasons.join("; ") : undefined],
      ["requests", "requests",
        `${show(browser.requests)} (${show(browser.refused)} refused, ${show(browser.failed)} failed), listed in ${show(browser.exchanges_sha256)}`],
      ["screenshot", "screenshot", shot ? `${show(shot.sha256)} (${show(shot.width)}x${show(shot.height)} px)` : undefined],
      ["rendered DOM", "dom", dom ? `${show(dom.sha256)} (${show(dom.length)} bytes)` : undefined],
      ["browser", "browser", `${show(software.browser)} (${show(software.driver)}) at ${show(viewport.width)}x${show(viewport.height)}`],
      ["twin", "twin", browser.twin === undefined ? "none" : browser.twin],
    ];
    return rows.filter(([, , value]) => value !== undefined);
  }

  // How the source was read, when not as a feed: its kind (body.kind), the options it was read
  // with (body.select, shown as its JSON text), and a sitemap walk's further fetches (body.parts).
  function readingRows(body) {
    const rows = [];
    if (typeof body.kind === "string") rows.push(["source kind", "source_kind", body.kind]);
    if (body.select && typeof body.select === "object") {
      rows.push(["read with", "select", JSON.stringify(body.select)]);
    }
    if (Array.isArray(body.parts)) {
      const read = body.parts.filter((p) => p && p.body_sha256 !== undefined && p.error === undefined).length;
      const loops = body.parts.filter((p) => p && p.loop === true).length;
      const missed = body.parts.length - read - loops;
      rows.push(["further fetches", "parts",
        `${body.parts.length}: ${read} read, ${missed} not read, ${loops} already read in this walk`]);
    }
    return rows;
  }

  // Who served the feed when its vendor did not (body.relay), as crovia verify says it: "via R".
  function relayRows(body) {
    return typeof body.relay === "string" ? [["served", "relay", `via ${body.relay}`]] : [];
  }

  function itemRows(env, body) {
    const record = body.spider_record || {};
    return [
      ["vendor", "vendor", body.vendor],
      ...relayRows(body),
      ["title", "title", body.title],
      ["address", "url", record.url],
      ["observed at", "observed_at", record.observed_at],
    ];
  }

  function renderVouches(receipt, stamps) {
    const list = $("vouches");
    list.replaceChildren();
    list.removeAttribute("data-kind");
    if (!receipt || !receipt.envelope || !receipt.envelope.body) return;
    const body = V.plain(receipt.envelope.body);
    const env = V.plain(receipt.envelope);
    const seal = V.plain(receipt.seal || {});
    const kind = DATA_KINDS[env.axiom_type] || "item";
    list.setAttribute("data-kind", kind);
    const rows = [
      ["receipt of", "kind", KINDS[env.axiom_type] || show(env.axiom_type)],
      ...(kind === "fetch" ? fetchRows(env, body) : kind === "capture" ? captureRows(body)
        : kind === "coverage" ? coverageRows(body) : itemRows(env, body)),
      ["signed at", "issued_at", env.issued_at],
      ["leaf", "leaf", `${V.plain(receipt.ledger.leaf_index)} of ${seal.leaf_count}`],
      ["sealed at", "sealed_at", seal.sealed_at],
      ["key id", "key_id", seal.key_id],
      ...stampRows(stamps),
    ];
    for (const [label, name, value] of rows) {
      list.append(el("dt", label), el("dd", show(value), { "data-field": name }));
    }
  }

  // Plain words for check names ("not_stamped" reads "not stamped"); data-check keeps the name
  // crovia verify prints.
  const plainWords = (name) => String(name).replace(/_/g, " ");
  const CHECK_LABELS = {
    canonical_bytes: "canonical bytes",
    receipt_shape: "receipt shape",
    axiom_id: "axiom id",
    verifier_url: "verifier address",
    envelope_signature: "envelope signature",
    envelope_shape: "envelope shape",
    leaf_hash: "leaf hash",
    merkle_path: "Merkle path",
    merkle_root: "Merkle root",
    seal_signature: "seal signature",
    key_id: "key id",
    trust_root: "trust root",
    rfc3161: "RFC 3161 timestamp",
    opentimestamps: "OpenTimestamps proof",
    bitcoin_anchor: "Bitcoin anchor",
    key_rotation: "key rotation",
    pinned_key: "key vouched for by this site",
  };

  function renderChecks(report) {
    const list = $("checks");
    list.replaceChildren();
    for (const check of report.checks) {
      const item = el("li", null, { "data-check": check.name, "data-ok": String(check.ok) });
      item.append(el("span", check.ok ? "✓" : "✗", { class: "mark" }), el("span", ` ${CHECK_LABELS[check.name] || plainWords(check.name)}`, { class: "name" }));
      if (check.message) item.append(el("span", `: ${check.message}`));
      if (!check.ok) {
        const detail = el("dl", null, { class: "values" });
        detail.append(el("dt", "expected"), el("dd", show(check.expected)));
        detail.append(el("dt", "computed"), el("dd", show(check.computed)));
        item.append(detail);
      }
      list.append(item);
    }
  }


  function verdictText(report, pin) {
    const short = (key) => (key ? `${key.slice(0, 16)}…` : "");
    switch (report.verdict) {
      case "valid":
        if (report.key === "previous" && report.previous) {
          const p = report.previous;
          return `Valid: every check passed. Signed by this site's previous key ${p.old_key_id}, ` +
            `handed over to ${p.new_key_id} at ${p.rotated_at}.`;
        }
        if (report.key === "rotation") return "Valid: every check passed. Signed by a key this site's key handed over to.";
        return "Valid: every check passed. Signed by this site's key.";
      case "unpinned":
        return pin
          ? "Not vouched for by this site: every cryptographic check passed, but the receipt is signed by another key " +
            `(key id ${V.plain(report.receipt.seal.key_id)}), not this site's (${pin.key_id}).`
          : "Not vouched for by this site: every cryptographic check passed, but this page names no site key to compare with.";
      case "invalid": {
        const failed = report.checks.find((c) => !c.ok);
        const values = failed && (failed.expected !== null || failed.computed !== null)
          ? ` Expected ${show(failed.expected)}, computed ${show(failed.computed)}.` : "";
        return `Invalid: the check "${plainWords(report.failed)}" failed: ${failed ? failed.message : ""}.${values}`;
      }
      case "unsupported":
        return "This browser cannot verify Ed25519 signatures (WebCrypto without Ed25519, or a page not " +
          "served over https or from this computer). Nothing was checked; use `crovia verify`.";
      default:
        return "The receipt could not be read.";
    }
  }

  function renderKey(report, pin) {
    const key = $("key-status");
    key.setAttribute("data-key", report.key);
    if (report.verdict === "valid" && report.key === "site") {
      key.textContent = `Signed by this site's key (key id ${pin.key_id}).`;
    } else if (report.verdict === "valid") {
      key.textContent = "Signed by an earlier key of this site, which handed over to its key now in a signed rotation record.";
    } else if (report.verdict === "unpinned" && pin) {
      key.textContent =
        `Signed by ANOTHER key than this site's: key id ${V.plain(report.receipt.seal.key_id)},` +
        ` not ${pin.key_id}. The receipt is consistent, but it is not vouched for by this site.`;
    } else if (report.verdict === "unpinned") {
      key.textContent = "No site key to compare with: the signer is not vouched for by this site.";
    } else {
      key.textContent = "";
    }
  }

  let current = null; // the bytes and source last verified, for a pasted block header

  function render(report, pin) {
    const verdict = $("verdict");
    verdict.setAttribute("data-verdict", report.verdict);
    verdict.textContent = verdictText(report, pin);
    if (report.failed) verdict.setAttribute("data-failed", report.failed);
    else verdict.removeAttribute("data-failed");
    renderKey(report, pin);
    const shown = report.verdict === "valid" || report.verdict === "unpinned";
    renderVouches(shown ? report.receipt : null, report.stamps);
    renderChecks(report);
    renderScreenshot(shown ? report.receipt : null);
  }

  // The screenshot of a browser capture the page verified (docs/verifier.md): fetched from the
  // published directory (../screenshots/<sha256>.png, beside the receipts), hashed here, and
  // shown only when its bytes are those the record signs, from a blob of those very bytes;
  // otherwise one line says why not. A newer verification replaces an older one's answer.
  let screenshotRun = 0;
  async function renderScreenshot(receipt) {
    const run = ++screenshotRun;
    const holder = $("screenshot");
    holder.replaceChildren();
    holder.removeAttribute("data-screenshot");
    const body = receipt && receipt.envelope ? V.plain(receipt.envelope.body) : null;
    const browser = body && body.mode === "browser" && body.browser && typeof body.browser === "object" ? body.browser : null;
    const shot = browser && browser.screenshot && typeof browser.screenshot === "object" ? browser.screenshot : null;
    if (!shot || typeof shot.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(shot.sha256)) return;
    let state = "missing";
    let note = "not shown: a page opened from disk fetches nothing";
    try {
      if (location.protocol !== "file:") {
        const url = new URL(`../screenshots/${shot.sha256}.png`, location.href);
        const response = await fetch(url, { credentials: "same-origin", redirect: "error" });
        if (!response.ok) throw new Error(`HTTP ${response.status} for ${url.pathname}`);
        const bytes = new Uint8Array(await response.arrayBuffer());
        const computed = V.toHex(await V.sha256(bytes));
        if (run !== screenshotRun) return;
        if (computed === shot.sha256) {
          const image = document.createElement("img");
          image.alt = `the page as the browser rendered it (${shot.width}x${shot.height} px)`;
          image.src = URL.createObjectURL(new Blob([bytes], { type: "image/png" }));
          holder.setAttribute("data-screenshot", "shown");
          holder.append(el("p", "Screenshot (its bytes are the signed ones):"), image);
          return;
        }
        state = "mismatch";
        note = `not shown: its bytes hash to ${computed}, not to the signed ${shot.sha256}`;
      }
    } catch (err) {
      note = `not shown: ${err.message || err}`;
    }
    if (run !== screenshotRun) return;
    holder.setAttribute("data-screenshot", state);
    holder.append(el("p", `Screenshot ${note}`));
  }

  async function verify(bytes, source, headers) {
    const pin = siteTrustRoot();
    current = { bytes, source };
    $("source").textContent = source;
    try {
      render(await V.verifyReceiptBytes(bytes, pin, { headers: headers || [] }), pin);
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
    $("header-go").addEventListener("click", () => {
      if (!current) return;
      let header;
      try {
        header = globalThis.CroviaStamps.parseHeader($("bitcoin-header").value);
      } catch (err) {
        $("header-error").textContent = String(err.message || err);
        return;
      }
      $("header-error").textContent = "";
      verify(current.bytes, `${current.source} with a pasted block header`, [header]);
    });
    const pin = siteTrustRoot();
    $("site-key").textContent = pin ? `${pin.key_id} (${pin.public_key_hex})` : "none";
  }

  wire();
  start();
})();
