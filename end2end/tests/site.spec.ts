import { expect, test, type Page } from "@playwright/test";
import * as crypto from "node:crypto";
import * as path from "node:path";
import { submitRelabelled } from "./relabelled";
import { uncovered } from "./routes";

// Every column the leaderboard can show, as its column choice asks for them.
const ALL_COLUMNS = "col=final&col=delta&col=every&col=exec&col=recall&col=cost";

// Every page, with the text it must show and its size limit (the leaderboard's is
// tighter: it is the page everyone loads). The demo's leaderboard holds 16 agents (the
// paper's 14 and the two sides of Harbor's parity experiment), each row about 1.6 KB
// with the default columns: 56 KB, held under 60 KB; with every column, 71 KB.
const PAGES: { name: string; path: string; shows: string[]; limit: number }[] = [
  { name: "leaderboard", path: "/", shows: ["RExBench leaderboard", "OpenHands + Claude 4.5 Opus"], limit: 60_000 },
  {
    name: "leaderboard, every column",
    path: `/?${ALL_COLUMNS}`,
    shows: ["solved every time, execution success, file recall, cost per run per agent", "OpenHands + Claude 4.5 Opus"],
    limit: 75_000,
  },
  { name: "tasks", path: "/tasks", shows: ["Tasks", "COGS", "Othello"], limit: 200_000 },
  { name: "task", path: "/tasks/othello", shows: ["Othello", "Expected results", "Results by agent"], limit: 200_000 },
  {
    name: "agent",
    path: "/agents/openhands-claude-4.5-opus",
    shows: ["OpenHands + Claude 4.5 Opus", "Success by task", "Submissions"],
    limit: 200_000,
  },
  { name: "failures", path: "/failures", shows: ["Failures", "Failed runs by agent", "Tasks solved only with hints"], limit: 200_000 },
  {
    name: "compare",
    path: "/compare?a=openhands-claude-4.5-opus&b=aider-claude-4.5-opus",
    shows: ["OpenHands + Claude 4.5 Opus vs aider + Claude 4.5 Opus", "B − A"],
    limit: 200_000,
  },
  {
    name: "parity",
    path: "/parity?a=openhands-1.4.0-claude-sonnet-4.5-rexbench&b=openhands-1.4.0-claude-sonnet-4.5-harbor",
    shows: ["RExBench original harness", "Harbor", "12/36", "15/36", "The ranges overlap", "41.67 ± 12.73"],
    limit: 200_000,
  },
  { name: "changes", path: "/changes", shows: ["Changes", "accepted"], limit: 200_000 },
  { name: "submit", path: "/submit", shows: ["Submit results", "rexbench pack", "Verify and submit"], limit: 200_000 },
  { name: "about", path: "/about", shows: ["How the numbers are made", "cluster bootstrap", "Checking the numbers yourself", "rexbench audit"], limit: 200_000 },
  { name: "keys", path: "/keys", shows: ["Signing keys", "RExBench maintainers (demo key)", "BEGIN PUBLIC KEY"], limit: 200_000 },
  { name: "sign-in", path: "/signin", shows: ["Sign in", "Why sign in", "Maintainers"], limit: 200_000 },
  { name: "key request", path: "/keys/request?id=1", shows: ["Register a key", "rexbench register", "Request 1: Newcomer lab (demo request)", "Pending"], limit: 200_000 },
];

/** What the browser refuses under the page's Content-Security-Policy, as it reports it. */
function cspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (m) => {
    if (m.text().includes("Content Security Policy")) seen.push(m.text());
  });
  return seen;
}

/**
 * The scripts of a page: at most Leptos's islands loader, inline, allowed by its SHA-256
 * in the policy (which allows no other inline script): nothing a bundle put on a page
 * ever becomes a script.
 */
function checkScripts(scripts: { src: string | null; text: string }[], csp: string) {
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).not.toContain("'nonce-");
  expect(scripts.length, scripts.map((s) => s.text.slice(0, 80)).join("\n")).toBeLessThanOrEqual(1);
  for (const s of scripts) {
    expect(s.src).toBeNull();
    expect(s.text).toContain("hydrateIslands");
    const hash = crypto.createHash("sha256").update(s.text).digest("base64");
    expect(csp).toContain(`'sha256-${hash}'`);
  }
}

function scriptsOf(html: string): { src: string | null; text: string }[] {
  return [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => ({
    src: /\bsrc=/.test(m[1]) ? m[1] : null,
    text: m[2],
  }));
}

async function pageScripts(page: Page) {
  return page.locator("script").evaluateAll((els) =>
    els.map((e) => ({ src: e.getAttribute("src"), text: e.textContent ?? "" })),
  );
}

/** Opens the leaderboard's other task sets, folded beside the one shown (a no-op when open). */
async function openSets(page: Page) {
  const box = page.locator("details.set-box");
  if ((await box.getAttribute("open")) === null) await box.locator("xpath=./summary").click();
  await expect(box.locator("nav.sets")).toBeVisible();
}

/** Opens the leaderboard's filters, folded under "Filters" (a no-op when open). */
async function openFilters(page: Page) {
  const box = page.locator("details.filter-box");
  if ((await box.getAttribute("open")) === null) await box.locator("xpath=./summary").click();
  await expect(box.locator("form.filters")).toBeVisible();
}

/**
 * A full-page picture of the page under test-results/, for a reader of the run (nothing
 * compares it). CI's run (.ci/run) sets E2E_SHOTS=off: its clone, test-results/ with it,
 * goes when the run ends, and a tall page's picture is slow to take (the about page,
 * 11,000 pixels high, took 15 s of its test's 15.2 on CI, and over 30 s on a busy machine).
 */
async function shot(page: Page, name: string) {
  if (process.env.E2E_SHOTS === "off") return;
  await page.screenshot({ path: test.info().outputPath(`${name}.png`), fullPage: true });
}

/** The leaderboard row of an agent, as its cells' texts. */
async function rowOf(page: Page, agent: string): Promise<string[]> {
  const row = page.locator("table.board tbody tr", { has: page.getByRole("link", { name: agent, exact: true }) });
  // A cell's first line is its number; an interval may follow.
  return (await row.locator("td").allInnerTexts()).map((t) => t.split("\n")[0].trim());
}

// The router's pages whose address no link gives before a reader's steps (a run's id, a
// one-time link's ticket): each is loaded where those steps reach it.
const REACHED_ELSEWHERE: Record<string, string> = {
  "/runs/{id}": "leaderboard → agent → task → run",
  "/login/{ticket}": "a11y.spec.ts: signed in, a private run's page shows its outputs",
  "/desk": "desk.spec.ts: a maintainer signed in approves, declines, reviews and retires",
};

test("every page the router routes loads here or where a reader's steps reach it", () => {
  expect(uncovered(PAGES.map((p) => p.path), REACHED_ELSEWHERE)).toEqual([]);
});

for (const p of PAGES) {
  test(`${p.name} page loads with its content`, async ({ page }) => {
    const violations = cspViolations(page);
    const response = await page.goto(p.path);
    expect(response?.status()).toBe(200);
    const csp = response!.headers()["content-security-policy"];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await response!.text();
    expect(html.length, `${p.path} is ${html.length} bytes`).toBeLessThan(p.limit);
    checkScripts(scriptsOf(html), csp);
    for (const text of p.shows) {
      await expect(page.getByText(text, { exact: false }).first()).toBeVisible();
    }
    await expect(page).toHaveTitle(/RExBench leaderboard/);
    await shot(page, p.name);
    // The page works within its policy: its stylesheet, icon and charts all load.
    expect(violations, violations.join("\n")).toEqual([]);
  });
}

test("the leaderboard shows the paper's Table 5 final success", async ({ page }) => {
  await page.goto("/");
  // # · final success (none, hints, detailed, Δ) · execution success · file recall
  const cells = await rowOf(page, "OpenHands + Claude 4.5 Opus");
  expect(cells.slice(1, 4)).toEqual(["42%", "62%", "50%"]);
  expect(cells[4]).toBe("+20");
  // Rank as a range, its tie group, and an interval under each rate.
  expect(cells[0]).toMatch(/^\d+(–\d+)?$/);
  const row = page.locator("table.board tbody tr").first();
  await expect(row.locator(".group")).toHaveText(/group 1/);
  await expect(row.locator(".ci").first()).toHaveText(/^\d+–\d+$/);
  await expect(page.getByText("Small figures are 95% intervals")).toBeVisible();
  await expect(page.locator("table.board tbody tr").first()).toContainText("OpenHands + Claude 4.5 Opus");
  await expect(page.locator("svg.chart title").first()).toHaveText(/Final success per agent/);
});

test("a run page, an unknown agent and an unknown path", async ({ page }) => {
  const missing = await page.goto("/agents/no-such-agent");
  expect(missing?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  expect((await page.goto("/no/such/page"))?.status()).toBe(404);
  await shot(page, "not-found");
});

test("leaderboard → agent → task → run: a private run shows what it did, a public one its patch and log", async ({ page }) => {
  await page.goto("/");
  await openSets(page);
  await page.getByRole("link", { name: /^Example tasks( \(8d55a30f\))? · \d+ agents$/ }).click();
  await expect(page).toHaveURL(/set=/);
  await page.getByRole("link", { name: "ExampleFramework + Example Model", exact: true }).click();
  await expect(page).toHaveURL(/\/agents\/example-agent$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("ExampleFramework + Example Model");
  await page.getByRole("link", { name: "CSV statistics (example)", exact: true }).click();
  await expect(page).toHaveURL(/\/tasks\/csvstats$/);
  // The detailed-hints attempt of the example agent failed to execute. The example's
  // outputs are private, as RExBench's are: its files, sizes and digests are shown.
  await page.getByRole("link", { name: "attempt 1: execution failed" }).first().click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  await expect(page.getByText("execution failed").first()).toBeVisible();
  await expect(page.getByRole("heading", { name: "The outputs of this run are private" })).toBeVisible();
  await expect(page.locator("table.files-touched tbody tr").first()).toBeVisible();
  await expect(page.locator("table.artifacts code.digest").first()).toHaveText(/^[0-9a-f]{64}$/);
  await expect(page.locator("pre.diff")).toHaveCount(0);
  await expect(page.locator("pre.log")).toHaveCount(0);
  await expect(page.locator("a[href^='/artifacts/']")).toHaveCount(0);
  await shot(page, "run-private");

  // A run of the public example: its patch and logs.
  await page.goto("/agents/example-agent?task=wordfreq&hint=none");
  await page.locator("a[href^='/runs/']").first().click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  await expect(page.getByRole("heading", { name: "Patch" })).toBeVisible();
  await expect(page.locator("pre.diff .line.add").first()).toBeVisible();
  await expect(page.locator("pre.diff .line.del").first()).toBeVisible();
  await expect(page.locator("pre.log").filter({ hasText: "ACCURACY: 1.0" })).toHaveCount(1);
  await shot(page, "run");
  // The whole log is plain text, never HTML.
  const href = await page.getByRole("link", { name: "whole file (plain text)" }).first().getAttribute("href");
  const artifact = await page.request.get(href!);
  expect(artifact.headers()["content-type"]).toBe("text/plain; charset=utf-8");
  expect(artifact.headers()["x-content-type-options"]).toBe("nosniff");
});

test("a flagged success: counted on the leaderboard, a failure in the strict view, its evidence on the run page", async ({ page }) => {
  await page.goto("/");
  await openSets(page);
  await page.getByRole("link", { name: /^Example tasks( \(8d55a30f\))? · \d+ agents$/ }).click();
  const agent = "ShortcutFramework + Example Model";
  const row = page.locator("table.board tbody tr", { has: page.getByRole("link", { name: agent, exact: true }) });
  await expect(row.getByRole("link", { name: "⚑ 1 flagged" })).toBeVisible();
  // Final success with no hints: both runs succeeded as reported.
  expect((await rowOf(page, agent))[1]).toBe("100%");

  await openFilters(page);
  await page.getByLabel("Flagged successes", { exact: true }).selectOption("strict");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/integrity=strict/);
  await expect(page.locator("#board-notes")).toContainText("Strict: every success with an integrity finding");
  await expect.poll(async () => (await rowOf(page, agent))[1]).toBe("50%");
  await expect(page.getByLabel("Flagged successes", { exact: true })).toHaveValue("strict");

  await row.getByRole("link", { name: "⚑ 1 flagged" }).click();
  await expect(page).toHaveURL(/\/agents\/shortcut-agent#flagged$/);
  await expect(page.getByRole("heading", { name: "Flagged successes" })).toBeVisible();
  await page.locator("table.flagged-runs").getByRole("link", { name: /^#\d+$/ }).click();
  await expect(page).toHaveURL(/\/runs\/\d+#findings$/);
  const findings = page.locator("table.findings");
  await expect(page.getByText("This success is flagged")).toBeVisible();
  // The runner's finding, signed, and the server's own, found again from the patch;
  // and, where the sample chose this run, its stored answer's re-run on a held-out
  // variant, which did not generalise.
  await expect(findings.locator("tbody tr").filter({ hasNotText: "not-generalised" })).toHaveCount(2);
  await expect(findings).toContainText("result-line-literal");
  await expect(findings).toContainText("the submitter, signed in the bundle");
  await expect(findings).toContainText("this server");
  await findings.getByRole("link", { name: "Patch, line 7" }).first().click();
  await expect(page).toHaveURL(/#L-patch-7$/);
  await expect(page.locator("#L-patch-7")).toContainText('print("ACCURACY: 1.0")');
  await shot(page, "flagged-run");
});

test("sorting and filtering change the rows and the URL", async ({ page }) => {
  await page.goto("/");
  // With JavaScript the live board puts the new order in the URL, then its rows: the
  // first row is awaited (toHaveText retries), not read once the URL has changed.
  const first = page.locator("table.board tbody tr th.agent > a").first();
  await expect(first).toHaveText("OpenHands + Claude 4.5 Opus");

  await page.locator("thead").getByRole("link", { name: "Agent" }).click();
  await expect(page).toHaveURL(/sort=agent&dir=asc/);
  await expect(first).toHaveText("aider + Claude 3.7 Sonnet");
  await page.locator("thead").getByRole("link", { name: "Agent ▲" }).click();
  await expect(page).toHaveURL(/sort=agent&dir=desc/);
  await expect(first).toHaveText("OpenHands 1.4.0 + Claude Sonnet 4.5 (RExBench original harness)");

  await openFilters(page);
  await page.getByLabel("Framework", { exact: true }).selectOption("aider");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/framework=aider/);
  await expect(page).toHaveURL(/sort=agent/);
  const names = await page.locator("table.board tbody tr th.agent > a").allInnerTexts();
  expect(names.length).toBe(7);
  for (const n of names) expect(n).toMatch(/^aider \+ /);
  await expect(page.getByText("7 of 16 agents")).toBeVisible();
  await shot(page, "leaderboard-filtered");

  await openFilters(page);
  await page.getByRole("link", { name: "Clear" }).click();
  await expect(page.getByText("16 of 16 agents")).toBeVisible();
});

test("markup in a bundle is shown as text and no script runs", async ({ page }, info) => {
  let dialogs = 0;
  page.on("dialog", (d) => {
    dialogs += 1;
    void d.dismiss();
  });
  await page.goto("/submit");
  const js = info.project.name === "js";
  if (js) await expect(page.locator("form.upload[data-ready]")).toBeAttached();
  await page.setInputFiles("#bundle", path.join(__dirname, "..", ".work", "hostile.rexb.tar.gz"));
  // With JavaScript the bundle is checked in the browser first, and the answer comes in
  // place, with a link to the agent.
  if (js) await expect(page.locator(".verdict.checked")).toBeVisible();
  await page.getByRole("button", { name: "Verify and submit" }).click();
  if (js) await page.getByRole("link", { name: "See <script>window.__xss=6</script> Hostile agent" }).click();
  await expect(page).toHaveURL(/\/agents\/e2e-hostile\?submitted=/);
  await expect(page.getByRole("status")).toContainText("was verified and stored");
  const h1 = page.getByRole("heading", { level: 1 });
  await expect(h1).toHaveText("<script>window.__xss=6</script> Hostile agent");
  // The framework, as text, in the line under the name and in the facts.
  await expect(page.locator("p.lede")).toContainText("<img src=x onerror=window.__xss=1> · M<script>window.__xss=2</script>");
  await expect(page.getByText("<img src=x onerror=window.__xss=1>", { exact: true })).toBeVisible();
  await expect(page.getByText("<img src=x onerror=window.__xss=3>").first()).toBeVisible();
  await expect(page).toHaveTitle("<script>window.__xss=6</script> Hostile agent · RExBench leaderboard");
  await shot(page, "hostile-agent");

  await page.getByRole("link", { name: /^#\d+$/ }).first().click();
  await expect(page.locator("pre.diff")).toContainText("+<script>window.__xss=4</script>");
  await expect(page.locator("pre.log")).toContainText("<img src=x onerror=window.__xss=5>");
  if (info.project.name === "js") {
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  }
  expect(dialogs).toBe(0);
  checkScripts(await pageScripts(page), (await page.request.get(page.url())).headers()["content-security-policy"]);
  expect(await page.locator("img").count()).toBe(0);

  // The patch itself, opened in the browser: plain text, its script tag never parsed.
  const href = await page.getByRole("link", { name: "whole file (plain text)" }).first().getAttribute("href");
  await page.goto(href!);
  expect(await page.evaluate(() => document.contentType)).toBe("text/plain");
  expect(await page.locator("img, script").count()).toBe(0);
  await expect(page.locator("body")).toContainText("+<script>window.__xss=4</script>");
  if (info.project.name === "js") {
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  }
  expect(dialogs).toBe(0);
});

test("no other site can frame a page", async ({ page, baseURL }) => {
  const refused = page.waitForEvent("console", (m) => m.text().includes("frame-ancestors 'none'"));
  await page.setContent(`<iframe src="${baseURL}/" width="800" height="600"></iframe>`);
  // Chromium says why it showed its own error page in place of the leaderboard.
  expect((await refused).text()).toContain("The request has been blocked");
  const frame = page.frames().find((f) => f !== page.mainFrame())!;
  expect(await frame.locator("text=RExBench leaderboard").count()).toBe(0);
});

test("a refused upload says why, in words", async ({ page }) => {
  await page.goto("/submit");
  await page.setInputFiles("#bundle", { name: "bad.tar.gz", mimeType: "application/gzip", buffer: Buffer.from("not a bundle") });
  await page.getByRole("button", { name: "Verify and submit" }).click();
  await expect(page.getByRole("alert")).toContainText("The bundle was not accepted");
  await expect(page.getByRole("alert")).toContainText("not_gzip");
  await shot(page, "submit-refused");
});

test("cost: a column, a chart with its frontier, and sorting cheapest first", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator("thead").getByText("Cost per run")).toBeVisible();
  const cells = await rowOf(page, "OpenHands + Claude 4.5 Opus");
  // The default columns: rank · final ×3 · Δ · execution ×3 · cost ×3
  expect(cells.slice(8, 11)).toEqual(["$1.34", "$1.34", "$1.34"]);
  await expect(page.getByRole("heading", { name: "Success and cost" })).toBeVisible();
  await expect(page.locator("svg.chart title").filter({ hasText: "Final success against mean cost per run" })).toHaveCount(1);
  await expect(page.locator("figcaption").filter({ hasText: "cost–success frontier" })).toBeVisible();
  await page.goto("/?sort=cost-none");
  expect(await page.locator("table.board tbody tr th.agent > a").first().innerText()).toBe("aider + DeepSeek-R1");
  await shot(page, "leaderboard-by-cost");
});

test("a published agent's page: Table 7, its error counts and the known issues", async ({ page }) => {
  await page.goto("/agents/openhands-claude-4.5-opus");
  await expect(page.getByRole("heading", { name: "Cost and time" })).toBeVisible();
  const published = page.locator("table.published").filter({ hasText: "As published: Table 7" });
  await expect(published).toContainText("1.34");
  await expect(published).toContainText("241.26");
  await expect(page.getByText("carries the published average")).toBeVisible();
  await expect(page.getByRole("heading", { name: "Error types as published (Table 10)" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Known issues of the published numbers" })).toBeVisible();
  // The cell of Instruction Tuning with no hints is marked, and the mark leads to why.
  await page.locator('a[href="#issue-fs-gt-es-openhands-claude-4.5-opus-none-implicit-ins"]').first().click();
  await expect(page).toHaveURL(/#issue-fs-gt-es-openhands-claude-4.5-opus-none-implicit-ins$/);
  await expect(page.locator('[id="issue-fs-gt-es-openhands-claude-4.5-opus-none-implicit-ins"]')).toContainText("Table 24");
  await shot(page, "agent-published");
});

test("failures: the paper's Tables 9 and 10 beside the evaluated error types", async ({ page }) => {
  await page.goto("/failures");
  await expect(page.getByRole("heading", { name: "Error types: the paper's analysis and the results here" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Table 9 as published: aider agents" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Table 10 as published: OpenHands agents" })).toBeVisible();
  await expect(page.locator("#issue-error-counts-column-order")).toContainText("DeepSeek R1");
  await shot(page, "failures-published");
});

test("a run's trajectory: steps, tool calls, and the step where the error shows", async ({ page }) => {
  await page.goto("/agents/example-agent?task=wordfreq&hint=hints");
  await page.locator("table.runs").getByRole("link", { name: /^#\d+$/ }).first().click();
  await expect(page.getByRole("heading", { name: "Agent trajectory" })).toBeVisible();
  await expect(page.locator("ol.trajectory > li")).toHaveCount(5);
  await expect(page.locator("#step-3")).toContainText("Tool call str_replace · call_2");
  await expect(page.locator("#step-4")).toHaveClass(/err/);
  await page.getByRole("link", { name: "Step 4 of the agent's trajectory" }).click();
  await expect(page).toHaveURL(/#step-4$/);
  // Long observations are folded; unfolding shows the traceback.
  const observation = page.locator("#step-4 details").filter({ hasText: "Observation of call_4" });
  await observation.locator("summary").click();
  await expect(observation.locator("pre")).toContainText("ValueError: review too short to classify");
  await shot(page, "run-trajectory");
});

test("two agents ticked on the leaderboard are compared", async ({ page }) => {
  await page.goto("/");
  await page.getByRole("checkbox", { name: "Compare OpenHands + Claude 4.5 Opus" }).check();
  await page.getByRole("checkbox", { name: "Compare aider + Claude 4.5 Opus" }).check();
  await page.getByRole("button", { name: "Compare the ticked agents" }).click();
  await expect(page).toHaveURL(/\/compare\?/);
  await expect(page.getByText("OpenHands + Claude 4.5 Opus vs aider + Claude 4.5 Opus")).toBeVisible();
});

test("the parity view is chosen with a GET form and reached from the agent page", async ({ page }) => {
  await page.goto("/agents/openhands-1.4.0-claude-sonnet-4.5-harbor");
  // The other side's harness is said once, by its name.
  const other = page.locator("li", { has: page.getByRole("link", { name: /Harness parity with/ }) });
  await expect(other).toHaveText("Harness parity with OpenHands 1.4.0 + Claude Sonnet 4.5 (RExBench original harness)");
  await page.getByRole("link", { name: /Harness parity with/ }).click();
  await expect(page).toHaveURL(/\/parity\?a=openhands-1\.4\.0-claude-sonnet-4\.5-harbor&b=openhands-1\.4\.0-claude-sonnet-4\.5-rexbench/);
  await expect(page.getByText("The ranges overlap")).toBeVisible();
  // Each side's name says its harness once.
  const heading = await page.locator("h1").innerText();
  expect(heading).toBe(
    "Parity: OpenHands 1.4.0 + Claude Sonnet 4.5 (Harbor) vs OpenHands 1.4.0 + Claude Sonnet 4.5 (RExBench original harness)",
  );
  await expect(page).toHaveTitle(/^Parity: [^()]*\(Harbor\) vs [^()]*\(RExBench original harness\)/);
  const solved = page.locator("dl.solved");
  await expect(solved).toContainText("Tree of Thoughts, WinoDict");
  await page.getByLabel("Side A").selectOption("openhands-1.4.0-claude-sonnet-4.5-rexbench");
  await page.getByLabel("Side B").selectOption("openhands-1.4.0-claude-sonnet-4.5-harbor");
  await page.getByRole("button", { name: "Compare" }).click();
  await expect(page).toHaveURL(/a=openhands-1\.4\.0-claude-sonnet-4\.5-rexbench&b=openhands-1\.4\.0-claude-sonnet-4\.5-harbor/);
  await expect(page.locator("table.parity-tasks")).toContainText("0/3");
});

test("the public-tasks view ranks on cogs and othello, and the harness is a filter", async ({ page }) => {
  await page.goto("/");
  await page.getByRole("link", { name: "Public tasks only" }).click();
  await expect(page).toHaveURL(/tasks=public/);
  await expect(page.getByRole("link", { name: "Public tasks only: cogs, othello" })).toBeVisible();
  await expect(page.locator("#board-notes")).toContainText("Counting cogs and othello only");
  await expect(page.locator("table.board tbody tr")).toHaveCount(16);
  await openFilters(page);
  await page.getByLabel("Harness", { exact: true }).selectOption("harbor");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/harness=harbor/);
  await expect(page).toHaveURL(/tasks=public/);
  await expect(page.locator("table.board tbody tr th.agent > a")).toHaveText(["OpenHands 1.4.0 + Claude Sonnet 4.5 (Harbor)"]);
});

test("the solved-every-time column orders the board, and the agent page draws pass@k and pass^k", async ({ page }) => {
  await page.goto("/?col=final&col=every");
  await page.locator('table.board thead a[href*="sort=every-none"]').click();
  await expect(page).toHaveURL(/sort=every-none/);
  await expect(page.locator("table.board caption .sorted-by")).toHaveText("Solved every time, no hints (descending)");
  await expect(page.locator("table.board tbody tr th.agent > a").first()).toHaveText("OpenHands + Claude 4.5 Opus");

  await page.goto("/agents/openhands-claude-4.5-opus");
  const table = page.locator("table.reliability");
  await expect(table).toContainText("pass@k");
  await expect(table).toContainText("pass^k");
  await expect(table.locator("thead th")).toHaveCount(2 + 5);
  await expect(page.locator("#reliability ~ .charts-pair svg[role=img]")).toHaveCount(2);

  await page.goto("/tasks/othello");
  await expect(page.locator("ul.every-time")).toContainText("With no hints:");
});

test("reproductions: each row's sample, the held filter, and a run that did not reproduce with its finding", async ({ page }) => {
  // serve.sh re-ran the demo's samples with `rexbench reproduce` before the tests.
  await page.goto("/");
  await openSets(page);
  await page.getByRole("link", { name: /^Example tasks( \(8d55a30f\))? · \d+ agents$/ }).click();
  const rowOfAgent = (name: string) =>
    page.locator("table.board tbody tr", { has: page.getByRole("link", { name, exact: true }) });
  await expect(rowOfAgent("TamperedFramework + Example Model").locator(".repro.differed")).toContainText(
    "reproduced 2 of 2 sampled; 2 different",
  );
  // Its sampled successes (both: of two, only both catch a fake) were re-run on a
  // held-out variant too, and generalised.
  await expect(rowOfAgent("ExampleFramework + Example Model").locator(".repro.held")).toContainText(
    /^✓ reproduced (\d) of \1 sampled; held out: 2 of 2 generalised$/,
  );
  // The tampered agent's caught lie marks its submitter's other rows.
  await expect(rowOfAgent("ExampleFramework + Example Model").locator(".kin-taint")).toContainText(
    "a submission of this submitter did not reproduce",
  );
  await expect(rowOfAgent("TamperedFramework + Example Model").locator(".repro.differed")).toContainText(
    "held out: 0 of 2 generalised",
  );

  await openFilters(page);
  await page.getByLabel("Reproduced", { exact: true }).selectOption("held");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/reproduced=held/);
  await expect(page.getByRole("link", { name: "ExampleFramework + Example Model", exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: "TamperedFramework + Example Model", exact: true })).toHaveCount(0);
  await expect(page.getByLabel("Reproduced", { exact: true })).toHaveValue("held");

  await page.goto("/agents/tampered-agent");
  await expect(page.getByRole("heading", { name: "Reproduction", exact: true })).toBeVisible();
  const reran = page.locator("table", { has: page.locator("caption", { hasText: "The runs the maintainers re-ran" }) });
  await expect(reran.locator("tbody tr")).toHaveCount(2);
  await expect(reran.locator("tbody tr").first()).toContainText("different: success → wrong result");
  await expect(page.locator("table").filter({ hasText: "Signed as" })).toContainText("reproduced 2 of 2 sampled; 2 different");
  await expect(reran.locator("thead")).toContainText("Held out");
  await expect(reran.locator("tbody tr").first()).toContainText("did not generalise");
  // The public task's run: its re-run's outputs are readable, as its own are.
  await reran.locator("tbody tr", { hasText: "wordfreq" }).getByRole("link", { name: /^#\d+$/ }).click();
  await expect(page).toHaveURL(/\/runs\/\d+#reproduction$/);
  await expect(page.locator("dl.facts").first()).toContainText("different: success → wrong result");
  await expect(page.locator("p.notice.reproduced.differed")).toContainText("different: success → wrong result");
  await expect(page.locator("table.findings")).toContainText("not-reproduced");
  await expect(page.locator("table.findings")).toContainText("not-generalised");
  await expect(page.locator("dl.facts").filter({ hasText: "Held out" })).toContainText(
    "on a held-out variant of its task: it did not generalise",
  );
  await expect(page.locator("table.findings")).toContainText("this server");
  await expect(page.getByText("This success is flagged")).toBeVisible();
  const artifacts = page.locator("table.rerun-artifacts", { has: page.locator("caption", { hasText: "The re-run's outputs" }) });
  const log = await artifacts.locator("a[href^='/artifacts/']").first().getAttribute("href");
  const served = await page.request.get(log!);
  expect(served.status()).toBe(200);
  expect(served.headers()["content-type"]).toBe("text/plain; charset=utf-8");
  await shot(page, "reproduced-run");
});

for (const width of [390, 1280, 1920]) {
  test(`at ${width} px the board's notes are whole, and its rank and agent stay in view as the numbers scroll`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    // Every column: wider than any of these windows but the widest.
    await page.goto(`/?${ALL_COLUMNS}`);
    await page.locator("details.how-to-read summary").click();
    const notes = page.locator("#board-notes");
    await expect(notes).toContainText("Solved every time is pass^n");
    const inView = async (what: string, box: { x: number; width: number } | null) => {
      expect(box, what).not.toBeNull();
      expect(box!.x, what).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, what).toBeLessThanOrEqual(width);
    };
    await inView("the notes", await notes.boundingBox());
    // No line of them runs past their box (as text inside a scrolling table would).
    expect(await notes.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    // Sideways as far as it goes: the first row's rank and agent are where they were.
    const agent = page.locator("table.board tbody tr th.agent").first();
    const rank = page.locator("table.board tbody tr td.rank").first();
    const before = (await agent.boundingBox())!;
    const scrolled = await page.evaluate(() => {
      let moved = 0;
      for (const el of document.querySelectorAll<HTMLElement>(".table-wrap, table.board")) {
        el.scrollLeft = 100_000;
        moved = Math.max(moved, el.scrollLeft);
      }
      return moved;
    });
    if (width < 1920) expect(scrolled, "the numbers scroll sideways at this width").toBeGreaterThan(0);
    await inView("the agent", await agent.boundingBox());
    await inView("the rank", await rank.boundingBox());
    expect((await agent.boundingBox())!.x).toBeCloseTo(before.x, 0);
    await expect(agent.getByRole("link").first()).toBeVisible();
  });
}

test("the default columns fit a 1280-pixel window without scrolling sideways", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/");
  const wrap = page.locator(".table-wrap").first();
  const overflow = await wrap.evaluate((el) => el.scrollWidth - el.clientWidth);
  expect(overflow, "the table is wider than its box").toBeLessThanOrEqual(0);
  const box = (await page.locator("table.board").first().boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(1280);
  const heads = await page.locator("table.board thead tr").first().locator("th").allTextContents();
  expect(heads.map((h) => h.trim())).toEqual(["Rank", "Agent", "Final success", "Hints help", "Execution success", "Cost per run"]);
});

test("the column choice shows the numbers and conditions asked for, in the URL", async ({ page }, info) => {
  await page.goto("/?sort=agent&dir=asc");
  await openFilters(page);
  await page.locator("details.columns summary").click();
  await page.getByLabel("Cost per run").uncheck();
  await page.getByLabel("File recall").check();
  await page.locator("details.columns").getByLabel("Detailed hints").uncheck();
  if (info.project.name === "js") {
    // In place, as each box changes: the URL follows, and the page is not reloaded.
    await expect(page).toHaveURL(/col=recall/);
    await expect(page).toHaveURL(/cond=none&cond=hints/);
    await expect(page.locator("details.columns")).toHaveAttribute("open", "");
  } else {
    await page.getByRole("button", { name: "Apply" }).click();
  }
  await expect(page).toHaveURL(/col=final&col=delta&col=exec&col=recall&cond=none&cond=hints/);
  await expect(page).toHaveURL(/sort=agent&dir=asc/);
  const board = page.locator("table.board").first();
  const groups = board.locator("thead tr").first().locator("th");
  await expect(groups).toHaveText(["Rank", /^Agent/, "Final success", "Hints help", "Execution success", "File recall"]);
  await expect(board.locator("thead tr").nth(1).locator("th")).toHaveText([
    /^Tier · provenance\s*Compare$/, "None", "Hints", "Δ", "None", "Hints", "None", "Hints",
  ]);
  // A row has a cell per number shown: its rank, 2 + 1 + 2 + 2.
  await expect(board.locator("tbody tr").first().locator("td")).toHaveCount(8);
  await expect(board.locator("caption")).toContainText("file recall per agent under no hints, hints");
  // The choice is kept by the links the page makes: ordering by another column keeps it.
  await board.locator("thead a", { hasText: "Agent" }).click();
  await expect(page).toHaveURL(/col=recall/);
  await expect(board.locator("thead tr").first().locator("th")).toHaveText([
    "Rank", /^Agent/, "Final success", "Hints help", "Execution success", "File recall",
  ]);
  // The boxes say what is shown.
  await expect(page.getByLabel("File recall")).toBeChecked();
  await expect(page.getByLabel("Cost per run")).not.toBeChecked();
});

test("failures relabelled infra_error are listed apart, their uncounted runs said", async ({ page }) => {
  const row = await submitRelabelled(page);
  expect(row.ranked).toBe(false);
  expect(row.by_hint.none.infra_errors).toBe(1);

  await page.goto(`/?set=${row.task_set_digest}`);
  const partial = page.locator("table.board.partial tr", { hasText: "Relabelled agent" });
  await expect(partial).toContainText("1 task short of the attempts asked with no hints");
  await expect(partial).toContainText("7 runs not counted (infra_error)");
  await expect(page.locator("#board-notes")).toContainText(/rows? here (has|have) some/);

  await partial.getByRole("link", { name: "7 runs not counted (infra_error)" }).click();
  await expect(page).toHaveURL(/\/agents\/e2e-relabelled#infra-errors$/);
  await expect(page.locator("#infra-errors + dd")).toContainText("1 of 3 runs with no hints (33%)");
  await expect(page.getByText("not ranked: it does not cover every task of its set without hints with the valid attempts")).toBeVisible();
});
