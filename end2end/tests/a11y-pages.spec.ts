import { expect, test } from "@playwright/test";
import { closeOpened, domOf, hydrated, serverDom, violations } from "./axe";
import { uncovered } from "./routes";

// Every kind of page, as its address alone reaches it, checked by axe-core against WCAG
// 2.2 AA and axe's best practices: as the server sent it (what a reader without
// JavaScript has) and with its islands hydrated.
//
// These run in the js project alone (playwright.config.ts): each test opens the page both
// ways itself, and checks both DOMs. Where hydration leaves the document exactly as the
// server sent it (`domOf`: every element, attribute, text and form control's state; the
// same stylesheet and window), the two are one input to axe-core, checked once; where it
// does not (the live board's and the submit form's islands mark themselves ready), each
// is checked. The nojs project's run of them would check the server's DOM a second time:
// axe-core runs in the page, so even there it needs JavaScript on and the islands refused,
// which is what `serverDom` opens here. The pages reached by a reader's steps (a sign-in,
// a submission) are checked in each project (a11y.spec.ts).
const PAGES: { name: string; path: string }[] = [
  { name: "leaderboard", path: "/" },
  { name: "leaderboard, filtered and sorted", path: "/?sort=cost-none&tier=maintainer" },
  { name: "leaderboard, strict", path: "/?integrity=strict&sort=agent" },
  { name: "tasks", path: "/tasks" },
  { name: "task with its run grids", path: "/tasks/cogs" },
  { name: "example task", path: "/tasks/wordfreq" },
  { name: "agent", path: "/agents/openhands-claude-4.5-opus" },
  { name: "agent with a task's runs", path: "/agents/example-agent?task=wordfreq&hint=hints" },
  { name: "agent with a flagged success", path: "/agents/shortcut-agent" },
  { name: "failures", path: "/failures" },
  { name: "compare", path: "/compare?a=openhands-claude-4.5-opus&b=aider-claude-4.5-opus" },
  { name: "parity", path: "/parity?a=openhands-1.4.0-claude-sonnet-4.5-rexbench&b=openhands-1.4.0-claude-sonnet-4.5-harbor" },
  { name: "parity, nothing chosen", path: "/parity" },
  { name: "leaderboard, public tasks", path: "/?tasks=public" },
  { name: "leaderboard, every column", path: "/?col=final&col=delta&col=every&col=exec&col=recall&col=cost" },
  { name: "leaderboard, two conditions", path: "/?col=final&col=recall&cond=none&cond=detailed" },
  { name: "changes", path: "/changes" },
  { name: "submit", path: "/submit" },
  { name: "about", path: "/about" },
  { name: "keys", path: "/keys" },
  { name: "key request", path: "/keys/request?id=1" },
  { name: "key request, none chosen", path: "/keys/request" },
  { name: "sign-in", path: "/signin" },
  { name: "sign-in, a used link", path: "/signin?problem=used" },
  { name: "not found", path: "/no/such/page" },
];

// axe-core's work grows with the page: on the agent page (180 runs, 1,250 cells, 2,600
// elements) its colour-contrast rule alone took 5 s here, the whole check 8–12 s on a quiet
// machine and over 30 s beside the Rust tests (issue 53's CI). What these tests judge is
// the violations, not the machine's speed, so they get room: four times the suite's 30 s
// for each of the (at most) two checks.
test.describe.configure({ timeout: 240_000 });
test.afterEach(closeOpened);

// The router's pages whose address no link gives before a reader's steps (a run's id, a
// one-time link's ticket): each is checked where those steps reach it.
const REACHED_ELSEWHERE: Record<string, string> = {
  "/runs/{id}": "a11y.spec.ts: a run page with its patch and logs, a private run's page, a flagged run's page",
  "/login/{ticket}": "a11y.spec.ts: signed in, a private run's page shows its outputs",
  "/desk": "desk.spec.ts: axe-core on the desk as a signed-in maintainer",
};

test("every page the router routes is checked here or where a reader's steps reach it", () => {
  expect(uncovered(PAGES.map((p) => p.path), REACHED_ELSEWHERE)).toEqual([]);
});

for (const p of PAGES) {
  test(`axe-core finds no violation on the ${p.name} page`, async ({ page, browser }) => {
    const server = await serverDom(page, browser, p.path);
    const live = await hydrated(page, p.path);
    const same = (await domOf(live)) === (await domOf(server));
    const said = same ? "hydration changed nothing: one check" : "hydration changed it: both checked";
    test.info().annotations.push({ type: "DOM", description: said });
    expect(await violations(live), "hydrated").toEqual([]);
    if (!same) expect(await violations(server), "as the server sent it").toEqual([]);
  });
}
