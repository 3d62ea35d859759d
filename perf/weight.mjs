// What a reader's browser downloads of JavaScript and WebAssembly for a page, as sent
// (brotli, the way Chromium asks for it): `node perf/weight.mjs [BASE_URL]`, with the
// server running (scripts/demo). The budgets are in BENCHMARKS.md.
import { chromium } from "../end2end/node_modules/playwright-core/index.mjs";

const base = process.argv[2] ?? "http://127.0.0.1:3000";
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
for (const [path, act] of [
  ["/", null],
  // The verifier loads when a bundle is chosen: choose one.
  ["/submit", async (page) => {
    await page.locator("form.upload[data-ready]").waitFor({ state: "attached" });
    await page.setInputFiles("#bundle", { name: "x.tar.gz", mimeType: "application/gzip", buffer: Buffer.from("not a bundle") });
    await page.locator(".submit-state .verdict").waitFor();
  }],
]) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const sizes = [];
  page.on("response", async (r) => {
    const type = r.request().resourceType();
    const url = new URL(r.url());
    if (!url.pathname.startsWith("/pkg/") && type !== "script") return;
    const sent = Number(r.headers()["content-length"] ?? (await r.body()).length);
    sizes.push({ file: url.pathname.split("/").pop(), sent, encoding: r.headers()["content-encoding"] ?? "identity" });
  });
  await page.goto(base + path, { waitUntil: "networkidle" });
  if (act) await act(page);
  await page.waitForLoadState("networkidle");
  const total = sizes.reduce((a, s) => a + s.sent, 0);
  console.log(`${path}: ${(total / 1000).toFixed(1)} KB of JavaScript and WebAssembly`);
  for (const s of sizes) console.log(`  ${s.file.padEnd(28)} ${(s.sent / 1000).toFixed(1).padStart(7)} KB  ${s.encoding}`);
  await context.close();
}
await browser.close();
