import { expect, test } from "@playwright/test";
import * as fs from "node:fs";
import * as path from "node:path";
import { closeOpened, open, violations } from "./axe";
import { submitRelabelled } from "./relabelled";

// Pages reached by a reader's steps (a submission, a sign-in, a link followed), checked by
// axe-core once with JavaScript (the islands hydrated) and once without (the server's
// DOM). Every kind of page as its address alone reaches it is checked in
// a11y-pages.spec.ts.

// axe-core's work grows with the page: on the agent page (180 runs, 1,250 cells, 2,600
// elements) its colour-contrast rule alone took 5 s here, the whole check 8–12 s on a quiet
// machine and over 30 s beside the Rust tests (issue 53's CI). What these tests judge is
// the violations, not the machine's speed, so they get room: four times the suite's 30 s.
test.describe.configure({ timeout: 120_000 });
test.afterEach(closeOpened);

test("axe-core finds no violation on a board with a row listed apart for its uncounted runs, and on its agent's page", async ({ page, browser }) => {
  const row = await submitRelabelled(page);
  expect(await violations(await open(page, browser, `/?set=${row.task_set_digest}`))).toEqual([]);
  expect(await violations(await open(page, browser, "/agents/e2e-relabelled"))).toEqual([]);
});

test("axe-core finds no violation on a run page with its patch and logs", async ({ page, browser }) => {
  await page.goto("/agents/example-agent?task=wordfreq&hint=none");
  const run = await page.locator("a[href^='/runs/']").first().getAttribute("href");
  expect(await violations(await open(page, browser, run!))).toEqual([]);
});

test("axe-core finds no violation on a private run's public page", async ({ page, browser }) => {
  await page.goto("/agents/example-agent?task=csvstats&hint=none");
  const run = await page.locator("a[href^='/runs/']").first().getAttribute("href");
  const opened = await open(page, browser, run!);
  await expect(opened.locator("table.artifacts")).toBeVisible();
  expect(await violations(opened)).toEqual([]);
});

test("signed in, a private run's page shows its outputs, and axe-core finds no violation on it", async ({ page, browser }, info) => {
  // serve.sh made one link for each project.
  const links = fs.readFileSync(path.join(__dirname, "..", ".work", "sign-in-links.txt"), "utf8").trim().split("\n");
  const link = links[info.project.name === "js" ? 0 : 1];
  // The link's page signs nobody in; its button does (a POST from this site).
  expect(await violations(await open(page, browser, link))).toEqual([]);
  await page.goto(link);
  await expect(page.getByRole("heading", { name: "Sign in with a link" })).toBeVisible();
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/signin$/);
  await expect(page.getByText("You are signed in as maintainer (sign-in link)")).toBeVisible();
  await page.goto("/agents/example-agent?task=csvstats&hint=none");
  const run = await page.locator("a[href^='/runs/']").first().getAttribute("href");
  await page.goto(run!);
  await expect(page.locator("pre.diff .line.add").first()).toBeVisible();
  await expect(page.getByRole("heading", { name: "The outputs of this run are private" })).toHaveCount(0);
  await expect(page.locator("table.artifacts a[href^='/artifacts/']").first()).toBeVisible();
  expect(await violations(await open(page, browser, run!))).toEqual([]);
  // Signing out, by the page's own form, ends it.
  await page.goto("/signin");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin\?problem=signed-out$/);
  await expect(page.getByText("You are not signed in")).toBeVisible();
});

test("axe-core finds no violation on a flagged run's page, with its findings", async ({ page, browser }) => {
  await page.goto("/agents/shortcut-agent");
  const run = await page.locator("table.flagged-runs a[href^='/runs/']").first().getAttribute("href");
  const opened = await open(page, browser, run!);
  await expect(opened.locator("table.findings")).toBeVisible();
  expect(await violations(opened)).toEqual([]);
});

test("axe-core finds no violation on a reproduced agent's page and on a run that did not reproduce", async ({ page, browser }) => {
  const agent = await open(page, browser, "/agents/tampered-agent");
  await expect(agent.locator("td.repro.differed").first()).toBeVisible();
  expect(await violations(agent)).toEqual([]);
  await page.goto("/agents/tampered-agent");
  const run = await page.locator("td a[href$='#reproduction']").first().getAttribute("href");
  const opened = await open(page, browser, run!);
  await expect(opened.locator("p.notice.reproduced")).toBeVisible();
  expect(await violations(opened)).toEqual([]);
});

test("axe-core finds no violation on the leaderboard with its filters, a chip, its column choice and its notes open", async ({ page, browser }) => {
  const opened = await open(page, browser, "/?framework=aider");
  // The filters, their chip, the column choice and the notes, all open.
  await opened.locator("details.filter-box > summary").click();
  await opened.locator("details.columns summary").click();
  await opened.locator("details.how-to-read summary").click();
  await expect(opened.locator("a.chip")).toHaveText(["Framework: aider ×"]);
  await expect(opened.getByLabel("File recall")).toBeVisible();
  expect(await violations(opened)).toEqual([]);
});

test("a regraded Harbor run with an ATIF-v1.8 trajectory says both verdicts and names its audio and image, and axe-core finds no violation", async ({ page, browser }, info) => {
  // serve.sh imported an agent's job and a job regrading one of its trials, and packed them.
  const bundle = fs.readFileSync(path.join(__dirname, "..", ".work", "regraded.rexb.tar.gz"));
  const sent = await page.request.post("/api/v1/submissions", { data: bundle, headers: { "content-type": "application/gzip" } });
  expect([200, 201]).toContain(sent.status());
  // Its outputs are private (a RExBench task): a maintainer reads them.
  const links = fs.readFileSync(path.join(__dirname, "..", ".work", "sign-in-links.txt"), "utf8").trim().split("\n");
  await page.goto(links[info.project.name === "js" ? 2 : 3]);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/signin$/);
  await page.goto("/agents/e2e-regraded?task=cogs&hint=none");
  // One attempt per agent run: the trial and its regrade are one run.
  const runs = page.locator("table.runs a[href^='/runs/']");
  await expect(runs).toHaveCount(1);
  const run = await runs.first().getAttribute("href");
  await page.goto(run!);
  const regraded = page.locator("dd.regraded");
  await expect(regraded).toContainText("first judged this agent run");
  await expect(regraded).toContainText("wrong result");
  await expect(regraded).toContainText("success");
  const trajectory = page.locator("ol.trajectory");
  await expect(trajectory).toContainText("[audio: audio/wav, 4.5 s, media/briefing.wav]");
  await expect(trajectory).toContainText("[image: image/png, media/baseline.png]");
  expect(await violations(await open(page, browser, run!))).toEqual([]);
});
