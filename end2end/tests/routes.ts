import * as fs from "node:fs";
import * as path from "node:path";

// The site's pages as the router routes them (`rexbench-server pages`, which serve.sh
// writes before it starts the server): the list of pages is the router's, and a spec
// that means to cover every page checks its cases against it, so a new page without a
// case fails the spec instead of going unseen.

/** The router's pages, one path each (`{id}` where a page takes a value). */
export function routerPages(): string[] {
  const file = path.join(__dirname, "..", ".work", "pages.txt");
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

/** Whether `route` (`/tasks/{id}`) answers `address` (`/tasks/cogs?x=1`). */
export function answers(route: string, address: string): boolean {
  const pathOnly = address.split(/[?#]/)[0];
  const pattern = route
    .split(/(\{\w+\}|:\w+)/)
    .map((part) => (/^(\{\w+\}|:\w+)$/.test(part) ? "[^/]+" : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${pattern}$`).test(pathOnly);
}

/** The router's pages that none of `addresses` opens, nor `elsewhere` (route → the test
 * that reaches it) names. */
export function uncovered(addresses: string[], elsewhere: Record<string, string>): string[] {
  return routerPages().filter((route) => !(route in elsewhere) && !addresses.some((a) => answers(route, a)));
}
