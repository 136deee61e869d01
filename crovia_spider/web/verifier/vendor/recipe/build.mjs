// Rebuilds ../pkijs.bundle.js from the pinned packages of package-lock.json:
//   cd crovia_spider/web/verifier/vendor/recipe && npm ci --ignore-scripts && node build.mjs
// (esbuild's binary comes from its @esbuild/<platform> package; no install script is needed).
import { build } from "esbuild";

await build({
  entryPoints: ["entry.js"],
  bundle: true,
  format: "iife",
  target: "es2020",
  legalComments: "inline",
  outfile: "../pkijs.bundle.js",
  banner: {
    js:
      "// Vendored for the crovia verifier page: pkijs 4.0.0, asn1js 4.0.0, bytestreamjs 3.0.0,\n" +
      "// @peculiar/utils 4.1.0, @noble/hashes 2.4.0 from the npm registry, bundled by esbuild\n" +
      "// 0.28.2 (vendor/recipe/). Licences: vendor/LICENSES/. Do not edit: rebuild instead.",
  },
});
