//! The leaderboard, live: its filters and column headers act at once instead of
//! loading a new page, the address follows (so the view stays a link that the server
//! renders the same), and agents picked with checkboxes open `/compare`.
//!
//! When the page holds every agent of its task set (no filter applied, one page), the
//! rows are filtered and ordered right here, by the same code the server orders with
//! ([`BoardQuery`]), from the rows the JSON API gives. Otherwise the server renders the
//! view and its table replaces this one, still without a new page.

use leptos::prelude::*;
use store::{Integrity, LeaderboardRow};
use wasm_bindgen::JsCast;
use web_sys::{Element, Event, HtmlInputElement, HtmlSelectElement};

use super::dom::{all, closest, document, get, window};
use views::board::{BoardQuery, Columns, Sort};

#[island]
pub fn LiveBoard(
    /// The task set shown.
    set: Option<String>,
    /// Whether the page holds every agent of the set, so it can be narrowed here.
    complete: bool,
    /// How the rendered page counts flagged successes.
    integrity: Integrity,
    /// The columns the rendered page shows.
    columns: Columns,
    children: Children,
) -> impl IntoView {
    let root = NodeRef::<leptos::html::Div>::new();
    // The whole set's rows from the API, counted as the table shows them, once fetched
    // (only when the page holds them all).
    let rows = StoredValue::new(None::<(Integrity, Vec<LeaderboardRow>)>);
    let set = StoredValue::new(set);
    let complete = StoredValue::new(complete);
    // Other columns are other cells: those come from the server.
    let shown = StoredValue::new(columns);
    let picked = RwSignal::new(Vec::<String>::new());
    let ready = RwSignal::new(false);
    let status = RwSignal::new(String::new());
    // Answers of the server may arrive out of order: only the newest is shown.
    let asked = StoredValue::new(0u32);

    Effect::new(move |_| {
        ready.set(true);
        if complete.get_value() {
            leptos::task::spawn_local(async move {
                if let Ok(all) = fetch_rows(set.get_value().as_deref(), integrity).await {
                    rows.set_value(Some((integrity, all)));
                }
            });
        }
        if let Some(root) = root.get_untracked() {
            keep_rows(&root);
            // Boxes the browser kept ticked (back to the page) count as picked.
            let ticked: Vec<String> = all(&root, "input.pick:checked")
                .into_iter()
                .filter_map(|i| i.dyn_into::<HtmlInputElement>().ok().map(|i| i.value()))
                .collect();
            update_picks(&root, &ticked);
            picked.set(ticked);
        }
    });

    let apply = move |view: BoardQuery| {
        let Some(root) = root.get_untracked() else { return };
        let url = view.here();
        let _ = window()
            .history()
            .and_then(|h| h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url)));
        // Rows counted another way show other numbers: those come from the server.
        let local = complete
            .get_value()
            .then(|| rows.get_value())
            .flatten()
            .filter(|(counted, _)| *counted == view.integrity && !view.sort.from_statistics())
            .filter(|_| shown.with_value(|c| *c == view.columns))
            .map(|(_, all)| all);
        match local {
            Some(all) => {
                let shown = ROWS.with_borrow(|trs| arrange(&root, &view, &all, trs));
                status.set(format!("{shown} agents shown, sorted by {}", view.sort.label().to_lowercase()));
                refresh_around(url);
            }
            None => {
                let n = asked.get_value() + 1;
                asked.set_value(n);
                leptos::task::spawn_local(async move {
                    let Ok(page) = get(&url, None).await else { return };
                    if asked.get_value() != n || page.status != 200 {
                        return;
                    }
                    if let Some(now) = replace_body(&root, &page.body) {
                        complete.set_value(now);
                        shown.set_value(view.columns.clone());
                        rows.set_value(None);
                        if now {
                            let integrity = view.integrity;
                            if let Ok(all) = fetch_rows(set.get_value().as_deref(), integrity).await {
                                rows.set_value(Some((integrity, all)));
                            }
                        }
                        keep_rows(&root);
                        picked.set(vec![]);
                        update_picks(&root, &[]);
                        status.set("The table now shows the view asked for.".into());
                    }
                });
            }
        }
    };

    let on_change = move |ev: Event| {
        if let Some(input) = closest(&ev, "input.pick").and_then(|e| e.dyn_into::<HtmlInputElement>().ok()) {
            let id = input.value();
            picked.update(|p| {
                p.retain(|x| *x != id);
                if input.checked() {
                    p.push(id);
                }
            });
            if let Some(root) = root.get_untracked() {
                picked.with_untracked(|p| update_picks(&root, p));
            }
            return;
        }
        if closest(&ev, "form.filters").is_some() {
            if let Some(root) = root.get_untracked() {
                apply(read_form(&root));
            }
        }
    };
    let on_input = move |ev: Event| {
        if closest(&ev, "form.filters input[name=q]").is_some() {
            if let Some(root) = root.get_untracked() {
                apply(read_form(&root));
            }
        }
    };
    let on_submit = move |ev: Event| {
        // Two agents ticked: `/compare` for them, under its own names for them.
        if closest(&ev, "form#pick").is_some() {
            ev.prevent_default();
            if let [a, b] = picked.get_untracked().as_slice() {
                // `crate::format` (lib.rs's `views::format`), not `views::format`: the island's
                // name, in every leaderboard page, is a digest of its tokens.
                let to = crate::format::href("/compare", &[("a", Some(a)), ("b", Some(b))]);
                let _ = window().location().assign(&to);
            }
            return;
        }
        if closest(&ev, "form.filters").is_some() {
            ev.prevent_default();
            if let Some(root) = root.get_untracked() {
                apply(read_form(&root));
            }
        }
    };
    let on_click = move |ev: Event| {
        let Some(root) = root.get_untracked() else { return };
        if let Some(link) = closest(&ev, "table.board thead a") {
            ev.prevent_default();
            let mut view = read_form(&root);
            if let Some(sort) = link_sort(&link) {
                view.ascending = if sort == view.sort { !view.ascending } else { sort.natural_ascending() };
                view.sort = sort;
            }
            apply(view);
        } else if let Some(chip) = closest(&ev, "a.chip") {
            // The chip's field back to "any" (the first choice; the flagged successes'
            // first is "as reported"), then the view without it.
            ev.prevent_default();
            let name = chip.get_attribute("data-filter").unwrap_or_default();
            for field in all(&root, &format!("form.filters [name={name}]")) {
                match field.dyn_into::<HtmlSelectElement>() {
                    Ok(select) => select.set_selected_index(0),
                    Err(field) => {
                        if let Ok(input) = field.dyn_into::<HtmlInputElement>() {
                            input.set_value("");
                        }
                    }
                }
            }
            apply(read_form(&root));
        } else if closest(&ev, "form.filters a.clear").is_some() {
            ev.prevent_default();
            for select in all(&root, "form.filters select") {
                if let Ok(select) = select.dyn_into::<HtmlSelectElement>() {
                    select.set_value("");
                }
            }
            if let Some(q) = search_box(&root) {
                q.set_value("");
            }
            apply(read_form(&root));
        }
    };

    view! {
        <div
            class="live-board"
            data-ready=move || ready.get().then_some("")
            node_ref=root
            on:change=on_change
            on:input=on_input
            on:submit=move |ev: web_sys::SubmitEvent| on_submit(ev.into())
            on:click=move |ev: web_sys::MouseEvent| on_click(ev.into())
        >
            {children()}
            <p class="visually-hidden" aria-live="polite">{move || status.get()}</p>
        </div>
    }
}

thread_local! {
    /// The table's rows as the server rendered them, every agent of the set: a view
    /// shows some of them, in its order, and the rest wait outside the document. (Held
    /// here, in the browser's one thread: DOM nodes may not go where the server could
    /// drop them.)
    static ROWS: std::cell::RefCell<Vec<Element>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn keep_rows(root: &Element) {
    ROWS.set(all(root, "table.board tbody > tr"));
}

/// Every current row of the set, counted as `integrity` says, from the JSON API.
async fn fetch_rows(set: Option<&str>, integrity: Integrity) -> Result<Vec<LeaderboardRow>, String> {
    #[derive(serde::Deserialize)]
    struct Answer {
        rows: Vec<LeaderboardRow>,
    }
    let strict = (integrity == Integrity::Strict).then_some(integrity.as_str());
    let url = views::format::href("/api/v1/leaderboard", &[("integrity", strict)]);
    let answer = get(&url, None).await?;
    let answer: Answer = serde_json::from_str(&answer.body).map_err(|e| e.to_string())?;
    Ok(answer.rows.into_iter().filter(|r| set.is_none_or(|s| r.task_set_digest == s)).collect())
}

/// The view the filter form and the table's order ask for.
fn read_form(root: &Element) -> BoardQuery {
    let value = |name: &str| {
        root.query_selector(&format!("form.filters [name={name}]")).ok().flatten().and_then(|e| {
            e.clone()
                .dyn_into::<HtmlSelectElement>()
                .map(|s| s.value())
                .or_else(|_| e.dyn_into::<HtmlInputElement>().map(|i| i.value()))
                .ok()
        })
    };
    // The boxes ticked, as a GET form would send them.
    let ticked = |name: &str| {
        all(root, &format!("form.filters input[name={name}]:checked"))
            .into_iter()
            .filter_map(|e| e.dyn_into::<HtmlInputElement>().ok().map(|i| i.value()))
            .collect::<Vec<_>>()
    };
    BoardQuery::from_query(value, ticked)
}

fn search_box(root: &Element) -> Option<HtmlInputElement> {
    root.query_selector("form.filters input[name=q]").ok().flatten()?.dyn_into().ok()
}

/// The order a column header's link asks for.
fn link_sort(link: &Element) -> Option<Sort> {
    let href = link.get_attribute("href")?;
    let url = web_sys::Url::new_with_base(&href, "http://x/").ok()?;
    Sort::from_key(&url.search_params().get("sort")?)
}

/// Filters and orders the table's rows here; returns how many are shown.
fn arrange(root: &Element, view: &BoardQuery, rows: &[LeaderboardRow], trs: &[Element]) -> usize {
    let Some(body) = root.query_selector("table.board tbody").ok().flatten() else { return 0 };
    let mut keys: Vec<_> = rows.iter().filter(|r| view.keeps(r)).map(|r| view.key(r)).collect();
    // Only a page whose rows are all ranked is arranged here.
    view.order(&mut keys, 0);
    let by_bundle = |bundle: &str| rows.iter().find(|r| r.bundle_id == bundle);
    let row_of = |agent: &str| {
        let href = format!("/agents/{}", views::format::segment(agent));
        trs.iter().find(|tr| {
            tr.query_selector("th.agent > a").ok().flatten().and_then(|a| a.get_attribute("href")).as_deref()
                == Some(href.as_str())
        })
    };
    for tr in trs {
        tr.remove();
    }
    for key in &keys {
        if let Some(tr) = by_bundle(&key.bundle_id).and_then(|r| row_of(&r.agent_id)) {
            let _ = body.append_child(tr);
        }
    }
    // The headers, hidden fields and words that say the order.
    for link in all(root, "table.board thead a") {
        let Some(sort) = link_sort(&link) else { continue };
        let (aria, arrow) = view.marks(sort);
        if let Some(th) = link.parent_element() {
            let _ = th.set_attribute("aria-sort", aria);
        }
        let label = link.text_content().unwrap_or_default();
        let label = label.trim_end_matches([' ', '▲', '▼']);
        link.set_text_content(Some(&format!("{label}{arrow}")));
        let _ = link.set_attribute("href", &view.sorted_by(sort));
    }
    for (name, value) in
        [("sort", view.sort.key()), ("dir", if view.ascending { "asc" } else { "desc" }.into())]
    {
        if let Some(input) = root
            .query_selector(&format!("form.filters input[name={name}]"))
            .ok()
            .flatten()
            .and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
        {
            input.set_value(&value);
        }
    }
    if let Some(by) = root.query_selector("table.board caption .sorted-by").ok().flatten() {
        by.set_text_content(Some(&view.order_words()));
    }
    if let Some(count) = root.query_selector("p.count").ok().flatten() {
        count.set_text_content(Some(&format!("{} of {} agents", keys.len(), rows.len())));
    }
    if let Some(empty) = root.query_selector("p.no-match").ok().flatten() {
        if keys.is_empty() {
            let _ = empty.remove_attribute("hidden");
        } else {
            let _ = empty.set_attribute("hidden", "");
        }
    }
    keys.len()
}

/// The charts and the chips of the filters in force follow the table's rows: they are
/// made on the server, so fetch the view and take them from it.
fn refresh_around(url: String) {
    leptos::task::spawn_local(async move {
        let Ok(page) = get(&url, None).await else { return };
        let Some(fresh) = parse(&page.body) else { return };
        let here = document().document_element().expect("a root element");
        for selector in [
            "div.board-body figure.chart",
            "div.board-body ul.chips",
            "div.board-body details.filter-box > summary",
        ] {
            for (o, n) in all(&here, selector).iter().zip(all(&fresh, selector).iter()) {
                if let Some(parent) = o.parent_node() {
                    let _ = parent.replace_child(n, o);
                }
            }
        }
    });
}

/// Puts the rendered page's table and controls in place of these; returns whether the
/// new view holds the whole set.
fn replace_body(root: &Element, html: &str) -> Option<bool> {
    let fresh = parse(html)?.query_selector("div.board-body").ok().flatten()?;
    let old = root.query_selector("div.board-body").ok().flatten()?;
    // The reader is still where they were: the sets, the filters, the column choice and
    // the notes open as they were, the same control focused.
    const FOLDS: [&str; 4] =
        ["details.set-box", "details.filter-box", "details.columns", "details.how-to-read"];
    let open: Vec<bool> =
        FOLDS.iter().map(|f| old.query_selector(&format!("{f}[open]")).ok().flatten().is_some()).collect();
    let focused = document().active_element().map(|e| e.id()).filter(|id| !id.is_empty());
    old.parent_node()?.replace_child(&fresh, &old).ok()?;
    for (fold, open) in FOLDS.iter().zip(open) {
        if open && let Some(details) = fresh.query_selector(fold).ok().flatten() {
            let _ = details.set_attribute("open", "");
        }
    }
    if let Some(id) = focused
        && let Some(again) = document().get_element_by_id(&id)
        && let Ok(again) = again.dyn_into::<web_sys::HtmlElement>()
    {
        let _ = again.focus();
    }
    Some(fresh.get_attribute("data-complete").as_deref() == Some("true"))
}

fn parse(html: &str) -> Option<Element> {
    let doc =
        web_sys::DomParser::new().ok()?.parse_from_string(html, web_sys::SupportedType::TextHtml).ok()?;
    doc.document_element()
}

/// With two agents ticked the others cannot be, and the button compares exactly two.
fn update_picks(root: &Element, picked: &[String]) {
    for input in all(root, "input.pick") {
        if let Ok(input) = input.dyn_into::<HtmlInputElement>() {
            input.set_disabled(picked.len() >= 2 && !input.checked());
        }
    }
    if let Some(button) = root
        .query_selector("button[form=pick]")
        .ok()
        .flatten()
        .and_then(|b| b.dyn_into::<web_sys::HtmlButtonElement>().ok())
    {
        button.set_disabled(picked.len() != 2);
    }
}
