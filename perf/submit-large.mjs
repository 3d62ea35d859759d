// The browser half of perf/submit-large.sh: `node perf/submit-large.mjs BASE_URL BUNDLE`.
import { chromium } from "../end2end/node_modules/playwright-core/index.mjs";
import { execSync } from "node:child_process";
import { statSync } from "node:fs";

const [base, bundle] = process.argv.slice(2);
const size = statSync(bundle).size;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
// Chromium's resident memory, every process of it, in MB.
const rss = () => {
  const kb = execSync("ps -C chromium -o rss= || true").toString().split("\n").map(Number).filter(Boolean);
  return kb.reduce((a, b) => a + b, 0) / 1024;
};
// Each process's type and resident MB, for where memory went.
const byProcess = () =>
  execSync("ps -C chromium -o rss=,args= || true").toString().split("\n").filter(Boolean).map((l) => {
    const [kb, ...args] = l.trim().split(/\s+/);
    const type = (args.find((a) => a.startsWith("--type=")) ?? "--type=browser").slice(7);
    return `${type} ${(Number(kb) / 1024).toFixed(0)}`;
  }).join(", ");
let peakDetail = "";
const page = await browser.newPage();
await page.goto(`${base}/submit`);
await page.locator("form.upload[data-ready]").waitFor({ state: "attached" });
// The page's frames while it works: a frozen page has long gaps between them.
await page.evaluate(() => {
  const w = window;
  w.__frames = { last: performance.now(), longest: 0, count: 0 };
  const tick = (t) => {
    w.__frames.longest = Math.max(w.__frames.longest, t - w.__frames.last);
    w.__frames.last = t;
    w.__frames.count += 1;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
});
const before = rss();
console.log(`  before, MB per process: ${byProcess()}`);
let peak = before;
const sampler = setInterval(() => {
  const now = rss();
  if (now > peak) { peak = now; peakDetail = byProcess(); }
}, 200);
let t = performance.now();
await page.setInputFiles("#bundle", bundle);
await page.locator(".verdict.checked, .verdict.refused").waitFor({ timeout: 600_000 });
const checkSeconds = (performance.now() - t) / 1000;
const verdict = await page.locator(".submit-state").innerText();
const frames = await page.evaluate(() => window.__frames);
clearInterval(sampler);

const progress = [];
page.on("console", () => {});
await page.evaluate(() => {
  const w = window;
  w.__seen = [];
  const state = document.querySelector(".submit-state");
  new MutationObserver(() => w.__seen.push(state.textContent)).observe(state, { subtree: true, childList: true, characterData: true });
});
t = performance.now();
await page.getByRole("button", { name: "Verify and submit" }).click();
await page.locator(".verdict.accepted, .verdict.refused").waitFor({ timeout: 600_000 });
const uploadSeconds = (performance.now() - t) / 1000;
const seen = await page.evaluate(() => window.__seen);
for (const s of seen) if (s.includes("Sending:")) progress.push(s);

console.log(`bundle: ${(size / 1e6).toFixed(1)} MB`);
console.log(`check in the browser: ${checkSeconds.toFixed(1)} s (${(size / 1e6 / checkSeconds).toFixed(0)} MB/s): ${verdict.replace(/\s+/g, " ")}`);
console.log(`page while checking: ${frames.count} frames, longest gap ${frames.longest.toFixed(0)} ms`);
console.log(`Chromium memory: ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB at most while checking (+${(peak - before).toFixed(0)} MB for a ${(size / 1e6).toFixed(0)} MB file)`);
console.log(`  at the peak, MB per process: ${peakDetail}`);
console.log(`upload and server verdict: ${uploadSeconds.toFixed(1)} s, ${progress.length} progress updates shown: ${(await page.locator(".submit-state").innerText()).replace(/\s+/g, " ")}`);
await browser.close();
