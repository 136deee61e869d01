// Runs the verifier page's own scripts (the vendored PKI.js bundle, verify-core.js,
// verify-stamps.js) under Node, as the page loads them, over cases read from stdin:
// a JSON list of {data: base64 receipt bytes, pin: trust root or null, headers: [160 hex]}.
// Prints a JSON list of [verdict, failed check or null, message], one per case.
"use strict";

const fs = require("fs");
const path = require("path");
const vm = require("vm");

const PAGE = path.join(__dirname, "..", "..", "crovia_spider", "web", "verifier");
for (const name of ["vendor/pkijs.bundle.js", "verify-core.js", "verify-stamps.js"]) {
  vm.runInThisContext(fs.readFileSync(path.join(PAGE, name), "utf-8"), { filename: name });
}

async function main() {
  const cases = JSON.parse(fs.readFileSync(0, "utf-8"));
  const out = [];
  for (const item of cases) {
    const bytes = Uint8Array.from(Buffer.from(item.data, "base64"));
    const headers = (item.headers || []).map((h) => CroviaStamps.parseHeader(h));
    const report = await CroviaVerify.verifyReceiptBytes(bytes, item.pin || null, { headers });
    const failed = report.checks.find((c) => !c.ok);
    out.push([report.verdict, report.failed, failed ? failed.message : null]);
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err));
  process.exit(1);
});
