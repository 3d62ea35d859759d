import AxeBuilder from "@axe-core/playwright";
import { test, type Browser, type BrowserContext, type Page } from "@playwright/test";

// axe-core (Deque's engine, not ours), against WCAG 2.2 AA and axe's best practices: the
// helpers the accessibility tests share (a11y.spec.ts, a11y-pages.spec.ts).

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa", "best-practice"];

/** The contexts `serverDom` made in this test; `closeOpened` closes them after it. */
const opened: BrowserContext[] = [];

/** Closes what `serverDom` opened: the browser keeps a context (and its page) until it is
 * closed, and the worker's browser lives as long as the whole project's run. */
export async function closeOpened() {
  await Promise.all(opened.splice(0).map((c) => c.close()));
}

/**
 * The page as the server sent it: axe-core runs in the page, so JavaScript is on for axe,
 * but every file of the islands is refused, so that nothing hydrates and the DOM is the
 * server's. Signed in or not, as `page` is.
 */
export async function serverDom(page: Page, browser: Browser, path: string): Promise<Page> {
  const context = await browser.newContext({ javaScriptEnabled: true, baseURL: test.info().project.use.baseURL });
  opened.push(context);
  await context.addCookies(await page.context().cookies());
  await context.route("**/pkg/**", (route) => route.abort());
  const server = await context.newPage();
  await server.goto(path);
  return server;
}

/** The page with its islands hydrated (JavaScript on, the islands' files loaded). */
export async function hydrated(page: Page, path: string): Promise<Page> {
  await page.goto(path);
  await page.waitForLoadState("networkidle");
  return page;
}

/** The page as this project's reader has it: hydrated with JavaScript, the server's DOM without. */
export async function open(page: Page, browser: Browser, path: string): Promise<Page> {
  return test.info().project.name === "js" ? hydrated(page, path) : serverDom(page, browser, path);
}

/**
 * What axe-core reads of a page that its markup does not say: the document (every element,
 * attribute and text) and each form control's live state (value, checked, selected, which a
 * script may set without changing an attribute). Two pages with the same snapshot, the same
 * stylesheet and the same window are the same input to axe-core.
 */
export async function domOf(page: Page): Promise<string> {
  return page.evaluate(() => {
    const controls = [...document.querySelectorAll("input, select, textarea, option")].map((e) => {
      const c = e as HTMLInputElement & HTMLOptionElement;
      return `${c.tagName}|${c.value}|${c.checked}|${c.selected}|${c.disabled}|${c.indeterminate}`;
    });
    return `${document.documentElement.outerHTML}\n${controls.join("\n")}`;
  });
}

/** axe-core's violations on the page, each said in a line. */
export async function violations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  return results.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help}; ${v.nodes.length} nodes, e.g. ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")}`,
  );
}
