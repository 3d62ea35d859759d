import { expect, test, type Page, type Request } from "@playwright/test";
import * as fs from "node:fs";
import * as path from "node:path";

// The islands, with JavaScript on: what each adds to a page that works without it.

const VECTORS = path.join(__dirname, "..", "..", "vectors");

/** Everything the page asks of the network from now on. */
function requests(page: Page): Request[] {
  const seen: Request[] = [];
  page.on("request", (r) => seen.push(r));
  return seen;
}

/** Console errors, uncaught exceptions and policy violations from now on. */
function problems(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning" || m.text().includes("Content Security Policy")) {
      seen.push(`${m.type()}: ${m.text()}`);
    }
  });
  page.on("pageerror", (e) => seen.push(`exception: ${e.message}`));
  return seen;
}

const names = (page: Page) => page.locator("table.board tbody tr th.agent > a").allInnerTexts();

/** Opens the leaderboard's filters, folded under "Filters" (a no-op when open). */
async function openFilters(page: Page) {
  const box = page.locator("details.filter-box");
  if ((await box.getAttribute("open")) === null) await box.locator("xpath=./summary").click();
  await expect(box.locator("form.filters")).toBeVisible();
}

/** Waits until the leaderboard's island has hydrated and holds the set's rows. */
async function liveBoard(page: Page, url = "/") {
  const rows = page.waitForResponse((r) => r.url().endsWith("/api/v1/leaderboard"));
  await page.goto(url);
  await expect(page.locator(".live-board[data-ready]")).toBeAttached();
  await rows;
}

// The README's picture: the demo's leaderboard as a newcomer first sees it, at a laptop's
// size, made again by every run of these tests so that it stays what the board looks like.
test("the README's picture is the demo's leaderboard", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 860 });
  await liveBoard(page);
  // The paper's fourteen agents and the demo's own, ranked.
  expect((await names(page)).length).toBeGreaterThanOrEqual(14);
  // The table's head and first rows.
  const head = await page.locator("table.board thead").boundingBox();
  expect(head).not.toBeNull();
  await page.screenshot({
    path: path.join(__dirname, "..", "..", "docs", "leaderboard.png"),
    fullPage: true,
    clip: { x: 0, y: head!.y - 12, width: 1280, height: 700 },
  });
});

test("every page hydrates without a console error or a policy violation", async ({ page }) => {
  const seen = problems(page);
  for (const p of ["/", "/tasks", "/tasks/othello", "/agents/openhands-claude-4.5-opus", "/failures",
    "/compare?a=openhands-claude-4.5-opus&b=aider-claude-4.5-opus", "/changes", "/submit", "/about", "/keys",
    "/agents/example-agent"]) {
    await page.goto(p);
    await page.waitForLoadState("networkidle");
    await expect(page.locator(".new-results")).toBeAttached();
  }
  expect(seen, seen.join("\n")).toEqual([]);
});

test("the leaderboard sorts and filters in the browser, and the URL follows", async ({ page }) => {
  await liveBoard(page);
  const seen = requests(page);
  expect((await names(page))[0]).toBe("OpenHands + Claude 4.5 Opus");

  await page.locator("thead").getByRole("link", { name: "Agent" }).click();
  await expect(page).toHaveURL(/sort=agent&dir=asc/);
  expect((await names(page))[0]).toBe("aider + Claude 3.7 Sonnet");
  await expect(page.locator("thead").getByRole("link", { name: "Agent ▲" })).toBeVisible();

  await openFilters(page);
  await page.getByLabel("Framework", { exact: true }).selectOption("aider");
  await expect(page).toHaveURL(/framework=aider/);
  // The filters stay open as the table changes under them, and the chip says it.
  await expect(page.locator("details.filter-box")).toHaveAttribute("open", "");
  await expect(page.locator("a.chip")).toHaveText(["Framework: aider ×"]);
  await expect(page.getByText("7 of 16 agents")).toBeVisible();
  let shown = await names(page);
  expect(shown.length).toBe(7);
  for (const n of shown) expect(n).toMatch(/^aider \+ /);

  await page.getByLabel("Agent", { exact: true }).fill("claude 4");
  await expect(page).toHaveURL(/q=claude\+4/);
  shown = await names(page);
  expect(shown).toEqual(["aider + Claude 4 Sonnet", "aider + Claude 4.5 Opus"]);

  await page.locator("thead tr").nth(1).getByRole("link", { name: "None" }).first().click();
  await expect(page).toHaveURL(/sort=final-none&dir=desc/);
  shown = await names(page);

  // No new page was loaded for any of it.
  expect(seen.filter((r) => r.resourceType() === "document").map((r) => r.url())).toEqual([]);

  // The URL is a link: the server renders the same rows from it.
  const url = page.url();
  await page.goto(url);
  expect(await names(page)).toEqual(shown);
  await expect(page.getByLabel("Agent", { exact: true })).toHaveValue("claude 4");
});

test("a view opened from a link is narrowed by the server, and widened without a new page", async ({ page }) => {
  await page.goto("/?tier=maintainer&sort=agent&dir=asc");
  await expect(page.locator(".live-board[data-ready]")).toBeAttached();
  const seen = requests(page);
  await openFilters(page);
  await page.getByLabel("Tier", { exact: true }).selectOption("");
  await expect(page.getByText("16 of 16 agents")).toBeVisible();
  expect((await names(page)).length).toBe(16);
  expect((await names(page))[0]).toBe("aider + Claude 3.7 Sonnet");
  expect(seen.filter((r) => r.resourceType() === "document")).toEqual([]);
  await expect(page).not.toHaveURL(/tier=/);
});

test("two agents ticked on the leaderboard open /compare", async ({ page }) => {
  await liveBoard(page);
  await page.getByRole("checkbox", { name: "Compare OpenHands + Claude 4.5 Opus" }).check();
  const button = page.getByRole("button", { name: "Compare the ticked agents" });
  await expect(button).toBeDisabled();
  await page.getByRole("checkbox", { name: "Compare aider + Claude 4.5 Opus" }).check();
  await expect(page.getByRole("checkbox", { name: "Compare aider + DeepSeek-R1" })).toBeDisabled();
  await button.click();
  await expect(page).toHaveURL(/\/compare\?a=openhands-claude-4\.5-opus&b=aider-claude-4\.5-opus$/);
  await expect(page.getByText("OpenHands + Claude 4.5 Opus vs aider + Claude 4.5 Opus")).toBeVisible();
});

test("each invalid conformance vector is refused in the browser, with the server's code, sending nothing", async ({ page, request }) => {
  // One vector per rule of the spec: some fifty, a few of them tens of megabytes inflated.
  test.setTimeout(180_000);
  const expected = JSON.parse(fs.readFileSync(path.join(VECTORS, "expected.json"), "utf8")) as Record<string, { valid: boolean }>;
  const bad = Object.keys(expected).filter((f) => !expected[f].valid);
  expect(bad.length).toBeGreaterThan(5);
  await page.goto("/submit");
  await expect(page.locator("form.upload[data-ready]")).toBeAttached();
  const seen = requests(page);
  for (const file of bad) {
    const bytes = fs.readFileSync(path.join(VECTORS, file));
    // What the server itself answers, asked by the test, not the page.
    const answer = await request.post("/api/v1/submissions", { data: bytes, headers: { "Content-Type": "application/gzip" } });
    expect(answer.status(), file).toBeGreaterThanOrEqual(400);
    const { code, message } = (await answer.json()).error as { code: string; message: string };

    await page.setInputFiles("#bundle", { name: file, mimeType: "application/gzip", buffer: bytes });
    const verdict = page.locator(".submit-state .verdict.refused");
    await expect(verdict.locator("code.code"), file).toHaveText(code);
    await expect(verdict.locator("p").first(), file).toHaveText(message);
    await expect(verdict).toContainText("nothing was sent");
  }
  // The page's own modules, and its poll for new results (every 30 s: a busy machine
  // makes this test last that long), are all it may ask for.
  const toServer = seen.filter((r) => {
    const url = new URL(r.url());
    return !url.pathname.startsWith("/pkg/") && !(r.method() === "GET" && url.pathname === "/api/v1/changes");
  });
  expect(toServer.map((r) => `${r.method()} ${r.url()}`)).toEqual([]);
});

test("a valid bundle is checked, uploads with its progress, and appears on the leaderboard", async ({ page, request }) => {
  await page.goto("/submit");
  await expect(page.locator("form.upload[data-ready]")).toBeAttached();
  // Every state the submission passes through, as the reader saw it.
  await page.evaluate(() => {
    const w = window as unknown as { __stages: string[] };
    w.__stages = [];
    const state = document.querySelector(".submit-state")!;
    new MutationObserver(() => w.__stages.push(state.textContent ?? "")).observe(state, { childList: true, subtree: true, characterData: true });
  });
  await page.setInputFiles("#bundle", path.join(VECTORS, "valid-basic.tar.gz"));
  await expect(page.locator(".verdict.checked")).toContainText("RefFramework + RefModel, 2 runs");
  const sent = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/api/v1/submissions"));
  await page.getByRole("button", { name: "Verify and submit" }).click();
  await sent;
  await expect(page.locator(".verdict.accepted")).toContainText(/Stored/);
  const stages = await page.evaluate(() => (window as unknown as { __stages: string[] }).__stages);
  expect(stages.some((s) => s.includes("Checking in your browser"))).toBe(true);
  expect(stages.some((s) => s.includes("Sending:"))).toBe(true);
  expect(stages.some((s) => s.includes("verifying on the server"))).toBe(true);

  const rows = (await (await request.get("/api/v1/leaderboard")).json()).rows as { agent_id: string; task_set_digest: string }[];
  const row = rows.find((r) => r.agent_id === "ref-agent");
  expect(row).toBeDefined();
  await page.getByRole("link", { name: "See RefFramework + RefModel" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("RefFramework + RefModel");
  await page.goto(`/?set=${row!.task_set_digest}`);
  await expect(page.locator("table.board").getByRole("link", { name: "RefFramework + RefModel", exact: true })).toBeVisible();
});

test("a stored bundle's marks are told on the upload page, as the vectors state them", async ({ page }) => {
  await page.goto("/submit");
  await expect(page.locator("form.upload[data-ready]")).toBeAttached();
  await page.setInputFiles("#bundle", path.join(VECTORS, "valid-marked.tar.gz"));
  await expect(page.locator(".verdict.checked")).toContainText("RefFramework + RefModel, 4 runs");
  await page.getByRole("button", { name: "Verify and submit" }).click();
  const stored = page.locator(".verdict.accepted");
  await expect(stored).toContainText(/Stored/);
  // vectors/expected.json's marks for it, one item a marked run, its marks within.
  const expected = JSON.parse(fs.readFileSync(path.join(VECTORS, "expected.json"), "utf8"))["valid-marked.tar.gz"].marks as
    { task: string; hint: string; attempt: number; marks: string[] }[];
  const labels: Record<string, string> = { none: "No hints", hints: "Hints", detailed: "Detailed hints" };
  const runs = stored.locator(".marks > ul > li");
  await expect(runs).toHaveCount(expected.length);
  for (const [i, run] of expected.entries()) {
    await expect(runs.nth(i)).toContainText(`${run.task} · ${labels[run.hint]} · attempt ${run.attempt}`);
    await expect(runs.nth(i).locator("code")).toHaveText(run.marks);
  }
  await expect(stored.getByRole("link", { name: "what a mark does" })).toHaveAttribute("href", "/about#cost");
});

test("the strict view in the live leaderboard: the table is replaced without a new page, and the URL follows", async ({ page }) => {
  await page.goto("/");
  const href = await page.getByRole("link", { name: /^Example tasks( \(8d55a30f\))? · \d+ agents$/, includeHidden: true }).getAttribute("href");
  // The shortcut agent ran one of the two example tasks: listed apart, so the server
  // renders every view of this set.
  await page.goto(href!);
  await expect(page.locator(".live-board[data-ready]")).toBeAttached();
  const seen = problems(page);
  await page.evaluate(() => ((window as unknown as { __kept: number }).__kept = 1));
  const agent = "ShortcutFramework + Example Model";
  const row = () => page.locator("table.board tbody tr", { has: page.getByRole("link", { name: agent, exact: true }) });
  const final = async () => (await row().locator("td").nth(1).innerText()).split("\n")[0].trim();
  expect(await final()).toBe("100%");

  await openFilters(page);
  await page.getByLabel("Flagged successes", { exact: true }).selectOption("strict");
  await expect(page).toHaveURL(/integrity=strict/);
  await expect.poll(final).toBe("50%");
  await expect(page.locator("#board-notes")).toContainText("Strict: every success with an integrity finding");
  // Sorting now orders the strict rows, still in the page.
  await page.locator("thead").getByRole("link", { name: "Agent" }).click();
  await expect(page).toHaveURL(/integrity=strict.*sort=agent/);
  await expect.poll(final).toBe("50%");
  expect(await page.evaluate(() => (window as unknown as { __kept?: number }).__kept)).toBe(1);

  await page.getByLabel("Flagged successes", { exact: true }).selectOption("reported");
  await expect.poll(final).toBe("100%");
  await expect(page).not.toHaveURL(/integrity=/);
  expect(await page.evaluate(() => (window as unknown as { __kept?: number }).__kept)).toBe(1);
  expect(seen, seen.join("\n")).toEqual([]);
});

test("a run's log narrows to its errors or to words, and jumps between errors; the patch folds", async ({ page }) => {
  await page.goto("/agents/example-agent?task=wordfreq&hint=hints");
  await page.locator("table.runs").getByRole("link", { name: /^#\d+$/ }).first().click();
  const tools = page.locator(".log-tools[data-ready]", { hasText: "Traceback" }).first();
  await expect(tools).toBeAttached();
  const log = tools.locator("pre.log");
  const visible = () => log.locator("span.line:visible").allInnerTexts();
  const all = (await visible()).length;
  expect(all).toBeGreaterThan(1);

  await tools.getByLabel("Error lines only").check();
  const errors = await visible();
  expect(errors.length).toBeGreaterThan(0);
  expect(errors.length).toBeLessThan(all);
  expect(await log.locator("span.line.err:visible").count()).toBe(errors.length);
  await expect(tools.getByText(`${errors.length} of `)).toBeVisible();

  await tools.getByRole("button", { name: "↓ Next error" }).click();
  await expect(log.locator("span.line.current")).toHaveCount(1);
  await expect(log.locator("span.line.current")).toHaveClass(/err/);

  await tools.getByLabel("Error lines only").uncheck();
  await tools.getByLabel("Show lines containing").fill("PREDICT(");
  const found = await visible();
  expect(found.length).toBeGreaterThan(0);
  expect(found.length).toBeLessThan(all);
  for (const line of found) expect(line.toLowerCase()).toContain("predict(");
  await tools.getByLabel("Show lines containing").fill("");
  expect((await visible()).length).toBe(all);

  const patch = page.locator(".patch-tools[data-ready]").first();
  const lines = patch.locator("pre.diff span.line:visible");
  const before = await lines.count();
  await patch.getByRole("button", { name: "Fold every file", exact: true }).click();
  const folded = await lines.count();
  expect(folded).toBeLessThan(before);
  expect(folded).toBe(await patch.locator("pre.diff span.file-head").count());
  await patch.locator("pre.diff span.file-head").first().click();
  expect(await lines.count()).toBeGreaterThan(folded);
  await patch.getByRole("button", { name: "Unfold every file" }).click();
  expect(await lines.count()).toBe(before);
});

test("a page notices results that arrive after it was shown, and offers to reload", async ({ page, request }) => {
  await page.clock.install();
  await page.goto("/tasks");
  await expect(page.locator(".new-results")).toBeAttached();
  await page.waitForLoadState("networkidle");
  const polls = requests(page);
  // Another client submits while the page is open.
  const answer = await request.post("/api/v1/submissions", {
    data: fs.readFileSync(path.join(VECTORS, "valid-provenance.tar.gz")),
    headers: { "Content-Type": "application/gzip" },
  });
  expect(answer.status()).toBe(201);
  await page.clock.fastForward(10_000);
  await expect(page.getByRole("button", { name: "Reload" })).toHaveCount(0);
  await page.clock.fastForward(25_000);
  await expect(page.getByText("New results have arrived")).toBeVisible();
  expect(polls.some((r) => r.url().endsWith("/api/v1/changes?limit=1"))).toBe(true);
  // It never reloads on its own.
  expect(polls.filter((r) => r.resourceType() === "document")).toEqual([]);
  const reloaded = page.waitForEvent("load");
  await page.getByRole("button", { name: "Reload" }).click();
  await reloaded;
  await expect(page.getByRole("button", { name: "Reload" })).toHaveCount(0);
});

test("a bundle dropped on the form is checked like a chosen one", async ({ page }) => {
  await page.goto("/submit");
  await expect(page.locator("form.upload[data-ready]")).toBeAttached();
  const bytes = fs.readFileSync(path.join(VECTORS, "bad-hint.tar.gz")).toString("base64");
  const dropped = await page.evaluateHandle((b64) => {
    const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(new File([data], "bad-hint.tar.gz", { type: "application/gzip" }));
    return transfer;
  }, bytes);
  await page.locator("form.upload").dispatchEvent("drop", { dataTransfer: dropped });
  await expect(page.locator(".submit-state .verdict.refused code.code")).toHaveText("invalid_hint");
  // The dropped file is the form's now, as if chosen.
  expect(await page.locator("#bundle").evaluate((i: HTMLInputElement) => i.files?.[0]?.name)).toBe("bad-hint.tar.gz");
});

test("a hidden tab does not poll for new results, and asks when shown again", async ({ page }) => {
  await page.clock.install();
  await page.goto("/about");
  await page.waitForLoadState("networkidle");
  const polls: string[] = [];
  page.on("request", (r) => {
    if (r.url().includes("/api/v1/changes")) polls.push(r.url());
  });
  const visibility = (state: "hidden" | "visible") =>
    page.evaluate((s) => {
      Object.defineProperty(document, "visibilityState", { value: s, configurable: true });
      // As browsers fire it: at the document, bubbling to the window.
      document.dispatchEvent(new Event("visibilitychange", { bubbles: true }));
    }, state);
  await visibility("hidden");
  await page.clock.fastForward(95_000);
  await page.waitForTimeout(300);
  expect(polls).toEqual([]);
  await visibility("visible");
  await expect.poll(() => polls.length).toBe(1);
});
