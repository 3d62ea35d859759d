import { expect, test, type Page } from "@playwright/test";
import * as path from "node:path";

// What a reader sees before scrolling, with JavaScript on and off: the ranking on the
// home page, and each page's main table or figure on the others. The pictures the README
// links to are taken here, so they stay what the pages look like.

const SIZES = [
  { name: "1280", width: 1280, height: 800, rows: 8 },
  { name: "390", width: 390, height: 844, rows: 5 },
];

// Each page's main table or figure is marked `.primary`.
const PAGES = [
  { name: "task", path: "/tasks/othello", holds: "table.attempts" },
  { name: "agent", path: "/agents/openhands-claude-4.5-opus", holds: "table.overall" },
  { name: "failures", path: "/failures", holds: "svg" },
];

const SCREENS = path.join(__dirname, "..", "..", "docs", "screens");

/** The window's picture, for the README, taken once (with JavaScript, as most read it). */
async function picture(page: Page, name: string) {
  if (test.info().project.name !== "js") return;
  await page.screenshot({ path: path.join(SCREENS, `${name}.png`) });
}

/** The ranked rows whose box lies inside the window from top to bottom, and whose rank,
 * agent and final success without hints (its rate and its interval) lie wholly inside it. */
async function rankedRowsInView(page: Page, width: number, height: number): Promise<number> {
  return page.evaluate(
    ([w, h]) => {
      const box = (el: Element | null | undefined) => el?.getBoundingClientRect();
      const inside = (el: Element | null | undefined) => {
        const r = box(el);
        return !!r && r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= w && r.bottom <= h;
      };
      let n = 0;
      for (const tr of document.querySelectorAll("table.board:not(.partial) tbody tr")) {
        const row = tr.getBoundingClientRect();
        const cells = tr.querySelectorAll("td");
        // Cells: the rank, then final success with no hints (the default columns' first).
        const [rank, final] = [cells[0], cells[1]];
        const parts = [rank, tr.querySelector("th.agent > a"), final?.querySelector("a.rate"), final?.querySelector(".ci")];
        if (row.top >= 0 && row.bottom <= h && parts.every(inside)) n++;
      }
      return n;
    },
    [width, height],
  );
}

for (const size of SIZES) {
  test(`at ${size.width}×${size.height} the home page shows ${size.rows} ranked rows before any scrolling`, async ({ page }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.goto("/");
    if (test.info().project.name === "js") await expect(page.locator(".live-board[data-ready]")).toBeAttached();
    await expect(page.locator("table.board tbody tr").first()).toBeVisible();
    const rows = await rankedRowsInView(page, size.width, size.height);
    expect(rows, "ranked rows wholly in the first screen").toBeGreaterThanOrEqual(size.rows);
    await picture(page, `leaderboard-${size.name}`);

    // Each row's badges on one line: every badge and the compare box share a top.
    const lines = await page.locator("table.board tbody tr th.agent .badges").evaluateAll((all) =>
      all.map((b) => new Set([...b.children].map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2))).size),
    );
    expect(lines.length).toBeGreaterThan(0);
    for (const n of lines) expect(n, "a row's badges take one line").toBe(1);
    // The compare box is reached from the keyboard.
    const pick = page.locator("table.board tbody tr input.pick").first();
    await pick.focus();
    await expect(pick).toBeFocused();

    // The filters fold; open, no label sits on another line than its control.
    const filters = page.locator("details.filter-box");
    await expect(filters.locator("form.filters")).toBeHidden();
    await filters.locator("xpath=./summary").click();
    await expect(page.getByLabel("Framework", { exact: true })).toBeVisible();
    const apart = await page.locator("form.filters label[for]").evaluateAll((labels) =>
      labels.flatMap((label) => {
        const control = document.getElementById(label.getAttribute("for") ?? "");
        if (!control || control.getBoundingClientRect().height === 0) return [];
        const l = label.getBoundingClientRect();
        const c = control.getBoundingClientRect();
        const middle = l.top + l.height / 2;
        // On one line: the label's middle within its control's height, and beside it.
        const together = middle >= c.top && middle <= c.bottom && (l.right <= c.left + 1 || c.right <= l.left + 1);
        return together ? [] : [`${label.textContent} (${Math.round(l.top)}) and its control (${Math.round(c.top)})`];
      }),
    );
    expect(apart, "labels apart from their controls").toEqual([]);
    expect(await page.locator("form.filters label[for]").count()).toBeGreaterThanOrEqual(8);

    // The notes fold beside the count, and the table says where they are.
    const notes = page.locator("details.how-to-read");
    await expect(notes.locator("#board-notes")).toBeHidden();
    await notes.locator("xpath=./summary").click();
    await expect(page.locator("#board-notes")).toContainText("Δ is the change in final success");
    await expect(page.locator("#board-notes")).toBeVisible();
  });

  for (const p of PAGES) {
    test(`at ${size.width}×${size.height} the ${p.name} page's main ${p.holds} starts in the first screen`, async ({ page }) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.goto(p.path);
      const main = page.locator(".primary");
      await expect(main).toHaveCount(1);
      await expect(main.locator(p.holds).first()).toBeVisible();
      const top = (await main.boundingBox())!.y;
      expect(top, `the ${p.name} page's main element starts at ${top} px`).toBeLessThan(Math.min(800, size.height));
      await picture(page, `${p.name}-${size.name}`);
    });
  }
}

test("the filters in force are chips, each one removing itself and keeping the rest", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/?framework=OpenHands&tier=maintainer&q=claude");
  if (test.info().project.name === "js") await expect(page.locator(".live-board[data-ready]")).toBeAttached();
  const chips = page.locator("ul.chips a.chip");
  await expect(chips).toHaveText(["Framework: OpenHands ×", "Tier: Verified ×", "Agent: “claude” ×"]);
  await expect(page.locator("details.filter-box > summary")).toHaveText("Filters · 3 in force");
  await page.getByRole("link", { name: "Remove the filter Tier: Verified" }).click();
  await expect(page).toHaveURL(/framework=OpenHands/);
  await expect(page).toHaveURL(/q=claude/);
  await expect(page).not.toHaveURL(/tier=/);
  await expect(chips).toHaveText(["Framework: OpenHands ×", "Agent: “claude” ×"]);
  // The form says the same: the tier is any again, the framework still chosen.
  await expect(page.getByLabel("Tier", { exact: true })).toHaveValue("");
  await expect(page.getByLabel("Framework", { exact: true })).toHaveValue("OpenHands");
  for (const name of await page.locator("table.board tbody tr th.agent > a").allInnerTexts()) {
    expect(name.toLowerCase()).toContain("claude");
  }
  await page.getByRole("link", { name: "Remove the filter Framework: OpenHands" }).click();
  await page.getByRole("link", { name: "Remove the filter Agent: “claude”" }).click();
  await expect(chips).toHaveCount(0);
  await expect(page.locator("ul.chips")).toBeHidden();
  await expect(page.locator("details.filter-box > summary")).toHaveText("Filters");
});
