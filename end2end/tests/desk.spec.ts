import { expect, test, type Page } from "@playwright/test";
import * as fs from "node:fs";
import * as path from "node:path";
import { closeOpened, open, violations } from "./axe";

// The maintainers' desk, in each project (JavaScript on and off): anyone else is refused
// it (403), a signed-in maintainer approves a key request (its held bundle goes on the
// board), declines another (its bundle is gone, the reason shown to the requester),
// reviews a finding and retires a held-out variant, each by the desk's own POST forms;
// axe-core finds nothing on the desk. serve.sh filed the requests (`rexbench register`,
// each key's bundle held) and made the links, one of each for either project.

test.afterEach(closeOpened);

function line(file: string, index: number): string {
  return fs.readFileSync(path.join(__dirname, "..", ".work", file), "utf8").trim().split("\n")[index];
}

/** Signs this page's browser in through a one-time link (its page's button). */
async function signIn(page: Page, link: string) {
  await page.goto(link);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/signin$/);
}

test("the desk is refused to an anonymous reader and to a submitter", async ({ page }, info) => {
  const anonymous = await page.goto("/desk");
  expect(anonymous!.status()).toBe(403);
  await expect(page.getByRole("heading", { name: "This page is the maintainers'" })).toBeVisible();
  await signIn(page, line("submitter-links.txt", info.project.name === "js" ? 0 : 1));
  const submitter = await page.goto("/desk");
  expect(submitter!.status()).toBe(403);
  await expect(page.getByRole("button", { name: "Approve" })).toHaveCount(0);
});

test("a maintainer approves, declines, reviews and retires on the desk", async ({ page, browser }, info) => {
  const project = info.project.name;
  await signIn(page, line("desk-links.txt", project === "js" ? 0 : 1));
  await page.goto("/desk");
  // The header counts what waits.
  await expect(page.locator("header .desk-counts")).toContainText(/Desk: \d+ requests? · \d+ findings? to review/);
  expect(await violations(await open(page, browser, "/desk"))).toEqual([]);
  await page.goto("/desk");

  // Approve: the held bundle's agent goes on the board.
  const approve = page.locator("article.request", { hasText: `Desk ${project}-approve lab` });
  await expect(approve).toContainText(`e2e-${project}-approve`);
  await expect(approve).toContainText(`${project}-approve@lab.example.org`);
  await approve.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(/\/desk\?done=approved#requests$/);
  await expect(page.getByRole("status")).toContainText("Approved");
  const agent = await page.goto(`/agents/e2e-${project}-approve`);
  expect(agent!.status()).toBe(200);

  // Decline, with a reason: the requester's page shows it, the bundle is nowhere.
  await page.goto("/desk");
  const decline = page.locator("article.request", { hasText: `Desk ${project}-decline lab` });
  const requestLink = await decline.getByRole("link", { name: /^Request \d+:/ }).getAttribute("href");
  await decline.getByLabel("Reason").fill(`not a research agent (${project})`);
  await decline.getByRole("button", { name: "Decline" }).click();
  await expect(page).toHaveURL(/\/desk\?done=declined#requests$/);
  const gone = await page.goto(`/agents/e2e-${project}-decline`);
  expect(gone!.status()).toBe(404);
  await page.goto(requestLink!);
  await expect(page.getByRole("status")).toContainText("Declined");
  await expect(page.locator("dd.note").first()).toContainText(`not a research agent (${project})`);

  // Review a finding of the approved agent (its runner flagged a success): confirm it, or
  // dismiss it, with a note.
  await page.goto("/desk#findings");
  const own = page.locator("#findings article", { has: page.locator(`a[href="/agents/e2e-${project}-approve"]`) });
  const finding = own.locator("ul.findings > li").first();
  await finding.getByLabel("Verdict").selectOption(project === "js" ? "confirmed" : "dismissed");
  await finding.getByLabel("Note").fill(`reviewed on the desk (${project})`);
  await finding.getByRole("button", { name: "Review" }).click();
  await expect(page).toHaveURL(/\/desk\?done=(confirmed|dismissed)#findings$/);

  // Retire the project's held-out variant.
  const digest = (project === "js" ? "c1" : "c2").repeat(32);
  const variant = page.locator("ul.variants > li", { hasText: digest });
  await variant.getByLabel("Why retire").fill(`may have leaked (${project})`);
  await variant.getByRole("button", { name: "Retire" }).click();
  await expect(page).toHaveURL(/\/desk\?done=variant-retired#variants$/);
  await expect(page.locator("ul.variants > li", { hasText: digest })).toContainText("retired");

  // A form from this browser's session, but without its token, or from another site: refused.
  const form = { task: "wordfreq", digest: "c3".repeat(32), note: "no token" };
  const tokenless = await page.request.post("/desk/variants", { form, headers: { "sec-fetch-site": "same-origin" } });
  expect(tokenless.status()).toBe(403);
  expect(await tokenless.text()).toContain("bad_form_token");
  const token = await page.locator("input[name=token]").first().getAttribute("value");
  const crossSite = await page.request.post("/desk/variants", { form: { ...form, token: token! }, headers: { "sec-fetch-site": "cross-site" } });
  expect(crossSite.status()).toBe(403);
  expect(await crossSite.text()).toContain("cross_site");
});
