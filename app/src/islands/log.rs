//! A run's evidence, easier to read: a log narrowed to its error lines or to lines
//! holding some words, with a jump from one error to the next; a patch whose files
//! fold away. The lines are the server's (each a `span.line`); these only hide, show
//! and scroll to them.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, ScrollIntoViewOptions, ScrollLogicalPosition};

use super::dom::all;

#[island]
pub fn LogTools(children: Children) -> impl IntoView {
    let root = NodeRef::<leptos::html::Div>::new();
    let ready = RwSignal::new(false);
    let errors_only = RwSignal::new(false);
    let words = RwSignal::new(String::new());
    let shown = RwSignal::new(None::<(usize, usize)>);
    // The error line last jumped to, by its place among the error lines.
    let at = StoredValue::new(None::<usize>);
    Effect::new(move |_| ready.set(true));

    let narrow = move || {
        let Some(root) = root.get_untracked() else { return };
        let (only, q) = (errors_only.get_untracked(), words.get_untracked().to_lowercase());
        let lines = all(&root, "pre.log span.line:not(.gap)");
        let mut kept = 0;
        for line in &lines {
            let keep = (!only || line.class_list().contains("err"))
                && (q.is_empty() || line.text_content().unwrap_or_default().to_lowercase().contains(&q));
            if keep {
                kept += 1;
                let _ = line.remove_attribute("hidden");
            } else {
                let _ = line.set_attribute("hidden", "");
            }
        }
        // The "lines not shown" notes mean nothing in a narrowed log.
        for gap in all(&root, "pre.log span.gap") {
            if only || !q.is_empty() {
                let _ = gap.set_attribute("hidden", "");
            } else {
                let _ = gap.remove_attribute("hidden");
            }
        }
        shown.set((only || !q.is_empty()).then_some((kept, lines.len())));
    };
    let jump = move |step: isize| {
        let Some(root) = root.get_untracked() else { return };
        let errors: Vec<Element> = all(&root, "pre.log span.line.err:not([hidden])");
        if errors.is_empty() {
            return;
        }
        let n = errors.len() as isize;
        let next = match at.get_value() {
            Some(i) => (i as isize + step).rem_euclid(n),
            None if step > 0 => 0,
            None => n - 1,
        } as usize;
        for e in all(&root, "pre.log span.line.current") {
            let _ = e.class_list().remove_1("current");
        }
        let line = &errors[next];
        let _ = line.class_list().add_1("current");
        let options = ScrollIntoViewOptions::new();
        options.set_block(ScrollLogicalPosition::Center);
        line.scroll_into_view_with_scroll_into_view_options(&options);
        at.set_value(Some(next));
    };
    let count = move || match shown.get() {
        Some((kept, of)) => format!("{kept} of {of} lines"),
        None => String::new(),
    };

    view! {
        <div class="log-tools" node_ref=root data-ready=move || ready.get().then_some("")>
            <div class="tools" role="group" aria-label="Find in the log" hidden=move || !ready.get()>
                <input
                    type="search"
                    placeholder="Show lines containing…"
                    aria-label="Show lines containing"
                    on:input=move |ev| {
                        let value = ev.target().and_then(|t| t.dyn_into::<HtmlInputElement>().ok()).map(|i| i.value());
                        words.set(value.unwrap_or_default());
                        narrow();
                    }
                />
                <label>
                    <input type="checkbox" on:change=move |ev| {
                        let on = ev.target().and_then(|t| t.dyn_into::<HtmlInputElement>().ok()).is_some_and(|i| i.checked());
                        errors_only.set(on);
                        narrow();
                    }/>
                    " Error lines only"
                </label>
                <button type="button" on:click=move |_| jump(-1)>"↑ Previous error"</button>
                <button type="button" on:click=move |_| jump(1)>"↓ Next error"</button>
                <span class="muted small" aria-live="polite">{count}</span>
            </div>
            {children()}
        </div>
    }
}

#[island]
pub fn PatchTools(children: Children) -> impl IntoView {
    let root = NodeRef::<leptos::html::Div>::new();
    let ready = RwSignal::new(false);
    Effect::new(move |_| {
        ready.set(true);
        if let Some(root) = root.get_untracked() {
            for head in all(&root, "pre.diff span.file-head") {
                let _ = head.set_attribute("role", "button");
                let _ = head.set_attribute("tabindex", "0");
                let _ = head.set_attribute("aria-expanded", "true");
                let _ = head.set_attribute("title", "Fold or unfold this file");
            }
        }
    });
    let fold_all = move |fold: bool| {
        let Some(root) = root.get_untracked() else { return };
        for head in all(&root, "pre.diff span.file-head") {
            fold_file(&head, fold);
        }
    };
    let toggle = move |ev: web_sys::Event| {
        let key = ev.dyn_ref::<web_sys::KeyboardEvent>().map(|k| k.key());
        if key.as_deref().is_some_and(|k| k != "Enter" && k != " ") {
            return;
        }
        if let Some(head) = super::dom::closest(&ev, "span.file-head") {
            ev.prevent_default();
            let folded = head.get_attribute("aria-expanded").as_deref() == Some("false");
            fold_file(&head, !folded);
        }
    };
    view! {
        <div class="patch-tools" node_ref=root data-ready=move || ready.get().then_some("") on:click=move |ev: web_sys::MouseEvent| toggle(ev.into()) on:keydown=move |ev: web_sys::KeyboardEvent| toggle(ev.into())>
            <div class="tools" role="group" aria-label="Fold the patch's files" hidden=move || !ready.get()>
                <button type="button" on:click=move |_| fold_all(true)>"Fold every file"</button>
                <button type="button" on:click=move |_| fold_all(false)>"Unfold every file"</button>
            </div>
            {children()}
        </div>
    }
}

/// Hides (or shows) the lines of the file whose header `head` is, up to the next file.
fn fold_file(head: &Element, fold: bool) {
    let _ = head.set_attribute("aria-expanded", if fold { "false" } else { "true" });
    let mut next = head.next_element_sibling();
    while let Some(line) = next {
        if line.class_list().contains("file-head") {
            break;
        }
        if fold {
            let _ = line.set_attribute("hidden", "");
        } else {
            let _ = line.remove_attribute("hidden");
        }
        next = line.next_element_sibling();
    }
}
